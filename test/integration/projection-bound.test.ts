import path from 'node:path';
import lockfile from 'proper-lockfile';
import type { OwnershipViewOut } from '../../src/contract/http';
import { WRITER_LOCK_DIR } from '../../src/git/writer-lock';
import { makeRepo } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';

/**
 * An owner change answers within the API's deadline however slow its worktree is to write: the
 * projection written inside the answer (on the worktree's own host) is bounded like the wait it
 * replaced, and past that the answer says `projection: "pending"` and the host agent writes it
 * later. Here another writer holds the worktree's writer lock for 25 s. Before the bound, the
 * local write waited out the lock twice (20 s per attempt) and the release was a 503 at the API's
 * 30 s deadline. Real stack, real git, a real cross-process lock.
 */
let s: ApiStack;
beforeAll(async () => {
  s = await startApiStack();
});
afterAll(async () => s?.stop());

test('a release whose worktree is locked by another writer is answered, projection pending, then written', async () => {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0]!;
  const bound = await s.raw('POST', '/v1/bind', {
    token: s.tokens.executor,
    body: { worktreePath: wt.path, branch: wt.branch, executionSessionId: 'slow-wt', runtime: 'codex-cli' },
  });
  expect(bound.status).toBe(200);
  const view = bound.body as OwnershipViewOut;
  expect(view.projection).toBe('applied');

  const privateDir = path.join(repo.repoRoot, '.git', 'worktrees', path.basename(wt.path));
  const lockPath = path.join(privateDir, WRITER_LOCK_DIR);
  const unlock = await lockfile.lock(lockPath, { lockfilePath: lockPath, realpath: false, stale: 5_000 });
  let released: { status: number; body: unknown };
  const t0 = Date.now();
  try {
    released = await s.raw('POST', `/v1/ownerships/${view.ownershipId}/release`, {
      token: s.tokens.executor,
      body: { executionSessionId: 'slow-wt', epoch: 1 },
    });
  } finally {
    setTimeout(() => void unlock().catch(() => undefined), Math.max(0, 25_000 - (Date.now() - t0)));
  }
  const took = Date.now() - t0;
  expect({ status: released.status, projection: (released.body as OwnershipViewOut).projection }).toEqual({ status: 200, projection: 'pending' });
  expect(took).toBeLessThan(28_000);

  // Once the lock is free, the host agent writes the release into the worktree.
  const until = Date.now() + 60_000;
  let v = (await s.raw('GET', `/v1/ownerships/${view.ownershipId}`, { token: s.tokens.reader })).body as OwnershipViewOut;
  while ((v.projectionSync?.localSeq ?? 0) < v.seq && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 500));
    v = (await s.raw('GET', `/v1/ownerships/${view.ownershipId}`, { token: s.tokens.reader })).body as OwnershipViewOut;
  }
  expect(v).toMatchObject({ state: 'released', projectionSync: { localSeq: v.seq } });
}, 120_000);
