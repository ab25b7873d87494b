import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { installHooks } from '../../src/git/guard';
import { commitsOfMove, parseJournalLine, readJournal, reflogMessages, JOURNAL_FILE } from '../../src/git/journal';
import { writeProjection } from '../../src/git/projection';
import { identifyWorktree, type WorktreeIdentity } from '../../src/git/repo';
import { judgeClaim, type TenureSegment } from '../../src/domain/attribution';
import { tenureSecretHash } from '../../src/keys/tenure';
import { claimOf } from '../../src/provenance/attributions';
import { g, preparedRepo, projection, run, type Fixture } from './git-fixture';

/** docs/git-projection.md#the-journal: what the hooks append, and which commits a move made. */

let fx: Fixture;
let id: WorktreeIdentity;

beforeEach(async () => {
  // Prepared once, copied for each test.
  fx = await preparedRepo('owned by A, hooks installed', async (base) => {
    await writeProjection(base.wt1, projection('A', 3, { epoch: 3 }));
    await installHooks(base.repo);
  });
  id = await identifyWorktree(fx.wt1);
});
afterEach(() => fx.cleanup());

/** A's tenure (the projection of these tests) as the ownership log would record it. */
const tenureOfA = (state: string, from: number, to: number | null): TenureSegment => ({
  ownershipId: 'own_A',
  epoch: 3,
  state,
  executionSessionId: 'session_A',
  workerId: 'worker-A',
  conversationId: 'conv-A',
  from,
  to,
});

/** A caller with no session id proves the tenure with its secret alone (a person under `od-worktree override`). */
const SECRET = 'odt1_journal-test-secret';
const as = (session: string | null): Record<string, string> =>
  session === null ? { OVERDECK_TENURE_SECRET: SECRET } : { OVERDECK_EXECUTION_SESSION_ID: session };
const head = (wt: string): string => g(wt, 'rev-parse', 'HEAD');

function commit(wt: string, session: string | null, ...extra: string[]): number {
  writeFileSync(path.join(wt, 'a.txt'), `${Math.random()}\n`);
  return run('git', ['commit', '-q', '-am', 'change', ...extra], wt, as(session)).status;
}

async function lines() {
  return (await readJournal(id, 0)).lines;
}

async function made(): Promise<string[][]> {
  const ls = (await lines()).filter((l) => l.kind === 'commit');
  const reflog = await reflogMessages(
    id,
    ls.map((l) => l.ref),
  );
  return Promise.all(ls.map((l) => commitsOfMove(id, l, reflog)));
}

test('a commit by the owner: one line with the session, the projection and the move; it made exactly its new head', async () => {
  const before = head(fx.wt1);
  expect(commit(fx.wt1, 'session_A')).toBe(0);
  const [line] = await lines();
  expect(line).toMatchObject({
    kind: 'commit',
    ref: 'refs/heads/wt1',
    old: before,
    new: head(fx.wt1),
    session: 'session_A',
    ownership: 'own_A',
    epoch: '3',
    owner: 'session_A',
    state: 'active',
    worker: 'worker-A',
    conversation: 'conv-A',
  });
  expect(await made()).toEqual([[head(fx.wt1)]]);
  expect(claimOf(line!)).toEqual({
    ownershipId: 'own_A',
    epoch: 3,
    executionSessionId: 'session_A',
    committerSessionId: 'session_A',
    workerId: 'worker-A',
    conversationId: 'conv-A',
    state: 'active',
  });
  expect(judgeClaim(claimOf(line!), [tenureOfA('active', 0, null)], { from: 0, to: 10 })).toMatchObject({
    verdict: 'attributed',
    via: 'session',
    recorded: { executionSessionId: 'session_A', epoch: 3, ownershipId: 'own_A' },
  });
});

test('moves onto existing history make nothing: reset, a fast-forward onto a commit someone else made', async () => {
  expect(commit(fx.wt1, 'session_A')).toBe(0);
  expect(run('git', ['reset', '-q', '--hard', 'HEAD~1'], fx.wt1, as('session_A')).status).toBe(0);
  // A commit made elsewhere (wt2 has no projection, so no journal), then fast-forwarded into wt1.
  expect(commit(fx.wt2, null)).toBe(0);
  expect(run('git', ['merge', '-q', '--ff-only', 'wt2'], fx.wt1, as('session_A')).status).toBe(0);
  expect(head(fx.wt1)).toBe(head(fx.wt2));
  const [own, reset, ff] = await made();
  expect(own).toHaveLength(1);
  expect(reset).toEqual([]);
  expect(ff).toEqual([]);
});

