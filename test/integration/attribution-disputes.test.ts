import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { OwnershipView } from '../../src/client';
import { history } from '../../src/api/service/lookups';
import { renderHistory } from '../../src/cli/render/history';
import type { Principal } from '../../src/domain/identity';
import { cleanGitEnv } from '../../src/git/exec';
import { installHooks } from '../../src/git/guard';
import { JOURNAL_FILE } from '../../src/git/journal';
import { scanLandings } from '../../src/landings/scan';
import { authorsOf } from '../../src/store/attributions';
import { shipJournal } from '../../src/provenance/attributions';
import { recordObservation } from '../../src/store/bindings';
import { provenance, renderProvenance } from '../../src/provenance/provenance';
import { commitAs, git, GIT_IDENTITY, makeRepo, type RepoFixture } from '../support/git-fixture';
import { withTenureSecret } from '../support/tenure-env';
import { executorPrincipal as executor, startHarness, testKeyring, waitForView, type Harness } from '../support/harness';

/**
 * docs/git-projection.md#whom-a-commit-is-attributed-to: who made a commit comes from the durable
 * record (the tenure that held the worktree whose journal reported it), never from what a journal
 * line or a reflog says. Three owned worktrees of one real repository: A frames B, C steals B's
 * commit, C and B both claim one commit.
 */

let h: Harness;
let repo: RepoFixture;
let repoRoot: string;
const admin: Principal = { kind: 'admin', id: 'admin-disputes' };
const lander: Principal = { kind: 'landing', id: 'lander-disputes' };
const CONV = { a: 'a1b2c3d4-0000-4000-8000-0000000000d1', b: 'a1b2c3d4-0000-4000-8000-0000000000d2', c: 'a1b2c3d4-0000-4000-8000-0000000000d3' };
type Name = keyof typeof CONV;
const wt: Record<
  Name,
  { path: string; branch: string; ownershipId: string; session: string; worker: string; gitDir: string; ref: { repoRoot: string; worktreePath: string } }
> = {} as never;
const caughtUp = (v: OwnershipView): boolean => v.projectionSync.localSeq >= v.seq && v.projectionSync.error === null;
const roots = () => [process.env.OD_TEST_TMP!];

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  h = await startHarness();
  repo = makeRepo(3);
  repoRoot = await h.client.normalize(repo.repoRoot);
  await installHooks(repo.repoRoot);
  for (const [i, name] of (['a', 'b', 'c'] as const).entries()) {
    const worker = `worker-dis-${name}`;
    const observed = await recordObservation(
      h.pool,
      { workerId: worker, runId: null },
      {
        executor: 'chatgpt-web',
        executorInstanceId: `ext-${worker}`,
        sessionGeneration: 'gen-1',
        sequence: 1,
        conversation: {
          conversationId: CONV[name],
          conversationUrl: `https://chatgpt.com/c/${CONV[name]}`,
          title: `Lane ${name}`,
          observedAt: new Date().toISOString(),
        },
      },
    );
    expect('code' in observed).toBe(false);
    const w = repo.worktrees[i]!;
    const ref = { repoRoot, worktreePath: await h.client.normalize(w.path) };
    const session = `session-dis-${name}`;
    const view = await h.client.bind({
      ...ref,
      branch: w.branch,
      executionSessionId: session,
      runtime: 'chatgpt-web',
      worker: { runId: null, workerId: worker },
      principal: executor(worker),
    });
    await waitForView(h.client, ref, caughtUp);
    const gitDir = realpathSync(git(w.path, 'rev-parse', '--absolute-git-dir'));
    wt[name] = { path: ref.worktreePath, branch: w.branch, ownershipId: view.ownershipId, session, worker, gitDir, ref };
    // The host agent's shipping after the bind has read the (empty) journal: later lines were written after it.
    await until(
      `the first read of ${name}'s journal`,
      async () => (await h.pool.query('SELECT 1 FROM journal_reads WHERE git_dir = $1', [gitDir])).rowCount! > 0,
    );
  }
});
afterAll(async () => h?.shutdown());

/** A journal line as the hook writes it, with whatever the writer wants it to say. */
function forgeLine(name: Name, fields: Record<string, string>): void {
  const keys = ['ref', 'old', 'new', 'session', 'env_epoch', 'ownership', 'epoch', 'owner', 'state', 'worker', 'conversation'];
  appendFileSync(path.join(wt[name].gitDir, JOURNAL_FILE), `od1\tkind=commit\t${keys.map((k) => `${k}=${fields[k] ?? ''}`).join('\t')}\n`);
}

