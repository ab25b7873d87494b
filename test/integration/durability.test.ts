import { rmSync } from 'node:fs';
import path from 'node:path';
import type { temporal } from '@temporalio/proto';
import lockfile from 'proper-lockfile';
import type { OwnershipViewOut } from '../../src/contract/http';
import { WRITER_LOCK_DIR } from '../../src/git/writer-lock';
import { readEvents } from '../../src/store/event-store';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { executorPrincipal, startHarness } from '../support/harness';

/**
 * Nothing wedges: a worktree deleted behind the service's back, or input a later store could not
 * hold, gets an answer and leaves the ownership taking the next message. Real stack.
 */

let s: ApiStack;
let repo: RepoFixture;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(3);
});
afterAll(async () => s?.stop());

/** What a client honouring Retry-After does with an update that met a run's drain (`unavailable`). */
async function retrying<T>(call: () => Promise<T>, onRetry: () => void = () => undefined): Promise<T> {
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if ((err as { code?: string }).code !== 'unavailable') throw err;
      onRetry();
      await new Promise((res) => setTimeout(res, 20));
    }
  }
}

type Res = { status: number; body: unknown };
const expectError = (r: Res, status: number, code: string) => expect({ status: r.status, code: (r.body as { code?: string }).code }).toEqual({ status, code });
const post = (id: string, what: string, token: string, body: unknown) => s.raw('POST', `/v1/ownerships/${id}/${what}`, { token, body });

test('a reclaim of a worktree deleted without a worktree-removed message completes and records that no WIP could be kept', async () => {
  const wt = repo.worktrees[0]!;
  const bound = await s.raw('POST', '/v1/bind', {
    token: s.tokens.executor,
    body: { worktreePath: wt.path, branch: wt.branch, executionSessionId: 'gone-a', runtime: 'codex-cli' },
  });
  expect(bound.status).toBe(200);
  const id = (bound.body as OwnershipViewOut).ownershipId;
  rmSync(wt.path, { recursive: true, force: true });
  const started = Date.now();
  const reclaimed = await post(id, 'reclaim', s.tokens.admin, {
    executionSessionId: 'gone-b',
    runtime: 'codex-cli',
    force: true,
    reason: 'worktree deleted',
    worker: { workerId: s.workerId },
  });
  expect(reclaimed.status).toBe(200);
  expect(Date.now() - started).toBeLessThan(30_000);
  const view = reclaimed.body as OwnershipViewOut;
  expect(view).toMatchObject({ state: 'active', epoch: 2, owner: { executionSessionId: 'gone-b' } });
  expect(view.wipNotPreserved).toMatchObject({ reason: 'worktree_missing', executionSessionId: 'gone-a' });
  const types = (await readEvents(s.h.pool, id)).map((e) => e.type);
  expect(types.slice(-2)).toEqual(['ownership.wip_not_preserved', 'ownership.reclaimed']);
  // ...and the ownership takes the next message.
  expect((await post(id, 'heartbeat', s.tokens.executor, { executionSessionId: 'gone-b', epoch: 2 })).status).toBe(202);
  expect((await post(id, 'release', s.tokens.executor, { executionSessionId: 'gone-b', epoch: 2 })).status).toBe(200);
});

test('input no store can hold is refused at the edge and the ownership stays usable', async () => {
  const wt = repo.worktrees[1]!;
  const body = { worktreePath: wt.path, branch: wt.branch, executionSessionId: 'edge-a', runtime: 'codex-cli' };
  expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: { ...body, lane: 'nul\u0000here' } }), 400, 'invalid_input');
  expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: { ...body, lane: 'line\nbreak' } }), 400, 'invalid_input');
  expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: { ...body, planRef: 'x\ud800' } }), 400, 'invalid_input');
  const rows = await s.h.pool.query('SELECT count(*)::int AS n FROM ownerships WHERE worktree_path = $1', [wt.path]);
  expect(rows.rows[0].n).toBe(0);
  const ok = await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body });
  expect(ok.status).toBe(200);
  const id = (ok.body as OwnershipViewOut).ownershipId;
  expectError(await post(id, 'plan', s.tokens.executor, { executionSessionId: 'edge-a', epoch: 1, lane: 'tab\there' }), 400, 'invalid_input');
  expectError(await post(id, 'release', s.tokens.executor, { executionSessionId: 'edge-a', epoch: 1, reason: 'a\u0000' }), 400, 'invalid_input');
  expectError(
    await post(id, 'rename-branch', s.tokens.executor, { executionSessionId: 'edge-a', epoch: 1, from: wt.branch, to: 'bad\u0000name' }),
    400,
    'invalid_input',
  );
  const planned = await post(id, 'plan', s.tokens.executor, { executionSessionId: 'edge-a', epoch: 1, lane: 'fine' });
  expect(planned.status).toBe(200);
  expect((await readEvents(s.h.pool, id)).map((e) => e.type)).toEqual(['ownership.claimed', 'ownership.plan_bound']);
});

