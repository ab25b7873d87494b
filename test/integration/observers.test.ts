/**
 * Read-only observers of a worktree (src/contract/observers.ts) on the real stack: registered and
 * listed by `who` (API and CLI), moved on by a heartbeat, gone when their lease runs out or they
 * leave; never a tenure (the hooks refuse an observer's commit), never in an owner's way (bind,
 * heartbeat, release and the next bind go on as if no one were looking).
 */
import { unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ApiError } from '../../src/api/client';
import { ObserveOutputSchema, WhoOutputSchema } from '../../src/contract/cli-output';
import { OwnershipItemSchema } from '../../src/contract/http';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { apiEnv, runCli } from '../support/cli';
import { commitAs, git, gitAs, makeRepo, type RepoFixture } from '../support/git-fixture';

let s: ApiStack;
let repo: RepoFixture;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(2);
  // The gate: the repository's guard hooks, as an operator installs them.
  const installed = await runCli(['install-hooks', '--json'], {
    cwd: repo.repoRoot,
    env: { ...apiEnv(s.url, s.tokens.admin), OD_ALLOWED_ROOTS: process.env.OD_TEST_TMP! },
  });
  expect(installed.code).toBe(0);
});
afterAll(async () => s?.stop());

const codeOf = async (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'ok',
    (err: unknown) => (err instanceof ApiError ? err.body.code : String(err)),
  );

test('an observer is listed by who (API and CLI), a heartbeat moves its lease on, leaving drops it; another worker cannot take or end its registration', async () => {
  const wt = repo.worktrees[0]!;
  const exec = s.api(s.tokens.executor);
  const owner = await exec.bind({ worktreePath: wt.path, branch: wt.branch, executionSessionId: 'obs-owner-0', runtime: 'codex-cli' });

  const first = await exec.observe({ worktreePath: wt.path, executionSessionId: 'obs-review', runtime: 'claude-code', ttlMs: 60_000 });
  expect(first).toMatchObject({
    worktreePath: owner.worktreePath,
    observer: { executionSessionId: 'obs-review', workerId: s.workerId, runtime: 'claude-code' },
  });

  const live = OwnershipItemSchema.parse(await exec.getLive({ worktreePath: wt.path }));
  expect(live.owner?.executionSessionId).toBe('obs-owner-0');
  expect(live.observers?.map((o) => o.executionSessionId)).toEqual(['obs-review']);

  // The CLI: observe --json registers (a second session), who --json and the table list both.
  const env = apiEnv(s.url, s.tokens.executor);
  const cliObs = await runCli(['observe', '--session', 'obs-chat', '--runtime', 'codex-cli', '--ttl', '30000', '--json'], { cwd: wt.path, env });
  expect(cliObs.code).toBe(0);
  expect(ObserveOutputSchema.parse(JSON.parse(cliObs.stdout)).observer.executionSessionId).toBe('obs-chat');
  const who = await runCli(['who', '--json'], { cwd: wt.path, env: apiEnv(s.url, s.tokens.reader) });
  expect(who.code).toBe(0);
  const whoOut = WhoOutputSchema.parse(JSON.parse(who.stdout));
  expect(whoOut.ownership.observers?.map((o) => [o.executionSessionId, o.runtime])).toEqual([
    ['obs-review', 'claude-code'],
    ['obs-chat', 'codex-cli'],
  ]);
  const table = await runCli(['who'], { cwd: wt.path, env: apiEnv(s.url, s.tokens.reader) });
  expect(table.stdout).toMatch(/Observers:\s+obs-review \(.*worker .*; seen (just now|\d+ s ago)\)/);
  expect(table.stdout).toContain('obs-chat');

  // A heartbeat (the same call again) moves last seen and expiry on; registered stays.
  await new Promise((r) => setTimeout(r, 50));
  const again = await exec.observe({ worktreePath: wt.path, executionSessionId: 'obs-review', runtime: 'claude-code', ttlMs: 600_000 });
  expect(again.observer.registeredAt).toBe(first.observer.registeredAt);
  expect(Date.parse(again.observer.lastSeenAt)).toBeGreaterThan(Date.parse(first.observer.lastSeenAt));
  expect(Date.parse(again.observer.expiresAt) - Date.parse(first.observer.expiresAt)).toBeGreaterThan(500_000);

  // The session is this worker's: another worker's executor can neither register it nor end it; a reader may not observe at all.
  const other = s.api(s.tokens.otherExecutor);
  expect(await codeOf(other.observe({ worktreePath: wt.path, executionSessionId: 'obs-review' }))).toBe('worker_mismatch');
  expect(await codeOf(other.leaveObserve({ worktreePath: wt.path, executionSessionId: 'obs-review' }))).toBe('worker_mismatch');
  expect(await codeOf(exec.observe({ worktreePath: wt.path, executionSessionId: 'obs-x', workerId: s.otherWorkerId }))).toBe('worker_mismatch');
  expect(await codeOf(s.api(s.tokens.reader).observe({ worktreePath: wt.path, executionSessionId: 'obs-r' }))).toBe('forbidden');
  expect(await codeOf(exec.observe({ worktreePath: wt.path, executionSessionId: 'obs-ttl', ttlMs: 1_000 }))).toBe('invalid_input');
  expect((await exec.getLive({ worktreePath: wt.path })).observers?.find((o) => o.executionSessionId === 'obs-review')?.workerId).toBe(s.workerId);

  // Leaving: through the API and the CLI; a second leave says nothing was there.
  expect(await exec.leaveObserve({ worktreePath: wt.path, executionSessionId: 'obs-review' })).toMatchObject({ left: true });
  expect(await exec.leaveObserve({ worktreePath: wt.path, executionSessionId: 'obs-review' })).toMatchObject({ left: false });
  const cliLeave = await runCli(['observe', '--session', 'obs-chat', '--leave', '--json'], { cwd: wt.path, env });
  expect([cliLeave.code, JSON.parse(cliLeave.stdout).left]).toEqual([0, true]);
  expect((await exec.getLive({ worktreePath: wt.path })).observers).toEqual([]);
});