/** The line `name`'s own tenure would have written for a move of its branch. */
function claimsOf(name: Name, old: string, next: string): Record<string, string> {
  const w = wt[name];
  return {
    ref: `refs/heads/${w.branch}`,
    old,
    new: next,
    session: w.session,
    env_epoch: '1',
    ownership: w.ownershipId,
    epoch: '1',
    owner: w.session,
    state: 'active',
    worker: w.worker,
    conversation: CONV[name],
  };
}

const ship = (name: Name) => shipJournal(h.pool, wt[name].path, { hostId: h.hostId, allowedRoots: roots() });

const reportsOf = async (commit: string) =>
  (
    await h.pool.query<{
      worktree_path: string;
      verdict: string;
      reason: string | null;
      execution_session_id: string | null;
      claimed_session_id: string | null;
    }>('SELECT worktree_path, verdict, reason, execution_session_id, claimed_session_id FROM commit_reports WHERE commit_sha = $1 ORDER BY recorded_at', [
      commit,
    ])
  ).rows;

const authorship = async (commit: string) =>
  (
    await h.pool.query<{
      status: string;
      ownership_id: string | null;
      execution_session_id: string | null;
      epoch: number | null;
      worker_id: string | null;
      conversation_id: string | null;
      via: string | null;
    }>('SELECT status, ownership_id, execution_session_id, epoch, worker_id, conversation_id, via FROM commit_authorship WHERE commit_sha = $1', [commit])
  ).rows;

const attributedTo = (name: Name) => ({
  status: 'attributed',
  ownership_id: wt[name].ownershipId,
  execution_session_id: wt[name].session,
  epoch: 1,
  worker_id: wt[name].worker,
  conversation_id: CONV[name],
  via: 'session',
});

describe('A frames B: a line in A’s journal names B’s ownership, session, worker and conversation for A’s commit', () => {
  let base = '';
  let framed = '';

  test('recorded disputed, with what it claimed and what the record says; attributed to nobody; B’s head untouched', async () => {
    const a = wt.a;
    base = git(a.path, 'rev-parse', 'HEAD');
    // A commits with the hooks out of the way (its own core.hooksPath), so no line of its own is written.
    writeFileSync(path.join(a.path, 'a.txt'), 'made by A\n');
    const env = cleanGitEnv(GIT_IDENTITY);
    const noHooks = mkdtempSync(path.join(process.env.OD_TEST_TMP!, 'nohooks-'));
    execFileSync('git', ['-c', `core.hooksPath=${noHooks}`, 'add', 'a.txt'], { cwd: a.path, env });
    execFileSync('git', ['-c', `core.hooksPath=${noHooks}`, 'commit', '-q', '-m', 'a'], { cwd: a.path, env });
    framed = git(a.path, 'rev-parse', 'HEAD');
    forgeLine('a', { ...claimsOf('b', base, framed), ref: `refs/heads/${a.branch}` });

    await ship('a');
    expect(await reportsOf(framed)).toEqual([
      { worktree_path: a.path, verdict: 'disputed', reason: 'attribution_claim_mismatch', execution_session_id: a.session, claimed_session_id: wt.b.session },
    ]);
    expect(await authorship(framed)).toEqual([
      { status: 'disputed', ownership_id: null, execution_session_id: null, epoch: null, worker_id: null, conversation_id: null, via: null },
    ]);
    const [author] = await authorsOf(h.pool, [repoRoot], [framed]);
    expect(author).toMatchObject({
      commit: framed,
      status: 'disputed',
      via: 'unknown',
      ownershipId: null,
      executionSessionId: null,
      workerId: null,
      conversation: null,
    });
    expect(author!.reports).toEqual([
      expect.objectContaining({
        verdict: 'disputed',
        reason: 'attribution_claim_mismatch',
        worktreePath: a.path,
        claimed: { ownershipId: wt.b.ownershipId, epoch: 1, executionSessionId: wt.b.session, workerId: wt.b.worker, conversationId: CONV.b },
        recorded: { ownershipId: a.ownershipId, epoch: 1, executionSessionId: a.session, workerId: a.worker, conversationId: CONV.a },
      }),
    ]);

    // The head shipped is A's own, for A's ownership; B's is not moved by a line naming it.
    const heads = await h.pool.query<{ ownership_id: string; worktree_path: string; head: string }>(
      "SELECT ownership_id, worktree_path, status->>'head' AS head FROM worktree_heads WHERE ownership_id = ANY($1)",
      [[a.ownershipId, wt.b.ownershipId]],
    );
    expect(heads.rows).toEqual([{ ownership_id: a.ownershipId, worktree_path: a.path, head: framed }]);
  });

  test('a landings scan does not count the framed commit as B’s', async () => {
    git(repo.repoRoot, 'branch', 'release-check', framed);
    const report = await scanLandings(h.pool, { repo: repo.repoRoot, branch: 'release-check' });
    const r = report.results.find((x) => x.commit === framed);
    expect(r).toMatchObject({ status: 'none', ownershipId: null });
  });

  test('provenance and history show it disputed: claimed B, recorded A', async () => {
    git(repo.repoRoot, 'merge', '-q', '--squash', wt.a.branch);
    git(repo.repoRoot, 'commit', '-q', '-m', 'squash of A');
    const squash = git(repo.repoRoot, 'rev-parse', 'HEAD');
    await h.client.landed(wt.a.ref, { sourceHead: framed, landedBranch: 'main', landedHead: squash, landedAt: new Date().toISOString(), principal: lander });
    await until(
      'landing commits',
      async () => (await h.pool.query('SELECT 1 FROM landing_commits WHERE ownership_id = $1', [wt.a.ownershipId])).rowCount === 1,
    );

    const p = await provenance(h.pool, repoRoot, squash);
    expect(p!.authors!.map((x) => [x.commit, x.status, x.executionSessionId])).toEqual([[framed, 'disputed', null]]);
    const text = renderProvenance(p!);
    expect(text).toContain(`1. ${framed.slice(0, 12)} disputed`);
    expect(text).toContain(`disputed (attribution_claim_mismatch), reported by ${wt.a.path}: claimed session ${wt.b.session}, ownership ${wt.b.ownershipId}`);
    expect(text).toContain(`recorded session ${wt.a.session}, ownership ${wt.a.ownershipId}, epoch 1`);

    // B, the framed ownership, sees the line that named it in its history.
    const hb = await history({ client: h.client, temporal: h.temporal, pool: h.pool, keyring: testKeyring }, admin, { ownershipId: wt.b.ownershipId });
    expect(hb.ownerships[0]!.disputes).toEqual([
      expect.objectContaining({ commit: framed, status: 'disputed', verdict: 'disputed', claimed: expect.objectContaining({ ownershipId: wt.b.ownershipId }) }),
    ]);
    expect(renderHistory(hb)).toMatch(
      new RegExp(`Commits not attributed \\(journal claim vs record\\):\\n.*${framed.slice(0, 12)}  disputed \\(attribution_claim_mismatch\\)`),
    );
  });
});