test('a burst of 500 heartbeats to one ownership costs it one signal and does not hold back continue-as-new', async () => {
  const h = await startHarness({ settings: { maxHistoryEvents: 40 } });
  try {
    const r = makeRepo(1);
    const wt = r.worktrees[0]!;
    const p = executorPrincipal('burst-w');
    const ref = { worktreePath: wt.path };
    await h.client.bind({
      worktreePath: wt.path,
      branch: wt.branch,
      executionSessionId: 'burst-a',
      runtime: 'codex-cli',
      worker: { workerId: 'burst-w', runId: null },
      principal: p,
    });
    const workflowId = await h.client.workflowIdOf(ref);
    const firstRun = (await h.temporal.workflow.getHandle(workflowId).describe()).runId;
    for (let round = 0; round < 6; round++) {
      await Promise.all(Array.from({ length: 500 }, () => h.client.heartbeat(ref, { executionSessionId: 'burst-a', epoch: 1 })));
      await retrying(() => h.client.bindPlan(ref, { executionSessionId: 'burst-a', epoch: 1, principal: p, lane: `round-${round}` }));
    }
    const runs: string[] = [];
    for await (const wf of h.temporal.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(wf.runId);
    expect(runs.length).toBeGreaterThan(1);
    // The first run continued as new soon after its history passed the threshold: no backlog of signals kept it.
    // Past it come the plan's own task, the configuration's read and the drain's wait for the worktree's
    // projection, which a heartbeat arriving meanwhile does not cut short (its task, the wait's timer
    // re-armed): some 35 events, not one per heartbeat.
    const first = await h.temporal.workflow.getHandle(workflowId, firstRun).fetchHistory();
    expect(first.events!.length).toBeLessThan(40 + 45);
    // The task that saw the threshold passed may still accept an update (its validator ran first);
    // after it, none: the run refuses new ones (retry shortly) until the next run takes them.
    const events = first.events!;
    const sawThreshold = Number(events.find((e) => e.workflowTaskStartedEventAttributes && Number(e.eventId) > 40)!.eventId);
    const acceptedAfter = events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes && Number(e.eventId) > sawThreshold);
    expect(acceptedAfter.length).toBeLessThanOrEqual(1);
    const signals = first.events!.filter((e) => e.workflowExecutionSignaledEventAttributes).length;
    expect(signals).toBeLessThanOrEqual(6);
    const v = await h.client.projection(ref);
    expect(v).toMatchObject({ epoch: 1, lane: 'round-5', owner: { executionSessionId: 'burst-a' } });
  } finally {
    await h.shutdown();
  }
});

test('a signal during the drain before continue-as-new does not cut its wait for the projection short: the run goes on once the worktree has it, and no workflow task fails', async () => {
  // The claim and one plan end a run (two updates); its drain then waits for the worktree's projection.
  const projectionWaitMs = 300_000;
  const h = await startHarness({ settings: { maxUpdatesPerRun: 2, projectionWaitMs } });
  let unlock: (() => Promise<void>) | null = null;
  try {
    const r = makeRepo(1);
    const wt = r.worktrees[0]!;
    const p = executorPrincipal('drain-w');
    const ref = { worktreePath: wt.path };
    await h.client.bind({
      worktreePath: wt.path,
      branch: wt.branch,
      executionSessionId: 'drain-a',
      runtime: 'codex-cli',
      worker: { workerId: 'drain-w', runId: null },
      principal: p,
    });
    const workflowId = await h.client.workflowIdOf(ref);
    const run = h.temporal.workflow.getHandle(workflowId, (await h.temporal.workflow.getHandle(workflowId).describe()).runId);
    type Event = temporal.api.history.v1.IHistoryEvent;
    const historyUntil = async (what: string, pred: (events: Event[]) => boolean): Promise<Event[]> => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const events = (await run.fetchHistory()).events ?? [];
        if (pred(events)) return events;
        if (Date.now() > deadline) throw new Error(`the first run's history never showed ${what}`);
        await new Promise((res) => setTimeout(res, 100));
      }
    };

    // Another writer holds the worktree: the plan's projection cannot be written meanwhile.
    const lockPath = path.join(r.repoRoot, '.git', 'worktrees', path.basename(wt.path), WRITER_LOCK_DIR);
    unlock = await lockfile.lock(lockPath, { lockfilePath: lockPath, realpath: false, stale: 5_000 });
    await h.client.bindPlan(ref, { executionSessionId: 'drain-a', epoch: 1, principal: p, lane: 'drain' });
    const drainWaits = (e: Event) => Number(String(e.timerStartedEventAttributes?.startToFireTimeout?.seconds ?? 0)) * 1000 === projectionWaitMs;
    await historyUntil('the drain waiting for the projection', (events) => events.some(drainWaits));

    await h.client.heartbeat(ref, { executionSessionId: 'drain-a', epoch: 1 });
    const handled = await historyUntil('the heartbeat handled', (events) => {
      const at = events.findIndex((e) => e.workflowExecutionSignaledEventAttributes);
      return at >= 0 && events.slice(at).some((e) => e.workflowTaskCompletedEventAttributes || e.workflowTaskFailedEventAttributes);
    });
    // A heartbeat that cut the drain's wait short would continue as new in its task, the plan not written.
    expect(handled.some((e) => e.workflowExecutionContinuedAsNewEventAttributes)).toBe(false);

    await unlock();
    unlock = null;
    const ended = await historyUntil('continue-as-new', (events) => events.some((e) => e.workflowExecutionContinuedAsNewEventAttributes));
    expect(ended.filter((e) => e.workflowTaskFailedEventAttributes).map((e) => e.workflowTaskFailedEventAttributes!.cause)).toEqual([]);
    // Every projection the run asked the host for was written before it continued as new.
    const completed = new Set(ended.map((e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? '')));
    const projections = ended.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'applyLocalProjection');
    // The bind's log write projected the worktree itself; the plan's, held off by the lock, is the host agent's.
    expect(projections.length).toBeGreaterThanOrEqual(1);
    expect(projections.filter((e) => !completed.has(String(e.eventId))).map((e) => String(e.eventId))).toEqual([]);
    expect(await h.client.projection(ref)).toMatchObject({ lane: 'drain', projection: 'applied' });
  } finally {
    await unlock?.().catch(() => undefined);
    await h.shutdown();
  }
});

