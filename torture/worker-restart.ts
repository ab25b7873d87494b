import { NativeConnection, type Worker } from '@temporalio/worker';
import type { Pool } from 'pg';
import type { DataConverter } from '@temporalio/common';
import { noAuthority } from '../src/activities/liveness';
import { createWorkers } from '../src/infra/workers';
import type { Disturbance } from './runner';

export interface RestartDeps {
  temporalAddress: string;
  taskQueue: string;
  hostId: string;
  allowedRoots: string[];
  /** the workers' own pool (bench/stack.ts workerPool) */
  pool: Pool;
  /** the workflow bundle the stack's workers run */
  bundlePath: string;
  /** the workflow cache cap (0: the SDK's default), as the stack's workers have it */
  maxCachedWorkflows: number;
  /** the deployment's data converter (the stack's service key) */
  dataConverter: DataConverter;
  /** the workers running now (bench/stack.ts workers: the workflow worker and the host agent) */
  initial: Worker[];
  log: (line: string) => void;
}

/**
 * --restart-worker: the workflow worker goes away mid-round and a fresh one takes over, so every
 * workflow it had cached is replayed from its history by the new one (while 20 writers per
 * ownership keep sending updates).
 *
 * IN-PROCESS, NOT A PROCESS KILL: bench/stack.ts runs its workers inside the torture process
 * (createWorkers on a NativeConnection), so there is no worker process to SIGKILL. The running pair
 * (workflow worker and host agent, as one worker process runs them) is told to shut down and,
 * without waiting for it to drain, a fresh pair from createWorkers (same task queue, bundle, pool,
 * cache cap, its own connection) starts polling with an empty workflow cache. Unlike a SIGKILL, the
 * old worker's in-flight activations and local activities finish (or fail) instead of vanishing,
 * and its sticky queue is handed back at shutdown rather than left to time out.
 */
export class WorkerRestarter implements Disturbance {
  readonly name = 'restart-worker';
  restarts = 0;
  private current: Worker[];
  private readonly running: Promise<void>[] = [];
  private connection: NativeConnection | null = null;

  constructor(private readonly deps: RestartDeps) {
    this.current = deps.initial;
  }

  async run(round: number): Promise<string> {
    const t0 = Date.now();
    const old = this.current;
    for (const w of old) if (w.getState() === 'RUNNING') w.shutdown();
    this.connection ??= await NativeConnection.connect({ address: this.deps.temporalAddress });
    const fresh = await createWorkers({
      connection: this.connection,
      namespace: 'default',
      taskQueue: this.deps.taskQueue,
      hostId: this.deps.hostId,
      allowedRoots: this.deps.allowedRoots,
      authority: noAuthority,
      pool: this.deps.pool,
      dataConverter: this.deps.dataConverter,
      workflowBundle: { codePath: this.deps.bundlePath },
      identity: `torture-${process.pid}-restart-${round}`,
      ...(this.deps.maxCachedWorkflows > 0 ? { maxCachedWorkflows: this.deps.maxCachedWorkflows } : {}),
    });
    for (const w of fresh) {
      const r = w.run();
      r.catch((err: unknown) => this.deps.log(`restarted worker failed: ${err instanceof Error ? err.message : String(err)}`));
      this.running.push(r);
    }
    this.current = fresh;
    this.restarts++;
    return `workers shut down and replaced in-process (restart ${this.restarts}, ${Date.now() - t0} ms)`;
  }

  /** Stops the workers this restarter started (the stack's own ones are the stack's to stop). */
  async stop(): Promise<void> {
    if (this.restarts === 0) return;
    for (const w of this.current) if (w.getState() === 'RUNNING') w.shutdown();
    await Promise.allSettled(this.running);
    await this.connection?.close();
    this.connection = null;
  }
}
