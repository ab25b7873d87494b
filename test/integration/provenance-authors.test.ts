import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { OwnershipView } from '../../src/client';
import type { Principal } from '../../src/domain/identity';
import { installHooks } from '../../src/git/guard';
import { cleanGitEnv } from '../../src/git/exec';
import { recordObservation } from '../../src/store/bindings';
import { attemptsOf } from '../../src/store/attributions';
import { shipJournal } from '../../src/provenance/attributions';
import { JournalShipper } from '../../src/provenance/attributions-shipper';
import { provenance, renderProvenance } from '../../src/provenance/provenance';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { withTenureSecret } from '../support/tenure-env';
import { executorPrincipal as executor, startHarness, waitForView, type Harness } from '../support/harness';
import { tenureSecretFor } from '../support/tenure-env';

/**
 * Issue 16 (docs/operations.md#landing-and-provenance, docs/git-projection.md#the-journal): the
 * hooks journal who made each commit, the host agent ships the journal, and a landing keeps its
 * pre-land commits. A works, hands off to B, B works, B lands by squash: the squash commit lists A
 * and B in order; A's own commit names A; both answer after the worktree, the branch and the
 * objects are gone.
 */

let h: Harness;
let repo: RepoFixture;
let repoRoot: string;
const lander: Principal = { kind: 'landing', id: 'lander-authors' };
const CONV_A = 'a1b2c3d4-0000-4000-8000-0000000000aa';
const CONV_B = 'a1b2c3d4-0000-4000-8000-0000000000bb';
const IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' };

beforeAll(async () => {
  h = await startHarness();
  repo = makeRepo(2);
  repoRoot = await h.client.normalize(repo.repoRoot);
  await installHooks(repo.repoRoot);
});
afterAll(async () => h?.shutdown());

const caughtUp = (v: OwnershipView): boolean => v.projectionSync.localSeq >= v.seq && v.projectionSync.error === null;

