import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { OwnershipView } from '../../src/client';
import type { Principal } from '../../src/domain/identity';
import { guardAt } from '../../src/gate/guard';
import { cleanGitEnv } from '../../src/git/exec';
import { installHooks } from '../../src/git/guard';
import { worktreeDirs } from '../../src/git/repo';
import { holdTenureSecret } from '../../src/keys/tenure';
import { CLOCK_SLACK_MS, shipJournal } from '../../src/provenance/attributions';
import { provenance, renderProvenance } from '../../src/provenance/provenance';
import { recordObservation } from '../../src/store/bindings';
import { authorsOf } from '../../src/store/attributions';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { executorPrincipal as executor, startHarness, testKeyring, waitForView, type Harness } from '../support/harness';
import { withTenureSecret } from '../support/tenure-env';

/**
 * A child's commits under a hold (docs/ownership-record.md#child-holds) on the real stack
 * (Temporal, PostgreSQL, git, the host agent's journal shipping): the parent commits through the
 * installed hooks; the child, whose hold the projection names, commits through them too (they hand
 * a non-owner to the TypeScript guard, which stands it by its hold) and its line is theirs. The journal
 * attributes the child's commit to the child and, through it, to the parent's conversation; a
 * line that claims the child after its hold ended, or names the child as the owner, is disputed.
 */

let h: Harness;
let repo: RepoFixture;
let repoRoot: string;
let hooksPath: string;
const CONV = 'a1b2c3d4-0000-4000-8000-0000000000cc';
const IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' };
const principal: Principal = executor('worker-child-p');

beforeAll(async () => {
  h = await startHarness();
  repo = makeRepo(1);
  repoRoot = await h.client.normalize(repo.repoRoot);
  hooksPath = (await installHooks(repo.repoRoot)).hooksPath;
});
afterAll(async () => h?.shutdown());

const caughtUp = (v: OwnershipView): boolean => v.projectionSync.localSeq >= v.seq && v.projectionSync.error === null;

