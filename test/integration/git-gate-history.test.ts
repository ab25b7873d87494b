import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { OwnershipView } from '../../src/client';
import { cleanGitEnv } from '../../src/git/exec';
import { installHooks } from '../../src/git/guard';
import { attemptsOf } from '../../src/store/attributions';
import { git, makeRepo } from '../support/git-fixture';
import { withTenureSecret } from '../support/tenure-env';
import { executorPrincipal as executor, startHarness, waitForView, type Harness } from '../support/harness';

/**
 * Issue 17 end to end: a real handoff from A to B through the service, then A's destructive git
 * through the agent-side gate (bin/git-gate/git) is refused before it touches B's files, and the
 * host agent ships each refusal into the ownership's history (git_refusals, the attempts beside
 * its events). B, the owner, snapshots its work offline.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.shutdown());

const ROOT = path.resolve(__dirname, '../..');
const GATE_DIR = path.join(ROOT, 'bin/git-gate');
const BIN = path.join(ROOT, 'bin/od-worktree.js');
const caughtUp = (v: OwnershipView): boolean => v.projectionSync.localSeq >= v.seq && v.projectionSync.error === null;

function gated(cwd: string, session: string, epoch: number, ...args: string[]): { status: number; stderr: string } {
  const env = withTenureSecret(
    cwd,
    cleanGitEnv({ PATH: `${GATE_DIR}:${process.env.PATH ?? ''}`, OVERDECK_EXECUTION_SESSION_ID: session, OVERDECK_EPOCH: String(epoch) }),
  );
  const r = spawnSync('git', args, { cwd, env, encoding: 'utf8' });
  return { status: r.status ?? -1, stderr: r.stderr };
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('after a handoff the old owner cannot reset, check out, clean, stash or restore; each attempt reaches the history', async () => {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0]!;
  await installHooks(repo.repoRoot);
  const ref = { repoRoot: await h.client.normalize(repo.repoRoot), worktreePath: await h.client.normalize(wt.path) };
  git(wt.path, 'branch', 'other');
  const bound = await h.client.bind({
    ...ref,
    branch: wt.branch,
    executionSessionId: 'session-gate-A',
    runtime: 'codex-cli',
    worker: { runId: null, workerId: 'worker-gate-a' },
    principal: executor('worker-gate-a'),
  });
  const started = await h.client.handoff(ref, {
    executionSessionId: 'session-gate-A',
    epoch: 1,
    principal: executor('worker-gate-a'),
    toExecutionSessionId: 'session-gate-B',
    toWorkerId: 'worker-gate-b',
  });
  await h.client.acceptHandoff(ref, {
    handoffId: started.handoff!.handoffId,
    executionSessionId: 'session-gate-B',
    runtime: 'codex-cli',
    parentExecutionSessionId: 'session-gate-A',
    worker: { runId: null, workerId: 'worker-gate-b' },
    principal: executor('worker-gate-b'),
  });
  await waitForView(h.client, ref, (v) => v.epoch === 2 && caughtUp(v));

  // B works: a committed file, an uncommitted edit of it, an untracked directory.
  writeFileSync(path.join(wt.path, 'b.txt'), 'committed by B\n');
  expect(gated(wt.path, 'session-gate-B', 2, 'add', 'b.txt').status).toBe(0);
  expect(
    spawnSync('git', ['commit', '-qm', 'b'], {
      cwd: wt.path,
      env: withTenureSecret(
        wt.path,
        cleanGitEnv({
          PATH: `${GATE_DIR}:${process.env.PATH}`,
          OVERDECK_EXECUTION_SESSION_ID: 'session-gate-B',
          GIT_AUTHOR_NAME: 't',
          GIT_AUTHOR_EMAIL: 't@x.invalid',
          GIT_COMMITTER_NAME: 't',
          GIT_COMMITTER_EMAIL: 't@x.invalid',
        }),
      ),
    }).status,
  ).toBe(0);
  writeFileSync(path.join(wt.path, 'b.txt'), 'uncommitted edit by B\n');
  mkdirSync(path.join(wt.path, 'scratch'));
  writeFileSync(path.join(wt.path, 'scratch/notes.txt'), 'untracked\n');
  const files = () => ({
    b: readFileSync(path.join(wt.path, 'b.txt'), 'utf8'),
    notes: existsSync(path.join(wt.path, 'scratch/notes.txt')),
    status: git(wt.path, 'status', '--porcelain'),
    head: git(wt.path, 'rev-parse', 'HEAD'),
    branch: git(wt.path, 'symbolic-ref', 'HEAD'),
  });
  const before = files();

  const tried = [
    ['reset', '--hard', 'HEAD~1'],
    ['checkout', 'other'],
    ['switch', 'other'],
    ['restore', '.'],
    ['clean', '-fd'],
    ['stash'],
    ['checkout', '--', '.'],
  ];
  for (const args of tried) {
    const r = gated(wt.path, 'session-gate-A', 1, ...args);
    expect([args.join(' '), r.status, r.stderr]).toEqual([args.join(' '), 1, expect.stringContaining('this worktree is owned by session session-gate-B')]);
  }
  expect(files()).toEqual(before);

  // The host agent ships the journal after its next projection write (here: B names its plan), not this test.
  await h.client.bindPlan(ref, { executionSessionId: 'session-gate-B', epoch: 2, principal: executor('worker-gate-b'), planRef: 'docs/plans/b.md' });
  const attempts = await until('the refusals in the history', async () => {
    const a = (await attemptsOf(h.pool, { ownershipIds: [bound.ownershipId] })).filter((x) => x.kind === 'wrapper_refused');
    return a.length === tried.length ? a : null;
  });
  expect(attempts.map((a) => a.command)).toEqual(tried.map((t) => t[0]));
  expect(attempts[0]).toMatchObject({
    kind: 'wrapper_refused',
    code: 'not_owner',
    executionSessionId: 'session-gate-A',
    ownerSessionId: 'session-gate-B',
    epoch: 2,
    ref: `refs/heads/${wt.branch}`,
    oldHead: before.head,
  });

  // B keeps a copy of its work; the same content a second time is the same ref.
  const snap = (session: string) =>
    JSON.parse(
      execFileSync(process.execPath, [BIN, 'snapshot', '--json'], {
        cwd: wt.path,
        env: withTenureSecret(
          wt.path,
          cleanGitEnv({ OVERDECK_EXECUTION_SESSION_ID: session, OVERDECK_EPOCH: '2', OD_ALLOWED_ROOTS: process.env.OD_TEST_TMP! }),
        ),
        encoding: 'utf8',
      }),
    ) as { snapshot: { ref: string; deduplicated: boolean } };
  const first = snap('session-gate-B');
  expect(first.snapshot.ref).toMatch(new RegExp(`^refs/overdeck/wip/${bound.ownershipId}/tree-[0-9a-f]{40}$`));
  expect(snap('session-gate-B').snapshot).toEqual({ ...first.snapshot, deduplicated: true });
  expect(files()).toEqual(before);
});