/** git as a session would run it: only the OVERDECK_* variables given, and the session's tenure secret. */
function gitAs(cwd: string, env: Record<string, string>, ...args: string[]): { status: number; stderr: string } {
  const base = cleanGitEnv(IDENTITY);
  delete base.OVERDECK_EXECUTION_SESSION_ID;
  delete base.OVERDECK_EPOCH;
  try {
    execFileSync('git', args, { cwd, env: withTenureSecret(cwd, { ...base, ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
    return { status: 0, stderr: '' };
  } catch (err) {
    const e = err as { status?: number; stderr?: Buffer };
    return { status: e.status ?? -1, stderr: e.stderr?.toString() ?? '' };
  }
}

function commitAs(cwd: string, env: Record<string, string>, file: string, message: string): string {
  writeFileSync(path.join(cwd, file), `${message}\n`);
  expect(gitAs(cwd, env, 'add', file).status).toBe(0);
  const r = gitAs(cwd, env, 'commit', '-q', '-m', message);
  expect(r).toEqual({ status: 0, stderr: '' });
  return git(cwd, 'rev-parse', 'HEAD');
}

async function observe(workerId: string, conversationId: string, title: string): Promise<void> {
  const observed = await recordObservation(
    h.pool,
    { workerId, runId: null },
    {
      executor: 'chatgpt-web',
      executorInstanceId: `ext-${workerId}`,
      sessionGeneration: 'gen-1',
      sequence: 1,
      conversation: { conversationId, conversationUrl: `https://chatgpt.com/c/${conversationId}`, title, observedAt: new Date().toISOString() },
    },
  );
  expect('code' in observed).toBe(false);
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const attributed = async (sha: string): Promise<{ execution_session_id: string | null; via: string } | null> =>
  (
    await h.pool.query<{ execution_session_id: string | null; via: string }>(
      "SELECT execution_session_id, via FROM commit_authorship WHERE commit_sha = $1 AND status = 'attributed'",
      [sha],
    )
  ).rows[0] ?? null;

describe('squash after a handoff', () => {
  const s: Record<string, string> = {};
  let ownershipId = '';
  let ref: { repoRoot: string; worktreePath: string };

  test('A commits (with and without a session id), hands off to B, B commits; the host agent ships the journal', async () => {
    const wt = repo.worktrees[0]!;
    ref = { repoRoot, worktreePath: await h.client.normalize(wt.path) };
    await observe('worker-auth-a', CONV_A, 'Lane of A');
    await observe('worker-auth-b', CONV_B, 'Lane of B');
    const bound = await h.client.bind({
      ...ref,
      branch: wt.branch,
      executionSessionId: 'session-auth-A',
      runtime: 'chatgpt-web',
      worker: { runId: null, workerId: 'worker-auth-a' },
      principal: executor('worker-auth-a'),
    });
    ownershipId = bound.ownershipId;
    await waitForView(h.client, ref, caughtUp);

    s.a1 = commitAs(wt.path, { OVERDECK_EXECUTION_SESSION_ID: 'session-auth-A', OVERDECK_EPOCH: '1' }, 'a1.txt', 'a1');
    // A person who stepped in (od-worktree override: the tenure's secret, no session id) while A alone
    // holds the worktree: A, "owner at the time".
    s.a2 = commitAs(wt.path, { OVERDECK_TENURE_SECRET: tenureSecretFor(wt.path, 'session-auth-A')! }, 'a2.txt', 'a2');

    const started = await h.client.handoff(ref, {
      executionSessionId: 'session-auth-A',
      epoch: 1,
      principal: executor('worker-auth-a'),
      toExecutionSessionId: 'session-auth-B',
      toWorkerId: 'worker-auth-b',
    });
    await h.client.acceptHandoff(ref, {
      handoffId: started.handoff!.handoffId,
      executionSessionId: 'session-auth-B',
      runtime: 'chatgpt-web',
      parentExecutionSessionId: 'session-auth-A',
      worker: { runId: null, workerId: 'worker-auth-b' },
      principal: executor('worker-auth-b'),
    });
    await waitForView(h.client, ref, (v) => v.epoch === 2 && caughtUp(v));
    // Shipped by the host agent after the handoff's projection write, not by this test.
    expect(await until('a1 shipped', () => attributed(s.a1!))).toEqual({ execution_session_id: 'session-auth-A', via: 'session' });
    expect(await attributed(s.a2!)).toEqual({ execution_session_id: 'session-auth-A', via: 'owner_at_time' });

    // A, fenced out, tries to move the branch: refused by the hook, journalled as an attempt.
    const refused = gitAs(wt.path, { OVERDECK_EXECUTION_SESSION_ID: 'session-auth-A', OVERDECK_EPOCH: '1' }, 'reset', '-q', '--hard', 'HEAD~1');
    expect(refused.status).not.toBe(0);
    s.b1 = commitAs(wt.path, { OVERDECK_EXECUTION_SESSION_ID: 'session-auth-B', OVERDECK_EPOCH: '2' }, 'b1.txt', 'b1');

    const journal = readFileSync(path.join(git(wt.path, 'rev-parse', '--absolute-git-dir'), 'overdeck.journal'), 'utf8')
      .split('\n')
      .filter(Boolean);
    expect(journal.map((l) => l.split('\t')[1])).toEqual(['kind=commit', 'kind=commit', 'kind=ref_refused', 'kind=commit']);
  });

  test('B lands by squash: the squash commit lists A, A and B in order, the lander apart', async () => {
    git(repo.repoRoot, 'merge', '-q', '--squash', repo.worktrees[0]!.branch);
    git(repo.repoRoot, 'commit', '-q', '-m', 'squash of feature-0');
    s.squash = git(repo.repoRoot, 'rev-parse', 'HEAD');
    await h.client.landed(ref, { sourceHead: s.b1!, landedBranch: 'main', landedHead: s.squash, landedAt: new Date().toISOString(), principal: lander });
    await waitForView(h.client, ref, (v) => v.state === 'landed' && caughtUp(v));
    // The host agent records the landed commits after the landed projection write.
    await until('landing commits', async () => (await h.pool.query('SELECT 1 FROM landing_commits WHERE ownership_id = $1', [ownershipId])).rowCount === 3);

    const p = await provenance(h.pool, repoRoot, s.squash);
    expect(p).toMatchObject({ commit: s.squash, via: 'landed_head', receiptKind: 'receipt', ownershipId, executionSessionId: 'session-auth-B' });
    expect(p!.lander).toEqual({ principal: { kind: 'landing', id: 'lander-authors' }, executionSessionId: 'session-auth-B' });
    expect(p!.authors!.map((a) => [a.commit, a.executionSessionId, a.epoch, a.workerId, a.conversation?.title, a.via])).toEqual([
      [s.a1, 'session-auth-A', 1, 'worker-auth-a', 'Lane of A', 'session'],
      [s.a2, 'session-auth-A', 1, 'worker-auth-a', 'Lane of A', 'owner_at_time'],
      [s.b1, 'session-auth-B', 2, 'worker-auth-b', 'Lane of B', 'session'],
    ]);
    const text = renderProvenance(p!);
    expect(text).toMatch(/^Landed by: +landing lander-authors, for owner session session-auth-B$/m);
    expect(text).toMatch(/^Authors: +3 commits, 2 sessions, oldest first$/m);
    expect(text).toContain(`1. ${s.a1!.slice(0, 12)} session session-auth-A, epoch 1, worker worker-auth-a, conversation Lane of A`);
    expect(text).toContain(`3. ${s.b1!.slice(0, 12)} session session-auth-B, epoch 2, worker worker-auth-b, conversation Lane of B`);

    // A's own pre-land commit names A, not the lander.
    const a1 = await provenance(h.pool, repoRoot, s.a1!);
    expect(a1).toMatchObject({ commit: s.a1, landedHead: s.squash, ownershipId });
    expect(a1!.authors!.map((a) => [a.executionSessionId, a.epoch, a.workerId])).toEqual([['session-auth-A', 1, 'worker-auth-a']]);
  });

  test('the refused attempt is recorded, and shipping the journal again inserts nothing', async () => {
    const attempts = await until('attempt shipped', async () => {
      const a = await attemptsOf(h.pool, { ownershipIds: [ownershipId] });
      return a.length > 0 ? a : null;
    });
    expect(attempts).toEqual([
      expect.objectContaining({
        kind: 'ref_refused',
        code: 'not_owner',
        executionSessionId: 'session-auth-A',
        ownerSessionId: 'session-auth-B',
        epoch: 2,
        ref: `refs/heads/${repo.worktrees[0]!.branch}`,
      }),
    ]);
    const again = await shipJournal(h.pool, ref.worktreePath, { hostId: h.hostId, allowedRoots: [process.env.OD_TEST_TMP!] });
    expect(again).toMatchObject({ attributed: 0, refusals: 0 });
  });

  test('after git worktree remove, git branch -D and gc, both still answer', async () => {
    const wt = repo.worktrees[0]!;
    git(repo.repoRoot, 'worktree', 'remove', '--force', wt.path);
    git(repo.repoRoot, 'branch', '-D', wt.branch);
    git(repo.repoRoot, 'reflog', 'expire', '--expire=now', '--all');
    git(repo.repoRoot, 'gc', '-q', '--prune=now');
    expect(() => git(repo.repoRoot, 'cat-file', '-e', `${s.a1!}^{commit}`)).toThrow();

    const p = await provenance(h.pool, repoRoot, s.squash!);
    expect(p!.authors!.map((a) => a.executionSessionId)).toEqual(['session-auth-A', 'session-auth-A', 'session-auth-B']);
    const a1 = await provenance(h.pool, repoRoot, s.a1!);
    expect(a1).toMatchObject({ commit: s.a1, via: 'pre_land', landedHead: s.squash, ownershipId });
    expect(a1!.authors!.map((a) => [a.executionSessionId, a.epoch, a.conversation?.conversationId])).toEqual([['session-auth-A', 1, CONV_A]]);
    const b1 = await provenance(h.pool, repoRoot, s.b1!);
    expect(b1!.authors!.map((a) => [a.executionSessionId, a.epoch])).toEqual([['session-auth-B', 2]]);
  });
});

test('rebase landing: each rebased copy names the session that wrote its original', async () => {
  const wt = repo.worktrees[1]!;
  const ref = { repoRoot, worktreePath: await h.client.normalize(wt.path) };
  const bound = await h.client.bind({
    ...ref,
    branch: wt.branch,
    executionSessionId: 'session-auth-C',
    runtime: 'codex-cli',
    worker: { runId: null, workerId: 'worker-auth-c' },
    principal: executor('worker-auth-c'),
  });
  await waitForView(h.client, ref, caughtUp);
  const env = { OVERDECK_EXECUTION_SESSION_ID: 'session-auth-C' };
  const c1 = commitAs(wt.path, env, 'c1.txt', 'c1');
  const c2 = commitAs(wt.path, env, 'c2.txt', 'c2');
  expect(gitAs(wt.path, env, 'rebase', '-q', 'main').status).toBe(0);
  const copy2 = git(wt.path, 'rev-parse', 'HEAD');
  const copy1 = git(wt.path, 'rev-parse', 'HEAD~1');
  git(repo.repoRoot, 'merge', '-q', '--ff-only', wt.branch);
  await h.client.landed(ref, { sourceHead: c2, landedBranch: 'main', landedHead: copy2, landedAt: new Date().toISOString(), principal: lander });
  await waitForView(h.client, ref, (v) => v.state === 'landed' && caughtUp(v));
  await until('landing commits', async () => (await h.pool.query('SELECT 1 FROM landing_commits WHERE ownership_id = $1', [bound.ownershipId])).rowCount === 2);

  for (const [copy, original] of [
    [copy1, c1],
    [copy2, c2],
  ] as const) {
    const p = await provenance(h.pool, repoRoot, copy);
    expect(p).toMatchObject({ commit: copy, ownershipId: bound.ownershipId });
    expect(p!.authors!.map((a) => [a.commit, a.executionSessionId])).toEqual([[original, 'session-auth-C']]);
  }
});

test("the host agent's periodic pass ships what no projection write followed, once", async () => {
  const wt = repo.worktrees[1]!;
  const later = commitAs(wt.path, { OVERDECK_EXECUTION_SESSION_ID: 'session-auth-late' }, 'late.txt', 'late');
  const reports = async () =>
    (await h.pool.query('SELECT verdict, reason, execution_session_id, claimed_session_id FROM commit_reports WHERE commit_sha = $1', [later])).rows;
  expect(await reports()).toEqual([]);
  const shipper = new JournalShipper({ pool: h.pool, hostId: h.hostId, allowedRoots: [process.env.OD_TEST_TMP!] });
  await shipper.shipAll();
  // A worktree nobody holds (landed): unowned, attributed to nobody; the session the line named is kept as its claim.
  expect(await reports()).toEqual([
    { verdict: 'unowned', reason: 'attribution_no_tenure', execution_session_id: null, claimed_session_id: 'session-auth-late' },
  ]);
  expect(await attributed(later)).toBeNull();
  await shipper.shipAll();
  expect((await reports()).length).toBe(1);
  await shipper.stop();
});