describe('C claims a commit B made, before B’s journal ships', () => {
  let stolen = '';

  test('C’s forged line and reflog: not attributed to C', async () => {
    const base = git(wt.c.path, 'rev-parse', 'HEAD');
    stolen = commitAs(wt.b.path, wt.b.session, 'b1.txt');
    expect(git(wt.b.path, 'rev-parse', 'HEAD~1')).toBe(base);
    // The line C's own tenure would write, and the reflog entry that says C's move wrote it.
    forgeLine('c', claimsOf('c', base, stolen));
    appendFileSync(path.join(wt.c.gitDir, 'logs', 'HEAD'), `${base} ${stolen} t <t@example.invalid> ${Math.floor(Date.now() / 1000)} +0000\tcommit: mine\n`);

    await ship('c');
    expect(await reportsOf(stolen)).toEqual([
      {
        worktree_path: wt.c.path,
        verdict: 'disputed',
        reason: 'attribution_commit_of_other_worktree',
        execution_session_id: wt.c.session,
        claimed_session_id: wt.c.session,
      },
    ]);
    expect((await authorship(stolen))[0]).toMatchObject({ status: 'disputed', ownership_id: null });
  });

  test('B’s journal ships later: its consistent report supersedes, and the commit is B’s exactly as an owner’s commit always was', async () => {
    await ship('b');
    expect(await authorship(stolen)).toEqual([attributedTo('b')]);
    const [author] = await authorsOf(h.pool, [repoRoot], [stolen]);
    expect(author).toMatchObject({
      commit: stolen,
      status: 'attributed',
      via: 'session',
      ownershipId: wt.b.ownershipId,
      epoch: 1,
      executionSessionId: wt.b.session,
      workerId: wt.b.worker,
      conversation: { conversationId: CONV.b, title: 'Lane b' },
    });
  });
});