test('an expired registration is not listed, and the next registration prunes it', async () => {
  const wt = repo.worktrees[0]!;
  const exec = s.api(s.tokens.executor);
  const reg = await exec.observe({ worktreePath: wt.path, executionSessionId: 'obs-brief', ttlMs: 5_000 });
  expect((await exec.getLive({ worktreePath: wt.path })).observers?.map((o) => o.executionSessionId)).toContain('obs-brief');
  // Past its expiry by PostgreSQL's clock (the row's own expires_at).
  await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(reg.observer.expiresAt) - Date.now()) + 300));
  expect((await exec.getLive({ worktreePath: wt.path })).observers?.map((o) => o.executionSessionId)).not.toContain('obs-brief');
  const rows = async () =>
    (await s.h.pool.query(`SELECT observer_session_id FROM worktree_observers WHERE worktree_path = $1`, [reg.worktreePath])).rows.map(
      (r: { observer_session_id: string }) => r.observer_session_id,
    );
  expect(await rows()).toContain('obs-brief');
  await exec.observe({ worktreePath: wt.path, executionSessionId: 'obs-sweeper', ttlMs: 5_000 });
  expect(await rows()).not.toContain('obs-brief');
  await exec.leaveObserve({ worktreePath: wt.path, executionSessionId: 'obs-sweeper' });
});

test('observers never mutate and never block: the hooks refuse an observer’s commit, and bind, heartbeat, release and the next bind by others go on', async () => {
  const wt = repo.worktrees[1]!;
  const exec = s.api(s.tokens.executor);
  const other = s.api(s.tokens.otherExecutor);
  // Observers first, of both workers, on a worktree nobody owns yet.
  await exec.observe({ worktreePath: wt.path, executionSessionId: 'obs-watch-a', ttlMs: 120_000 });
  await other.observe({ worktreePath: wt.path, executionSessionId: 'obs-watch-b', ttlMs: 120_000 });

  // A bind by someone else is unaffected, and so are its heartbeat and its commits.
  const a = await exec.bind({ worktreePath: wt.path, branch: wt.branch, executionSessionId: 'obs-owner-a', runtime: 'codex-cli' });
  expect(a.epoch).toBe(1);
  expect(await exec.heartbeat(a.ownershipId, { executionSessionId: 'obs-owner-a', epoch: a.epoch })).toEqual({ accepted: true });
  const before = git(wt.path, 'rev-parse', 'HEAD');
  expect(commitAs(wt.path, 'obs-owner-a', 'owner.txt')).not.toBe(before);

  // The observer's session holds no tenure: its commit is refused by the hooks, the branch stays where the owner left it.
  const head = git(wt.path, 'rev-parse', 'HEAD');
  await exec.observe({ worktreePath: wt.path, executionSessionId: 'obs-watch-a', ttlMs: 120_000 });
  writeFileSync(path.join(wt.path, 'observer.txt'), 'no\n');
  expect(gitAs(wt.path, 'obs-watch-a', 'add', 'observer.txt')).toBe(0);
  expect(gitAs(wt.path, 'obs-watch-a', 'commit', '-q', '-m', 'observer')).not.toBe(0);
  expect(git(wt.path, 'rev-parse', 'HEAD')).toBe(head);
  // And the service never gives it one: the tenure route refuses the session as any non-owner.
  expect(await codeOf(exec.tenure(a.ownershipId, { executionSessionId: 'obs-watch-a' }))).toBe('not_owner');
  git(wt.path, 'reset', '-q', 'observer.txt');
  unlinkSync(path.join(wt.path, 'observer.txt'));

  // Release, then the other worker binds while both observers are still registered.
  await exec.release(a.ownershipId, { executionSessionId: 'obs-owner-a', epoch: a.epoch });
  const b = await other.bind({ worktreePath: wt.path, branch: wt.branch, executionSessionId: 'obs-owner-b', runtime: 'claude-code' });
  expect(b.owner?.executionSessionId).toBe('obs-owner-b');
  const live = await other.getLive({ worktreePath: wt.path });
  expect(live.owner?.executionSessionId).toBe('obs-owner-b');
  expect(live.observers?.map((o) => o.executionSessionId).sort()).toEqual(['obs-watch-a', 'obs-watch-b']);
  await other.release(b.ownershipId, { executionSessionId: 'obs-owner-b', epoch: b.epoch });
});
