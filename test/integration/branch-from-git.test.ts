import { ApplicationFailure } from '@temporalio/common';
import { createHostActivities } from '../../src/activities';
import { noAuthority } from '../../src/activities/liveness';
import type { LandingResponse, OwnershipViewOut } from '../../src/contract/http';
import { OwnershipClient, OwnershipError } from '../../src/client';
import { gitWorktreeResolver } from '../../src/adapters/worktree-resolver';
import { readEvents } from '../../src/store/event-store';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { testKeyring } from '../support/harness';

/**
 * The branch of an ownership is git's, never the caller's word (docs/identities.md#worktree): a
 * bind or a rename naming another branch is refused and records nothing, and a landing by branch
 * never lands on the latest of several holders (the hijack: an executor binding its own worktree
 * under the victim's branch name, then the victim's work landed on the executor's ownership).
 */

let s: ApiStack;
let repo: RepoFixture;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(7);
});
afterAll(async () => s?.stop());

const SHA = (c: string) => c.repeat(40);

function expectError(res: { status: number; body: unknown }, status: number, code: string): void {
  expect({ status: res.status, code: (res.body as { code?: string }).code }).toEqual({ status, code });
}

const bindRaw = (i: number, session: string, token: string, extra: Record<string, unknown> = {}) =>
  s.raw('POST', '/v1/bind', { token, body: { worktreePath: repo.worktrees[i]!.path, executionSessionId: session, runtime: 'codex-cli', ...extra } });

async function bind(i: number, session: string, token = s.tokens.executor, extra: Record<string, unknown> = {}): Promise<OwnershipViewOut> {
  const res = await bindRaw(i, session, token, { branch: repo.worktrees[i]!.branch, ...extra });
  expect(res.status).toBe(200);
  return res.body as OwnershipViewOut;
}

/** Everything PostgreSQL holds about a worktree path: its ownership rows and their events. */
async function recordedAt(worktreePath: string) {
  const rows = await s.h.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM ownerships WHERE worktree_path = $1', [worktreePath]);
  const events = await s.h.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM ownership_events WHERE worktree_path = $1', [worktreePath]);
  return { rows: rows.rows[0]!.n, events: events.rows[0]!.n };
}

const landing = (body: Record<string, unknown>) =>
  s.raw('POST', '/v1/landings', { token: s.tokens.landing, body: { landedBranch: 'main', landedAt: new Date().toISOString(), ...body } });

test('a bind naming another branch than git has checked out is refused branch_mismatch, and nothing is recorded', async () => {
  const victim = repo.worktrees[0]!;
  const mine = repo.worktrees[1]!;
  const res = await bindRaw(1, 'bg-attacker', s.tokens.otherExecutor, { branch: victim.branch });
  expectError(res, 409, 'branch_mismatch');
  expect((res.body as { details?: unknown }).details).toEqual({ branch: mine.branch });
  expect(await recordedAt(mine.path)).toEqual({ rows: 0, events: 0 });
  // The same bind without a branch takes git's.
  const taken = await bindRaw(1, 'bg-attacker', s.tokens.otherExecutor);
  expect(taken.status).toBe(200);
  expect((taken.body as OwnershipViewOut).branch).toBe(mine.branch);
});

test('a detached HEAD is refused detached_head, and nothing is recorded', async () => {
  const wt = repo.worktrees[4]!;
  git(wt.path, 'checkout', '-q', '--detach');
  try {
    expectError(await bindRaw(4, 'bg-detached', s.tokens.executor, { branch: wt.branch }), 409, 'detached_head');
    expectError(await bindRaw(4, 'bg-detached', s.tokens.executor), 409, 'detached_head');
    expect(await recordedAt(wt.path)).toEqual({ rows: 0, events: 0 });
  } finally {
    git(wt.path, 'checkout', '-q', wt.branch);
  }
});

test('the landing hijack: an executor cannot bind under the victim’s branch, so a landing by that branch lands on the victim', async () => {
  const victim = repo.worktrees[0]!;
  const v = await bind(0, 'bg-victim');
  // The executor of another worker binds its own worktree under the victim's branch name: refused.
  expectError(await bindRaw(5, 'bg-hijack', s.tokens.otherExecutor, { branch: victim.branch }), 409, 'branch_mismatch');
  expect(await recordedAt(repo.worktrees[5]!.path)).toEqual({ rows: 0, events: 0 });
  const res = await landing({ repoRoot: repo.repoRoot, sourceBranch: victim.branch, sourceHead: SHA('a'), landedHead: SHA('b') });
  expect(res.status).toBe(200);
  expect(res.body as LandingResponse).toMatchObject({
    status: 'recorded',
    ownershipId: v.ownershipId,
    receipt: { executionSessionId: 'bg-victim', sourceBranch: victim.branch },
  });
});