test('200 concurrent binds on 10 worktrees over HTTP: no 5xx but 503 with Retry-After, one owner each, and every 200 names its own caller', async () => {
  const r = makeRepo(10);
  const tokens = [s.tokens.executor, s.tokens.otherExecutor];
  const calls = Array.from({ length: 200 }, (_, i) => {
    const wt = r.worktrees[i % 10]!;
    const session = `conc-${i % 7}`;
    return s
      .raw('POST', '/v1/bind', { token: tokens[i % 2]!, body: { worktreePath: wt.path, branch: wt.branch, executionSessionId: session, runtime: 'codex-cli' } })
      .then((res) => ({ res, session, worker: i % 2 === 0 ? s.workerId : s.otherWorkerId, wt: wt.path }));
  });
  const results = await Promise.all(calls);
  for (const { res, session, worker } of results) {
    if (res.status === 503) expect(res.headers.get('retry-after')).toBeTruthy();
    else if (res.status >= 500) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
    if (res.status === 200) expect((res.body as OwnershipViewOut).owner).toMatchObject({ executionSessionId: session, worker: { workerId: worker } });
    else if (res.status !== 503) expect((res.body as { code: string }).code).toBe('worktree_owned');
  }
  for (const wt of r.worktrees) {
    const live = await s.h.pool.query(`SELECT owner_session_id, owner_worker_id, epoch FROM ownerships WHERE worktree_path = $1`, [wt.path]);
    expect(live.rows).toHaveLength(1);
    expect(live.rows[0].epoch).toBe(1);
    const winners = results.filter((x) => x.wt === wt.path && x.res.status === 200);
    expect(winners.length).toBeGreaterThan(0);
    for (const w of winners) expect({ s: w.session, w: w.worker }).toEqual({ s: live.rows[0].owner_session_id, w: live.rows[0].owner_worker_id });
  }
});

test('a steady stream of updates does not hold continue-as-new off: updates during the drain are told to retry, and the next run takes them', async () => {
  const h = await startHarness({ settings: { maxHistoryEvents: 60 } });
  try {
    const r = makeRepo(1);
    const wt = r.worktrees[0]!;
    const p = executorPrincipal('stream-w');
    const ref = { worktreePath: wt.path };
    await h.client.bind({
      worktreePath: wt.path,
      branch: wt.branch,
      executionSessionId: 'stream-a',
      runtime: 'codex-cli',
      worker: { workerId: 'stream-w', runId: null },
      principal: p,
    });
    const workflowId = await h.client.workflowIdOf(ref);
    let retried = 0;
    const stream = async (k: number) => {
      for (let i = 0; i < 25; i++) {
        await retrying(
          () => h.client.bindPlan(ref, { executionSessionId: 'stream-a', epoch: 1, principal: p, lane: `s${k}-${i}` }),
          () => retried++,
        );
      }
    };
    await Promise.all([0, 1, 2, 3].map(stream));
    const runs: string[] = [];
    for await (const wf of h.temporal.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(wf.runId);
    expect({ continuedAsNew: runs.length > 1, updatesToldToRetry: retried }).toMatchObject({ continuedAsNew: true });
    for (const runId of runs) {
      const history = await h.temporal.workflow.getHandle(workflowId, runId).fetchHistory();
      expect(history.events!.length).toBeLessThan(60 + 120);
    }
    const v = await h.client.projection(ref);
    expect(v?.owner?.executionSessionId).toBe('stream-a');
  } finally {
    await h.shutdown();
  }
}, 180_000);