describe('C and B both report one commit as their own', () => {
  test('neither wins by shipping first: the commit is disputed', async () => {
    const b1 = git(wt.b.path, 'rev-parse', 'HEAD');
    // C, the owner of its worktree, moves its branch onto B's commit (allowed: it creates nothing) ...
    expect(
      execFileSync('git', ['reset', '-q', '--hard', b1], {
        cwd: wt.c.path,
        env: withTenureSecret(wt.c.path, { ...cleanGitEnv(GIT_IDENTITY), OVERDECK_EXECUTION_SESSION_ID: wt.c.session }),
      }).toString(),
    ).toBe('');
    const twice = commitAs(wt.b.path, wt.b.session, 'b2.txt');
    expect(
      execFileSync('git', ['reset', '-q', '--hard', twice], {
        cwd: wt.c.path,
        env: withTenureSecret(wt.c.path, { ...cleanGitEnv(GIT_IDENTITY), OVERDECK_EXECUTION_SESSION_ID: wt.c.session }),
      }).toString(),
    ).toBe('');
    // ... and its branch's reflog says that last move was a commit of its own.
    appendFileSync(
      path.join(realpathSync(git(repo.repoRoot, 'rev-parse', '--absolute-git-dir')), 'logs', 'refs', 'heads', ...wt.c.branch.split('/')),
      `${b1} ${twice} t <t@example.invalid> ${Math.floor(Date.now() / 1000)} +0000\tcommit: mine too\n`,
    );

    await ship('c');
    expect((await authorship(twice))[0]).toMatchObject({ status: 'attributed', ownership_id: wt.c.ownershipId });
    await ship('b');
    expect((await reportsOf(twice)).map((r) => [r.worktree_path, r.verdict, r.reason])).toEqual([
      [wt.c.path, 'attributed', null],
      [wt.b.path, 'disputed', 'attribution_reported_by_other_worktree'],
    ]);
    expect((await authorship(twice))[0]).toMatchObject({ status: 'disputed', ownership_id: null, execution_session_id: null });
    const [author] = await authorsOf(h.pool, [repoRoot], [twice]);
    expect(author).toMatchObject({ status: 'disputed', executionSessionId: null });
    expect(author!.reports!.map((r) => [r.worktreePath, r.verdict])).toEqual([
      [wt.c.path, 'attributed'],
      [wt.b.path, 'disputed'],
    ]);
  });
});

describe('the offset file in the worktree is not believed either', () => {
  test('rewinding it and rewriting the journal in place ships nothing again', async () => {
    const b = wt.b;
    const journal = path.join(b.gitDir, JOURNAL_FILE);
    const before = await ship('b');
    expect(before).toMatchObject({ attributed: 0, unattributed: 0 });
    // A commit on no branch, and a journal rewritten to say B's own move made it, from offset 0 on.
    const head = git(b.path, 'rev-parse', 'HEAD');
    const dangling = git(b.path, 'commit-tree', '-p', head, '-m', 'never moved a branch', `${head}^{tree}`);
    writeFileSync(journal, '');
    forgeLine('b', claimsOf('b', head, dangling));
    writeFileSync(path.join(b.gitDir, 'overdeck.journal.shipped'), '0\n');

    const again = await ship('b');
    expect(again).toMatchObject({ attributed: 0, unattributed: 0, refusals: 0 });
    expect(await reportsOf(dangling)).toEqual([]);
  });
});

describe('a forged line claims a commit made in a worktree nobody owns', () => {
  test('not attributed to the journal’s tenure: disputed, like a commit of another owned worktree', async () => {
    const base = git(wt.c.path, 'rev-parse', 'HEAD');
    // A worktree of the same repository that no ownership ever held: anyone may commit there.
    const freePath = path.join(mkdtempSync(path.join(process.env.OD_TEST_TMP!, 'free-wt-')), 'free');
    git(repo.repoRoot, 'worktree', 'add', '-q', '-b', 'wt/free', freePath, base);
    writeFileSync(path.join(freePath, 'free.txt'), 'made where nobody owns\n');
    git(freePath, 'add', 'free.txt');
    execFileSync('git', ['commit', '-q', '-m', 'free work'], { cwd: freePath, env: cleanGitEnv(GIT_IDENTITY) });
    const freeCommit = git(freePath, 'rev-parse', 'HEAD');
    expect(git(freePath, 'rev-parse', 'HEAD~1')).toBe(base);
    // C's journal and reflog say C's own tenure made it.
    forgeLine('c', claimsOf('c', base, freeCommit));
    appendFileSync(
      path.join(wt.c.gitDir, 'logs', 'HEAD'),
      `${base} ${freeCommit} t <t@example.invalid> ${Math.floor(Date.now() / 1000)} +0000\tcommit: mine\n`,
    );

    await ship('c');
    expect((await reportsOf(freeCommit)).map((r) => [r.worktree_path, r.verdict, r.reason])).toEqual([
      [wt.c.path, 'disputed', 'attribution_commit_of_other_worktree'],
    ]);
    expect((await authorship(freeCommit))[0]).toMatchObject({ status: 'disputed', ownership_id: null });
  });
});