test('two live ownerships on one branch (both checked out by git): a landing by that branch is ambiguous and lands nowhere', async () => {
  const [a, b] = [repo.worktrees[2]!, repo.worktrees[3]!];
  // git lets a branch be checked out twice only when forced; then both worktrees really are on it.
  git(b.path, 'checkout', '-q', '--ignore-other-worktrees', a.branch);
  const first = await bind(2, 'bg-twin-a');
  const second = await bind(3, 'bg-twin-b', s.tokens.otherExecutor, { branch: a.branch });
  expect(second.branch).toBe(a.branch);
  const before = [await readEvents(s.h.pool, first.ownershipId), await readEvents(s.h.pool, second.ownershipId)];

  const res = await landing({ repoRoot: repo.repoRoot, sourceBranch: a.branch, sourceHead: SHA('c'), landedHead: SHA('d') });
  expectError(res, 409, 'ambiguous');
  expect((res.body as { details: { candidates: string[] } }).details.candidates.sort()).toEqual([first.ownershipId, second.ownershipId].sort());
  expect([await readEvents(s.h.pool, first.ownershipId), await readEvents(s.h.pool, second.ownershipId)]).toEqual(before);
  // Scoped to these two ownerships: other test files of the run land the same made-up heads in the same database.
  const receipts = await s.h.pool.query('SELECT 1 FROM landing_receipts WHERE landed_head = $1 AND ownership_id = ANY($2)', [
    SHA('d'),
    [first.ownershipId, second.ownershipId],
  ]);
  expect(receipts.rowCount).toBe(0);

  // Named by ownership, it lands where it is told.
  const named = await landing({ ownershipId: second.ownershipId, sourceHead: SHA('c'), landedHead: SHA('d') });
  expect(named.status).toBe(200);
  expect(named.body as LandingResponse).toMatchObject({ ownershipId: second.ownershipId });
});

test('rename-branch records only what git now has checked out', async () => {
  const wt = repo.worktrees[6]!;
  const owner = await bind(6, 'bg-renamer');
  const post = (body: Record<string, unknown>) =>
    s.raw('POST', `/v1/ownerships/${owner.ownershipId}/rename-branch`, {
      token: s.tokens.executor,
      body: { executionSessionId: 'bg-renamer', epoch: owner.epoch, ...body },
    });
  const before = await readEvents(s.h.pool, owner.ownershipId);
  // Not renamed in git: refused, nothing recorded.
  const refused = await post({ from: wt.branch, to: 'wt/not-in-git' });
  expectError(refused, 409, 'branch_mismatch');
  expect((refused.body as { details?: unknown }).details).toEqual({ branch: wt.branch });
  expect(await readEvents(s.h.pool, owner.ownershipId)).toEqual(before);
  // Renamed in git first: recorded.
  git(wt.path, 'branch', '-m', 'wt/renamed-in-git');
  const res = await post({ from: wt.branch, to: 'wt/renamed-in-git' });
  expect(res.status).toBe(200);
  expect((res.body as OwnershipViewOut).branch).toBe('wt/renamed-in-git');
});

test('the host agent checks the branch a first claim on another host would record (inspectWorktree)', async () => {
  const host = createHostActivities({ allowedRoots: [process.env.OD_TEST_TMP!], authority: noAuthority, keyring: testKeyring() });
  const wt = repo.worktrees[5]!;
  await expect(host.inspectWorktree(wt.path, wt.branch)).resolves.toMatchObject({ branch: wt.branch });
  await expect(host.inspectWorktree(wt.path)).resolves.toMatchObject({ branch: wt.branch });
  const refused = await host.inspectWorktree(wt.path, 'wt/victim').then(
    () => null,
    (err: unknown) => err,
  );
  expect(refused).toBeInstanceOf(ApplicationFailure);
  expect({ type: (refused as ApplicationFailure).type, nonRetryable: (refused as ApplicationFailure).nonRetryable }).toEqual({
    type: 'branch_mismatch',
    nonRetryable: true,
  });
});

test('a first claim on another host records git’s branch there: the workflow has that host’s agent check it', async () => {
  // A client on another host: the worktree is the harness's host's, so the workflow asks that host's agent.
  const elsewhere = new OwnershipClient({
    client: s.h.temporal,
    resolver: gitWorktreeResolver,
    taskQueue: s.h.taskQueue,
    hostId: `elsewhere-${Math.random().toString(36).slice(2, 8)}`,
  });
  const own = makeRepo(1);
  const wt = own.worktrees[0]!;
  const req = {
    hostId: s.h.hostId,
    repoRoot: own.repoRoot,
    worktreePath: wt.path,
    executionSessionId: 'remote-1',
    runtime: 'codex-cli',
    worker: { runId: null, workerId: s.workerId },
    principal: { kind: 'executor' as const, id: 'exec', workerId: s.workerId },
  };
  const refused = await elsewhere.bind({ ...req, branch: 'wt/not-this-one' }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(refused).toBeInstanceOf(OwnershipError);
  expect({ code: (refused as OwnershipError).code, details: (refused as OwnershipError).details }).toMatchObject({ code: 'branch_mismatch' });
  const bound = await elsewhere.bind({ ...req, branch: wt.branch });
  expect(bound.branch).toBe(wt.branch);
});
