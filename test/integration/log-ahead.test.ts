import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { noAuthority } from '../../src/activities/liveness';
import type { OwnershipEvent } from '../../src/domain/events';
import { applyEvent, type OwnershipRecord } from '../../src/domain/projection';
import { createWorkers } from '../../src/infra/workers';
import { readEvents } from '../../src/store/event-store';
import { makeRepo } from '../support/git-fixture';
import { executorPrincipal as executor, startHarness, type Harness } from '../support/harness';

/**
 * The log write is a local activity: its result reaches history only with the workflow task that
 * ran it. Here a real worker process writes an owner's bindPlan to PostgreSQL and is SIGKILLed
 * before its task completes (test/support/killed-after-write.ts): the log is ahead of the run. The
 * task times out, a new worker runs it again on the record before that write, decides the same
 * message again (another `at`), and finds the log holding the killed worker's event at that seq.
 * It adopts it: the message is answered with the log's event (the killed worker's, byte for byte),
 * the log has one event for it, and the run goes on. Without the adoption the new worker's write
 * is refused forever and the message never answered. Real Temporal, PostgreSQL and git.
 */
let h: Harness;
let killed: ChildProcess | null = null;
let replacement: { workers: Worker[]; running: Promise<unknown>[]; connection: NativeConnection } | null = null;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  killed?.kill('SIGKILL');
  replacement?.workers.forEach((w) => w.getState() === 'RUNNING' && w.shutdown());
  await Promise.allSettled(replacement?.running ?? []);
  await replacement?.connection.close();
  await h?.shutdown();
});

/** The killed worker, polling the harness's queue; resolves with what it wrote once it is dead. */
function startKilledWorker(): { polling: Promise<void>; wrote: Promise<OwnershipEvent[]> } {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, '../support/killed-after-write.ts')], {
    env: { ...process.env, OD_KILLED_TASK_QUEUE: h.taskQueue },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  killed = child;
  let wrote: OwnershipEvent[] | null = null;
  let polling: () => void = () => undefined;
  const lines = readline.createInterface({ input: child.stdout! });
  lines.on('line', (line) => {
    const m = JSON.parse(line) as { polling?: true; wrote?: OwnershipEvent[] };
    if (m.polling) polling();
    if (m.wrote) wrote = m.wrote;
  });
  return {
    polling: new Promise<void>((resolve) => (polling = resolve)),
    wrote: new Promise((resolve, reject) =>
      child.on('exit', (code, signal) =>
        signal === 'SIGKILL' && wrote ? resolve(wrote) : reject(new Error(`the worker ended ${code ?? signal} having written ${JSON.stringify(wrote)}`)),
      ),
    ),
  };
}

test('a worker killed after its log write: the next worker adopts the written event, answers the message with it, and the run goes on', async () => {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0]!;
  const principal = executor('la-worker');
  const bound = await h.client.bind({
    worktreePath: wt.path,
    branch: wt.branch,
    executionSessionId: 'la-owner',
    runtime: 'codex-cli',
    worker: { workerId: 'la-worker', runId: null },
    principal,
  });
  const ref = { worktreePath: wt.path };
  const workflowId = await h.client.workflowIdOf(ref);

  // Only the killed worker runs workflows now (the harness's host agent stays: the projection's).
  const [workflowWorker] = h.workers.initial;
  workflowWorker!.shutdown();
  await new Promise<void>((resolve) => {
    const poll = () => (workflowWorker!.getState() === 'STOPPED' ? resolve() : setTimeout(poll, 50));
    poll();
  });
  const victim = startKilledWorker();
  await victim.polling;
  const answer = h.client.bindPlan(ref, { executionSessionId: 'la-owner', epoch: 1, lane: 'written-then-killed', principal }, { messageId: 'la-plan-1' });
  const wrote = await victim.wrote;
  expect(wrote.map((e) => [e.seq, e.type, e.messageId])).toEqual([[2, 'ownership.plan_bound', 'la-plan-1']]);
  // The log holds it, and the run's history does not: its task died with the worker.
  expect((await readEvents(h.pool, bound.ownershipId)).at(-1)).toEqual(wrote[0]);

  const connection = await NativeConnection.connect({ address: h.workers.temporalAddress });
  const workers = await createWorkers({
    connection,
    namespace: 'default',
    taskQueue: h.taskQueue,
    hostId: h.hostId,
    allowedRoots: h.workers.allowedRoots,
    authority: noAuthority,
    pool: h.pool,
    workflowBundle: { codePath: h.workers.bundlePath },
    dataConverter: h.workers.dataConverter,
  });
  replacement = { workers, running: workers.map((w) => w.run()), connection };

  const answered = await answer;
  const log = await readEvents(h.pool, bound.ownershipId);
  const fold = log.reduce<OwnershipRecord | null>((r, e) => applyEvent(r, e), null)!;
  // One event for the message, the killed worker's; the answer is the log's record, to the instant.
  expect(log.map((e) => [e.seq, e.type])).toEqual([
    [1, 'ownership.claimed'],
    [2, 'ownership.plan_bound'],
  ]);
  expect(log[1]).toEqual(wrote[0]);
  expect({ seq: answered.seq, lane: answered.lane, lastSeenAt: answered.lastSeenAt }).toEqual({
    seq: 2,
    lane: 'written-then-killed',
    lastSeenAt: fold.lastSeenAt,
  });

  const history = await h.temporal.workflow.getHandle(workflowId).fetchHistory();
  expect(history.events!.some((e) => e.workflowTaskTimedOutEventAttributes || e.workflowTaskFailedEventAttributes)).toBe(true);

  // The run goes on: the next message is written after the adopted event.
  const next = await h.client.bindPlan(ref, { executionSessionId: 'la-owner', epoch: 1, lane: 'after', principal });
  expect({ seq: next.seq, lane: next.lane }).toEqual({ seq: 3, lane: 'after' });
  expect((await readEvents(h.pool, bound.ownershipId)).map((e) => e.seq)).toEqual([1, 2, 3]);
}, 120_000);
