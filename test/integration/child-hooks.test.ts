import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { OwnershipView } from '../../src/client';
import type { Principal } from '../../src/domain/identity';
import { cleanGitEnv } from '../../src/git/exec';
import { installHooks } from '../../src/git/guard';
import { holdTenureSecret } from '../../src/keys/tenure';
import { shipJournal } from '../../src/provenance/attributions';
import { authorsOf } from '../../src/store/attributions';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { executorPrincipal as executor, startHarness, testKeyring, waitForView, type Harness } from '../support/harness';
import { withTenureSecret } from '../support/tenure-env';

/**
 * A child's `git commit` through the installed hooks (docs/ownership-record.md#child-holds), on the
 * real stack: the hooks' shell rule accepts the owner's own tenure and hands anyone else to the
 * TypeScript guard (od-gate), which stands a live hold's child with its own secret. So this file
 * needs the hooks of issue 45 (hooks/*.sh delegating to od-gate) as well as the child's tenure in
 * the projection; the child's line is journalled by the hooks, shipped by the host agent and
 * attributed to the child; `od-worktree guard` answers the same. After the hold's end, the hooks
 * refuse the child.
 */

let h: Harness;
let repo: RepoFixture;
let repoRoot: string;
const IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' };
const principal: Principal = executor('worker-hooks-p');
const BIN = path.resolve(__dirname, '../../bin/od-worktree.js');

/** `od-worktree guard --json` as the session would run it: the rule the hooks run, with only the given OVERDECK_* variables. */
function guardCli(cwd: string, env: Record<string, string>): { allowed: boolean; reason?: string } {
  const base = cleanGitEnv();
  delete base.OVERDECK_EXECUTION_SESSION_ID;
  delete base.OVERDECK_EPOCH;
  delete base.OVERDECK_TENURE_SECRET;
  const r = spawnSync(process.execPath, [BIN, 'guard', '--json'], { cwd, env: { ...base, ...env }, encoding: 'utf8' });
  return JSON.parse(r.stdout) as { allowed: boolean; reason?: string };
}

beforeAll(async () => {
  h = await startHarness();
  repo = makeRepo(1);
  repoRoot = await h.client.normalize(repo.repoRoot);
  await installHooks(repo.repoRoot);
});
afterAll(async () => h?.shutdown());

const caughtUp = (v: OwnershipView): boolean => v.projectionSync.localSeq >= v.seq && v.projectionSync.error === null;

function commitAs(cwd: string, env: Record<string, string>, file: string): { status: number; stderr: string; head: string } {
  const base = cleanGitEnv(IDENTITY);
  delete base.OVERDECK_EXECUTION_SESSION_ID;
  delete base.OVERDECK_EPOCH;
  delete base.OVERDECK_TENURE_SECRET;
  writeFileSync(path.join(cwd, file), `${file}\n`);
  try {
    execFileSync('git', ['add', file], { cwd, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    execFileSync('git', ['commit', '-q', '-m', file], { cwd, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    return { status: 0, stderr: '', head: git(cwd, 'rev-parse', 'HEAD') };
  } catch (err) {
    const e = err as { status?: number; stderr?: Buffer };
    execFileSync('git', ['reset', '-q', file], { cwd, env: cleanGitEnv(), stdio: 'ignore' });
    return { status: e.status ?? -1, stderr: e.stderr?.toString() ?? '', head: git(cwd, 'rev-parse', 'HEAD') };
  }
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

test("a live hold's child commits through the installed hooks with its own secret, attributed to it; another secret, or the same after the hold's end, is refused", async () => {
  const wt = repo.worktrees[0]!;
  const ref = { repoRoot, worktreePath: await h.client.normalize(wt.path) };
  const bound = await h.client.bind({
    ...ref,
    branch: wt.branch,
    executionSessionId: 'parent-h',
    runtime: 'claude-code',
    worker: { runId: null, workerId: 'worker-hooks-p' },
    principal,
  });
  await waitForView(h.client, ref, caughtUp);
  expect(commitAs(wt.path, withTenureSecret(wt.path, { OVERDECK_EXECUTION_SESSION_ID: 'parent-h', OVERDECK_EPOCH: '1' }), 'p.txt').status).toBe(0);

  await h.client.grantHold(ref, {
    executionSessionId: 'parent-h',
    epoch: 1,
    holdId: 'hld_hooks_c',
    childExecutionSessionId: 'child-h',
    runtime: 'codex-cli',
    principal,
  });
  await waitForView(h.client, ref, (v) => (v.holds ?? []).length === 1 && caughtUp(v));
  const secret = (holdId: string) =>
    holdTenureSecret(testKeyring().sealing.key, { ownershipId: bound.ownershipId, epoch: 1, holdId, executionSessionId: 'child-h' });
  const childEnv = { OVERDECK_EXECUTION_SESSION_ID: 'child-h', OVERDECK_EPOCH: '1', OVERDECK_TENURE_SECRET: secret('hld_hooks_c') };

  // `od-worktree guard` answers as the hooks do: the child with its own secret, and no other.
  expect(guardCli(wt.path, childEnv)).toMatchObject({ allowed: true });
  expect(guardCli(wt.path, { ...childEnv, OVERDECK_TENURE_SECRET: secret('hld_other') })).toMatchObject({ allowed: false, reason: 'tenure_unproven' });

  // A secret of another hold is refused by the hooks, and the branch does not move.
  const before = git(wt.path, 'rev-parse', 'HEAD');
  const forged = commitAs(wt.path, { ...childEnv, OVERDECK_TENURE_SECRET: secret('hld_other') }, 'forged.txt');
  expect({ status: forged.status === 0 ? 0 : 'refused', head: forged.head }).toEqual({ status: 'refused', head: before });
  expect(forged.stderr).toContain('od-worktree: refused');

  const made = commitAs(wt.path, childEnv, 'c.txt');
  expect({ status: made.status, stderr: made.stderr }).toEqual({ status: 0, stderr: '' });
  // Shipped now (the host agent ships after its next projection write as well).
  await shipJournal(h.pool, ref.worktreePath, { hostId: h.hostId, allowedRoots: [process.env.OD_TEST_TMP!] });
  const [author] = await until('the child commit attributed', async () => {
    const a = await authorsOf(h.pool, [repoRoot], [made.head]);
    return a[0]?.status === 'attributed' ? a : null;
  });
  expect(author).toMatchObject({ executionSessionId: 'child-h', via: 'hold', hold: { holdId: 'hld_hooks_c', parentExecutionSessionId: 'parent-h' } });

  await h.client.endHold(ref, { executionSessionId: 'parent-h', epoch: 1, holdId: 'hld_hooks_c', principal });
  await waitForView(h.client, ref, (v) => (v.holds ?? []).length === 0 && caughtUp(v));
  expect(guardCli(wt.path, childEnv)).toMatchObject({ allowed: false, reason: 'not_owner' });
  const late = commitAs(wt.path, childEnv, 'late.txt');
  expect({ status: late.status === 0 ? 0 : 'refused', head: late.head }).toEqual({ status: 'refused', head: made.head });
  expect(late.stderr).toContain('od-worktree: refused');
});