test('a reflog line that says "commit" for a move onto a commit made elsewhere is not believed: the graph decides', async () => {
  expect(commit(fx.wt1, 'session_A')).toBe(0);
  const mine = head(fx.wt1);
  // Two commits elsewhere (wt2 has no projection, so no journal); wt1 then jumps onto the second.
  expect(commit(fx.wt2, null)).toBe(0);
  expect(commit(fx.wt2, null)).toBe(0);
  const theirs = head(fx.wt2);
  expect(run('git', ['reset', '-q', '--hard', theirs], fx.wt1, as('session_A')).status).toBe(0);
  // The reflog is a plain file: whoever works in wt1 can append "commit: ..." for that move.
  const branchLog = path.join(id.commonDir, 'logs', 'refs', 'heads', 'wt1');
  appendFileSync(branchLog, `${mine} ${theirs} t <t@example.invalid> 1700000000 +0000\tcommit: mine, honestly\n`);
  const [own, jump] = await made();
  expect(own).toEqual([mine]);
  // Its parent is not wt1's old head (nor that head's parent): no commit was written on wt1.
  expect(jump).toEqual([]);
});

test('amend and a real merge each make their new head', async () => {
  expect(commit(fx.wt1, 'session_A')).toBe(0);
  expect(commit(fx.wt1, 'session_A', '--amend')).toBe(0);
  const amended = head(fx.wt1);
  writeFileSync(path.join(fx.wt2, 'b.txt'), 'b\n');
  g(fx.wt2, 'add', 'b.txt');
  g(fx.wt2, 'commit', '-q', '-m', 'b');
  expect(run('git', ['merge', '-q', '--no-ff', '-m', 'merge wt2', 'wt2'], fx.wt1, as('session_A')).status).toBe(0);
  const merge = head(fx.wt1);
  expect((await made()).slice(1)).toEqual([[amended], [merge]]);
});

test('without a session id: the owner at the time only when nobody else could be committing', async () => {
  await writeProjection(fx.wt1, projection('A', 3, { epoch: 3, tenureHash: tenureSecretHash(SECRET) }));
  expect(commit(fx.wt1, null)).toBe(0);
  await writeProjection(fx.wt1, projection('A', 4, { epoch: 3, state: 'handoff_pending', tenureHash: tenureSecretHash(SECRET) }));
  expect(commit(fx.wt1, null)).toBe(0);
  const [active, pending] = await lines();
  // The record: A active, then a handoff pending; both lines can have been written in either.
  const record = [tenureOfA('active', 0, 5), tenureOfA('handoff_pending', 5, null)];
  expect(judgeClaim(claimOf(active!), record, { from: 0, to: 10 })).toMatchObject({
    verdict: 'attributed',
    via: 'owner_at_time',
    recorded: { executionSessionId: 'session_A', ownershipId: 'own_A', epoch: 3 },
  });
  expect(judgeClaim(claimOf(pending!), record, { from: 0, to: 10 })).toMatchObject({ verdict: 'unknown', via: 'unknown', reason: 'attribution_no_session' });
});

test('a refused move is journalled as ref_refused with its code, and still refused', async () => {
  const before = head(fx.wt1);
  expect(run('git', ['reset', '-q', '--hard', 'HEAD~1'], fx.wt1, as('session_B')).status).not.toBe(0);
  expect(head(fx.wt1)).toBe(before);
  const [line] = await lines();
  expect(line).toMatchObject({
    kind: 'ref_refused',
    code: 'not_owner',
    session: 'session_B',
    owner: 'session_A',
    epoch: '3',
    ref: 'refs/heads/wt1',
    old: before,
  });
});

test('values that could break a line are written !invalid; foreign keys and lines are ignored; a worktree without a projection writes nothing', async () => {
  expect(commit(fx.wt1, 'bad\tsession')).not.toBe(0); // refused (not the owner), and journalled safely
  const [line] = await lines();
  expect(line).toMatchObject({ kind: 'ref_refused', session: '!invalid' });
  const journal = path.join(id.privateDir, JOURNAL_FILE);
  appendFileSync(journal, 'garbage line\nod1\tkind=wrapper_refused\tcode=not_owner\tcommand=push\tfuture_key=x\nod1\tkind=commit\tnew=');
  const chunk = await readJournal(id, 0);
  expect(chunk.skipped).toBe(1);
  expect(chunk.lines.map((l) => l.kind)).toEqual(['ref_refused', 'wrapper_refused']); // the unterminated line waits
  expect(chunk.lines[1]).toMatchObject({ code: 'not_owner', command: 'push' });
  expect(parseJournalLine('od1\tkind=nope', 0)).toBeNull();

  expect(commit(fx.wt2, 'anyone')).toBe(0);
  expect(existsSync(path.join((await identifyWorktree(fx.wt2)).privateDir, JOURNAL_FILE))).toBe(false);
});
