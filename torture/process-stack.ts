import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { Cleanup } from '../stack/cleanup';
import { writeWorkflowBundle } from '../stack/bundle';
import { FaultStack } from '../faults/stack';
import { dataConverterOf } from '../src/infra/payload-codec';
import type { DataConverter } from '@temporalio/common';
import type { Disturbance } from './runner';
import { Rng } from '../chaos/rng';
import type { Target } from './target';

/**
 * --stack processes: the torture run against faults/stack.ts's FaultStack, the real stack as
 * separate processes (Temporal dev server on SQLite, embedded PostgreSQL, `tsx worker.ts`,
 * `tsx worker.ts --host-agent`, `tsx src/server/main.ts` with a principals file), so a worker can
 * be killed for real (WorkerKiller). The torture process holds only what the checker reads with:
 * the stack's pool, a Temporal client of its own, and a workflow bundle built here from the same
 * sources the worker process bundles at its start (the replay check).
 */
export interface ProcessStack {
  stack: FaultStack;
  target: Omit<Target, 'baseDir'>;
  /** the run's repositories go here (under the processes' OD_ALLOWED_ROOTS) */
  baseDir: string;
  temporal: Client;
  bundlePath: string;
  /** the stack's data converter (its processes' service key) */
  dataConverter: DataConverter;
}

/** The torture run's settings, as the in-process stack's client has them (scripts/torture.ts). */
export const TORTURE_STACK_SETTINGS = { leaseTtlMs: 60 * 60_000, heartbeatLogIntervalMs: 2_000, handoffTimeoutMs: 5_000 };

export async function startProcessStack(cleanup: Cleanup, log: (line: string) => void, opts: { executors: number; logDir: string }): Promise<ProcessStack> {
  const t0 = Date.now();
  // Only the replayer runs workers in this process: the SDK's lines at WARN, and no signal handlers
  // of its own (the run's cleanup stops the stack's processes on SIGINT/SIGTERM).
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    shutdownSignals: [],
    telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } },
  });
  const stack = new FaultStack(cleanup, log, { executors: opts.executors, keep: false, settings: TORTURE_STACK_SETTINGS, logDir: opts.logDir });
  cleanup.add('stop the stack (API, host agent, worker, Temporal, PostgreSQL)', () => stack.stopAll(), 60_000);
  // The checker's replay bundle, and the one the worker process loads at its start: the same sources' bundle in the cache.
  const bundlePath = (await writeWorkflowBundle(log)).path;
  await stack.start();
  const connection = await Connection.connect({ address: stack.temporalAddress });
  cleanup.add('close the checker Temporal connection', () => connection.close());
  const dataConverter = dataConverterOf({ payloadKeyFile: '', serviceKeyFile: stack.serviceKeyFile(), dataDir: stack.root });
  const temporal = new Client({ connection, namespace: 'default', dataConverter });
  log(`process stack ready in ${Date.now() - t0} ms (task queue ${stack.taskQueue}; process logs in ${opts.logDir}; replay bundle ${bundlePath})`);
  return {
    stack,
    target: {
      url: stack.url,
      pool: stack.pool,
      hostId: stack.hostId,
      admin: stack.tokens.admin,
      landing: stack.tokens.landing,
      reader: stack.tokens.reader,
      executors: stack.tokens.executors,
    },
    baseDir: path.join(stack.repoDir, 'torture'),
    temporal,
    bundlePath,
    dataConverter,
  };
}

interface Poller {
  identity: string;
  at: number;
}

