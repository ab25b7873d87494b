import path from 'node:path';
import { NativeConnection, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import type { Pool } from 'pg';
import { createHostActivities, createStoreActivities } from '../activities';
import { authorityFromConfig, type LivenessAuthority } from '../activities/liveness';
import type { Config } from '../config';
import { hostTaskQueue } from '../domain/queues';

export const WORKFLOWS_PATH = path.resolve(__dirname, '../workflows/index.ts');

export interface WorkerDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  hostId: string;
  allowedRoots: string[];
  authority: LivenessAuthority;
  /** Absent for a host agent: it runs only the git activities of its own host. */
  pool?: Pool;
  /** A prebuilt bundle (tests build one per run); else the workflows are bundled at start. */
  workflowBundle?: WorkflowBundleOption;
  identity?: string;
  /** Cap on cached workflows (0 or absent: the SDK's memory-based default). */
  maxCachedWorkflows?: number;
}

/** The workflow worker (workflows + durable-store local activities) and this host's git agent. */
export async function createWorkers(deps: WorkerDeps): Promise<Worker[]> {
  const workers: Worker[] = [];
  if (deps.pool) {
    workers.push(
      await Worker.create({
        connection: deps.connection,
        namespace: deps.namespace,
        taskQueue: deps.taskQueue,
        ...(deps.workflowBundle ? { workflowBundle: deps.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
        activities: createStoreActivities({ pool: deps.pool }),
        ...(deps.maxCachedWorkflows ? { maxCachedWorkflows: deps.maxCachedWorkflows } : {}),
        ...(deps.identity ? { identity: deps.identity } : {}),
      }),
    );
  }
  workers.push(
    await Worker.create({
      connection: deps.connection,
      namespace: deps.namespace,
      taskQueue: hostTaskQueue(deps.hostId),
      activities: createHostActivities({ allowedRoots: deps.allowedRoots, authority: deps.authority }),
      ...(deps.identity ? { identity: `${deps.identity}/host-agent` } : {}),
    }),
  );
  return workers;
}

/** The workers a deployment runs, from its configuration (worker.ts, npm start). No pool: host agent only. */
export function createWorkersFromConfig(cfg: Config, connection: NativeConnection, pool?: Pool): Promise<Worker[]> {
  return createWorkers({
    connection,
    namespace: cfg.temporalNamespace,
    taskQueue: cfg.taskQueue,
    hostId: cfg.hostId,
    allowedRoots: cfg.allowedRoots,
    authority: authorityFromConfig(cfg),
    pool,
    maxCachedWorkflows: cfg.maxCachedWorkflows,
  });
}