function gitAs(cwd: string, env: Record<string, string>, ...args: string[]): void {
  const base = cleanGitEnv(IDENTITY);
  delete base.OVERDECK_EXECUTION_SESSION_ID;
  delete base.OVERDECK_EPOCH;
  execFileSync('git', args, { cwd, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

const noHooks = mkdtempSync(path.join(process.env.OD_TEST_TMP ?? '/tmp', 'no-hooks-'));

/** The child's commit through the installed hooks, which stand it by its hold and journal its line. */
function childCommits(wt: string, env: Record<string, string>, file: string): string {
  writeFileSync(path.join(wt, file), `${file}\n`);
  gitAs(wt, env, 'add', file);
  gitAs(wt, env, 'commit', '-q', '-m', file);
  return git(wt, 'rev-parse', 'HEAD');
}

/**
 * A line that claims the child after its hold ended: the hooks would refuse the commit, so it is
 * made without them, and its journal line is the installed reference-transaction hook's own
 * (its "committed" phase, fed the move), with the child's environment: what a caller who skips
 * the pre-commit check but leaves the journalling in place writes.
 */
function childCommitsPastTheHooks(wt: string, env: Record<string, string>, file: string, hooksPath: string): string {
  const before = git(wt, 'rev-parse', 'HEAD');
  writeFileSync(path.join(wt, file), `${file}\n`);
  gitAs(wt, env, 'add', file);
  gitAs(wt, env, '-c', `core.hooksPath=${noHooks}`, 'commit', '-q', '-m', file);
  const after = git(wt, 'rev-parse', 'HEAD');
  const branch = git(wt, 'symbolic-ref', 'HEAD');
  execFileSync(path.join(hooksPath, 'reference-transaction'), ['committed'], {
    cwd: wt,
    input: `${before} ${after} ${branch}\n`,
    env: { ...cleanGitEnv(), ...env, GIT_DIR: git(wt, 'rev-parse', '--absolute-git-dir') },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return after;
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

test("a child's commit is the child's, through its hold, and the parent's conversation; after the hold's end a line claiming the child is disputed", async () => {
  const wt = repo.worktrees[0]!;
  const ref = { repoRoot, worktreePath: await h.client.normalize(wt.path) };
  const observed = await recordObservation(
    h.pool,
    { workerId: 'worker-child-p', runId: null },
    {
      executor: 'chatgpt-web',
      executorInstanceId: 'ext-child-p',
      sessionGeneration: 'gen-1',
      sequence: 1,
      conversation: { conversationId: CONV, conversationUrl: `https://chatgpt.com/c/${CONV}`, title: 'Parent lane', observedAt: new Date().toISOString() },
    },
  );
  expect('code' in observed).toBe(false);
  const bound = await h.client.bind({
    ...ref,
    branch: wt.branch,
    executionSessionId: 'parent-p',
    runtime: 'chatgpt-web',
    worker: { runId: null, workerId: 'worker-child-p' },
    principal,
  });
  await waitForView(h.client, ref, caughtUp);
  const parentEnv = withTenureSecret(wt.path, { OVERDECK_EXECUTION_SESSION_ID: 'parent-p', OVERDECK_EPOCH: '1' });
  writeFileSync(path.join(wt.path, 'p1.txt'), 'p1\n');
  gitAs(wt.path, parentEnv, 'add', 'p1.txt');
  gitAs(wt.path, parentEnv, 'commit', '-q', '-m', 'p1');
  const p1 = git(wt.path, 'rev-parse', 'HEAD');

  await h.client.grantHold(ref, {
    executionSessionId: 'parent-p',
    epoch: 1,
    holdId: 'hld_child_c',
    childExecutionSessionId: 'child-c',
    runtime: 'codex-cli',
    principal,
  });
  await waitForView(h.client, ref, (v) => (v.holds ?? []).length === 1 && caughtUp(v));
  const childEnv = {
    OVERDECK_EXECUTION_SESSION_ID: 'child-c',
    OVERDECK_EPOCH: '1',
    OVERDECK_TENURE_SECRET: holdTenureSecret(testKeyring().sealing.key, {
      ownershipId: bound.ownershipId,
      epoch: 1,
      holdId: 'hld_child_c',
      executionSessionId: 'child-c',
    }),
  };
  // The worktree's gate stands the child: its hold's words are in the projection.
  const gd = (await worktreeDirs(wt.path)).privateDir;
  expect(guardAt(gd, childEnv, 'git')).toMatchObject({ status: 0, holdId: 'hld_child_c' });
  const c1 = childCommits(wt.path, childEnv, 'c1.txt');

  // The child's hold ends; a later line claiming the child (as the child's would read) names nobody.
  await h.client.endHold(ref, { executionSessionId: 'child-c', epoch: 1, holdId: 'hld_child_c', principal });
  const ended = await waitForView(h.client, ref, (v) => (v.holds ?? []).length === 0 && caughtUp(v));
  expect(ended.holds ?? []).toEqual([]);
  expect(guardAt(gd, childEnv, 'git')).toMatchObject({ status: 10, reason: 'not_owner' });
  // A read of the journal past the clocks' slack after the end: a line found after it was written
  // after the hold ended, whatever it says (the host agent ships too; the cursor keeps the two apart).
  await new Promise((r) => setTimeout(r, CLOCK_SLACK_MS + 300));
  await shipJournal(h.pool, ref.worktreePath, { hostId: h.hostId, allowedRoots: [process.env.OD_TEST_TMP!] });
  const late = childCommitsPastTheHooks(wt.path, childEnv, 'c2.txt', hooksPath);
  await new Promise((r) => setTimeout(r, 50));
  await shipJournal(h.pool, ref.worktreePath, { hostId: h.hostId, allowedRoots: [process.env.OD_TEST_TMP!] });

  const authors = await until('all three shipped', async () => {
    const a = await authorsOf(h.pool, [repoRoot], [p1, c1, late]);
    return a.every((x) => x.status !== undefined) ? a : null;
  });
  expect(authors.map((a) => [a.executionSessionId, a.via, a.epoch, a.workerId, a.conversation?.title ?? null, a.hold ?? null])).toEqual([
    ['parent-p', 'session', 1, 'worker-child-p', 'Parent lane', null],
    ['child-c', 'hold', 1, 'worker-child-p', 'Parent lane', { holdId: 'hld_child_c', parentExecutionSessionId: 'parent-p' }],
    [null, 'unknown', null, null, null, null],
  ]);
  expect(authors[1]!.ownershipId).toBe(bound.ownershipId);
  expect(authors[2]!.status).toBe('disputed');
  expect(authors[2]!.reports?.[0]).toMatchObject({
    reason: 'attribution_claim_mismatch',
    claimed: { executionSessionId: 'child-c' },
    recorded: { executionSessionId: 'parent-p' },
  });

  // Landed by squash: provenance lists the child's commit as the child's, under its hold and parent.
  git(repo.repoRoot, 'merge', '-q', '--squash', wt.branch);
  git(repo.repoRoot, 'commit', '-q', '-m', 'squash of the parent and its child');
  const squash = git(repo.repoRoot, 'rev-parse', 'HEAD');
  await h.client.landed(ref, {
    sourceHead: late,
    landedBranch: 'main',
    landedHead: squash,
    landedAt: new Date().toISOString(),
    principal: { kind: 'landing', id: 'lander-child' },
  });
  await waitForView(h.client, ref, (v) => v.state === 'landed' && caughtUp(v));
  await until('landing commits', async () => (await h.pool.query('SELECT 1 FROM landing_commits WHERE ownership_id = $1', [bound.ownershipId])).rowCount === 3);
  const p = await provenance(h.pool, repoRoot, squash);
  expect(p!.authors!.map((a) => [a.commit, a.executionSessionId, a.via])).toEqual([
    [p1, 'parent-p', 'session'],
    [c1, 'child-c', 'hold'],
    [late, null, 'unknown'],
  ]);
  const text = renderProvenance(p!);
  expect(text).toMatch(/^Authors: +3 commits, 3 sessions, oldest first$/m);
  expect(text).toContain(
    `2. ${c1.slice(0, 12)} session child-c, epoch 1, worker worker-child-p, conversation Parent lane (child under hold hld_child_c of parent session parent-p)`,
  );
});