/** The pollers of the stack's workflow task queue (identity, last poll) as the server lists them. */
async function workflowPollers(client: Client, taskQueue: string): Promise<Poller[]> {
  const res = await client.workflowService.describeTaskQueue({
    namespace: 'default',
    taskQueue: { name: taskQueue, kind: proto.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return (res.pollers ?? []).map((p) => ({
    identity: p.identity ?? '',
    at: p.lastAccessTime ? Number(p.lastAccessTime.seconds ?? 0) * 1000 + Math.floor((p.lastAccessTime.nanos ?? 0) / 1e6) : 0,
  }));
}

/**
 * The SDK's stickyQueueScheduleToStartTimeout (createWorkers leaves the default): a workflow the
 * killed worker had cached gets its next task on that worker's sticky queue, which Temporal moves
 * to the normal queue only after this, whenever the new worker starts polling.
 */
export const STICKY_SCHEDULE_TO_START_MS = 10_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * --kill-worker: in every burst round, once a seeded share (20-40 %) of the round's intents have
 * been answered, the workflow worker process (`tsx worker.ts`; not the host agent) gets SIGKILL
 * (its whole process group: tsx and its node child), and is started again at once. Nothing drains:
 * its in-flight activations and activities vanish, its sticky queue is left to time out, and the
 * new process bundles the workflows afresh and replays every workflow it is given from history.
 * One line per kill: how long until the new process said it runs, and until Temporal lists a
 * poll of its (a workflow poller of an identity not seen before the kill).
 */
export class WorkerKiller implements Disturbance {
  readonly name = 'kill-worker';
  kills = 0;
  /** kill -> the new worker polling, and at least the sticky queue's timeout after the kill */
  private readonly down: { from: number; to: number }[] = [];
  private stopped = false;
  /** between the kill and the new process's ready line */
  private restarting = false;
  private inFlight: Promise<unknown> | null = null;

  constructor(
    private readonly deps: {
      stack: FaultStack;
      temporal: Client;
      seed: number;
      log: (line: string) => void;
      /** how long to wait for the new worker's first poll */
      pollTimeoutMs?: number;
    },
  ) {}

  at(round: number): { share: number; afterMs: number | null } {
    const share = 0.2 + 0.2 * new Rng(this.deps.seed).fork(7_000 + round).next();
    return { share: Math.round(share * 100) / 100, afterMs: null };
  }

  run(round: number): Promise<string> {
    const p = this.killAndRestart(round);
    this.inFlight = p.catch(() => undefined);
    return p;
  }

  private async killAndRestart(round: number): Promise<string> {
    const { stack, temporal, log } = this.deps;
    if (this.stopped) return 'kill-worker skipped: the run is stopping';
    const w = stack.worker;
    const before = await workflowPollers(temporal, stack.taskQueue).catch(() => [] as Poller[]);
    const seen = new Set(before.map((p) => p.identity));
    const oldPid = w.pid;
    const t0 = Date.now();
    this.restarting = true;
    let tKilled: number;
    try {
      await w.kill9();
      tKilled = Date.now();
      this.kills++;
      if (this.stopped) return `worker pid ${oldPid} SIGKILLed; not restarted (the run is stopping)`;
      await w.start();
    } finally {
      this.restarting = false;
    }
    const tReady = Date.now();
    const newPid = w.pid;
    const deadline = Date.now() + (this.deps.pollTimeoutMs ?? 120_000);
    let polled: Poller | undefined;
    while (!this.stopped && Date.now() < deadline) {
      const now = await workflowPollers(temporal, stack.taskQueue).catch(() => [] as Poller[]);
      polled = now.find((p) => !seen.has(p.identity) && p.at >= tKilled - 1_000);
      if (polled) break;
      await sleep(100);
    }
    const tPoll = Date.now();
    this.down.push({ from: t0, to: Math.max(polled ? tPoll : deadline, tKilled + STICKY_SCHEDULE_TO_START_MS) });
    const line =
      `kill-worker round ${round}: SIGKILL of worker pid ${oldPid} (gone after ${tKilled - t0} ms); new worker pid ${newPid} running after ${sec(tReady - t0)}, ` +
      (polled ? `polling after ${sec(tPoll - t0)} (${polled.identity})` : `NOT polling within ${sec(tPoll - t0)}`);
    log(line);
    return polled ? `worker SIGKILLed, new one polling after ${sec(tPoll - t0)}` : `worker SIGKILLed, new one NOT polling after ${sec(tPoll - t0)}`;
  }

  outages(): readonly { from: number; to: number }[] {
    return this.down;
  }

  /** No further kills; a restart under way is cut short (the stack's stop takes the process). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restarting) this.deps.stack.worker.signal('SIGKILL');
    await this.inFlight;
  }
}
