import path from 'node:path';
import lockfile from 'proper-lockfile';
import type { temporal } from '@temporalio/proto';
import { readProjection } from '../../src/git/projection';
import { WRITER_LOCK_DIR } from '../../src/git/writer-lock';
import { makeRepo } from '../support/git-fixture';
import { executorPrincipal as executor, startHarness, type Harness, waitForView } from '../support/harness';

/**
 * The log write's shortcut (src/activities createLocalProjector): a worker that is also the agent
 * of the worktree's host writes the record it made durable into the worktree before it answers.
 * What a caller and the Temporal UI see: the answer says `applied` and the worktree already holds
 * it; the run ran one local activity for the change (the log write), no projection on the host
 * queue. When the write cannot project cleanly (here another writer holds the worktree's lock
 * past the shortcut's short wait), the answer still comes, and the host agent's projection activity
 * writes the record once the lock is free. Real Temporal, PostgreSQL and git.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.shutdown());

const WORKER = { runId: null, workerId: 'lw' };
type Event = temporal.api.history.v1.IHistoryEvent;
const activitiesOf = (events: Event[]): string[] =>
  events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter((n): n is string => typeof n === 'string');
/** The local activities the run recorded (Core's markers name each one's type in their data). */
const localActivitiesOf = (events: Event[]): string[] =>
  events.flatMap((e) => {
    const m = e.markerRecordedEventAttributes;
    const data = m?.markerName === 'core_local_activity' ? m.details?.data?.payloads?.[0]?.data : undefined;
    return data ? [(JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type: string }).activity_type] : [];
  });

test('a claim and an owner change on this host are projected by their log writes: answered applied, the worktree holding them, no projection activity', async () => {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0]!;
  const ref = { repoRoot: repo.repoRoot, worktreePath: wt.path };
  const bound = await h.client.bind(
    {
      repoRoot: repo.repoRoot,
      worktreePath: wt.path,
      branch: wt.branch,
      executionSessionId: 'lw-1',
      runtime: 'codex-cli',
      worker: WORKER,
      principal: executor('lw'),
    },
    { enforcementWaitMs: 0 },
  );
  // No wait for the projection was allowed, and none was needed: the answer carries it.
  expect({ projection: bound.projection, localSeq: bound.projectionSync.localSeq }).toEqual({ projection: 'applied', localSeq: bound.seq });
  expect(await readProjection(wt.path)).toMatchObject({ executionSessionId: 'lw-1', epoch: 1, ownershipId: bound.ownershipId });

  const released = await h.client.release(ref, { executionSessionId: 'lw-1', epoch: 1, principal: executor('lw') }, { enforcementWaitMs: 0 });
  expect(released.projection).toBe('applied');
  expect(await readProjection(wt.path)).toMatchObject({ state: 'released' });

  const history = await h.temporal.workflow.getHandle(await h.client.workflowIdOf(ref)).fetchHistory();
  const scheduled = activitiesOf(history.events ?? []);
  expect(scheduled).not.toContain('applyLocalProjection');
  expect(scheduled).not.toContain('persistEvents');
  expect(localActivitiesOf(history.events ?? []).filter((n) => n === 'persistEvents').length).toBeGreaterThanOrEqual(2);
}, 60_000);

test("a log write that cannot project in time answers anyway, and a plan is not projected on the answer's path: the host agent writes both after", async () => {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0]!;
  const ref = { repoRoot: repo.repoRoot, worktreePath: wt.path };
  const bound = await h.client.bind({
    repoRoot: repo.repoRoot,
    worktreePath: wt.path,
    branch: wt.branch,
    executionSessionId: 'lw-2',
    runtime: 'codex-cli',
    worker: WORKER,
    principal: executor('lw'),
  });
  expect(bound.projection).toBe('applied');

  const lockPath = path.join(repo.repoRoot, '.git', 'worktrees', path.basename(wt.path), WRITER_LOCK_DIR);
  const unlock = await lockfile.lock(lockPath, { lockfilePath: lockPath, realpath: false, stale: 5_000 });
  let submitted;
  const t0 = Date.now();
  try {
    submitted = await h.client.submit(ref, { executionSessionId: 'lw-2', epoch: 1, principal: executor('lw') }, { enforcementWaitMs: 0 });
  } finally {
    setTimeout(() => void unlock().catch(() => undefined), 1_500);
  }
  // Durable and answered, though the worktree could not take it yet, and not held for the lock:
  // the shortcut gives up within about a second (a bound, not a speed figure: the lock is held
  // until the answer, so a write that waited for it would answer only after the writer lock's own
  // 12 s wait, or never).
  expect({ state: submitted.state, projection: submitted.projection }).toEqual({ state: 'submitted', projection: 'pending' });
  expect(Date.now() - t0).toBeLessThan(8_000);

  const applied = await waitForView(h.client, ref, (v) => v.projectionSync.localSeq >= submitted.seq && v.projectionSync.error === null, 60_000);
  expect(applied.projection).toBe('applied');
  expect(await readProjection(wt.path)).toMatchObject({ state: 'submitted' });

  // A plan changes nothing the hooks enforce: its log write answers without projecting, and the host agent writes it after.
  const planned = await h.client.bindPlan(ref, { executionSessionId: 'lw-2', epoch: 1, principal: executor('lw'), lane: 'off-the-path' });
  expect(planned.projection).toBe('pending');
  await waitForView(h.client, ref, (v) => v.projectionSync.localSeq >= planned.seq, 60_000);
  expect(await readProjection(wt.path)).toMatchObject({ lane: 'off-the-path' });
  const history = await h.temporal.workflow.getHandle(await h.client.workflowIdOf(ref)).fetchHistory();
  // The submit's and the plan's projections are the host agent's activities; the claim's was its log write's.
  expect(activitiesOf(history.events ?? []).filter((n) => n === 'applyLocalProjection')).toHaveLength(2);
}, 90_000);
