import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { z } from 'zod';
import { BEACON_STALE_MS } from '../infra/beacon';
import { VERSION_INFO } from '../version';

const UpDown = z.enum(['up', 'down']);
/** `version`: this build and its wire contract (src/version.ts), for clients to check compatibility. */
export const HealthVersionSchema = z.strictObject({ package: z.string(), wire: z.string().regex(/^\d+\.\d+$/) });
export const HealthReportSchema = z.strictObject({ ok: z.boolean(), temporal: UpDown, postgres: UpDown, worker: UpDown, hostAgent: UpDown, version: HealthVersionSchema });
export type HealthReport = z.infer<typeof HealthReportSchema>;

export interface HealthDeps {
  temporal: Client;
  pool: Pool;
  namespace: string;
  taskQueue: string;
  hostTaskQueue: string;
  /** this host's id: whose agent `hostAgent` is about */
  hostId: string;
}

const POLLER_FRESH_MS = 90_000;

/**
 * Healthy only when Temporal answers, PostgreSQL answers and a worker is polling the ownership
 * task queue (and this host's git queue): the same check works with the worker in this process
 * or anywhere else.
 */
export async function checkHealth(deps: HealthDeps): Promise<HealthReport> {
  const withTimeout = <T>(p: Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, rej) => {
      timer = setTimeout(() => rej(new Error('timeout')), 3_000);
    });
    return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
  };
  const pg = withTimeout(deps.pool.query('SELECT 1')).then(
    () => 'up' as const,
    () => 'down' as const,
  );
  // Loaded here, not at the top: the schema above is exported to clients that never load Temporal.
  const { temporal } = require('@temporalio/proto') as typeof import('@temporalio/proto');
  const pollers = async (name: string): Promise<'up' | 'down'> => {
    const res = await withTimeout(
      deps.temporal.workflowService.describeTaskQueue({
        namespace: deps.namespace,
        taskQueue: { name, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        taskQueueType: name === deps.taskQueue ? temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW : temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
      }),
    );
    const now = Date.now();
    const fresh = (res.pollers ?? []).some((p) => {
      const t = p.lastAccessTime;
      const ms = t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0;
      return now - ms < POLLER_FRESH_MS;
    });
    return fresh ? 'up' : 'down';
  };
  let temporalUp: 'up' | 'down' = 'down';
  let worker: 'up' | 'down' = 'down';
  let hostAgent: 'up' | 'down' = 'down';
  try {
    worker = await pollers(deps.taskQueue);
    temporalUp = 'up';
    hostAgent = await pollers(deps.hostTaskQueue);
  } catch {
    /* reported as down */
  }
  const postgres = await pg;
  if (postgres === 'up') {
    // A poller stays listed long after its process died: a beacon that went quiet says it did.
    const b = await withTimeout(beacons(deps)).catch(() => null);
    if (b?.workerKnown && !b.workerFresh) worker = 'down';
    if (b?.hostKnown && !b.hostFresh) hostAgent = 'down';
  }
  return { ok: temporalUp === 'up' && postgres === 'up' && worker === 'up', temporal: temporalUp, postgres, worker, hostAgent, version: { ...VERSION_INFO } };
}

/** What the worker processes' beacons (src/infra/beacon.ts) say of this task queue and this host. */
async function beacons(deps: HealthDeps): Promise<{ workerKnown: boolean; workerFresh: boolean; hostKnown: boolean; hostFresh: boolean }> {
  const res = await deps.pool.query<{ worker_known: boolean | null; worker_fresh: boolean | null; host_known: boolean | null; host_fresh: boolean | null }>(
    `SELECT bool_or(task_queue = $1 AND serves_workflows) AS worker_known,
            bool_or(task_queue = $1 AND serves_workflows AND beat_at > now() - make_interval(secs => $3)) AS worker_fresh,
            bool_or(host_id = $2) AS host_known,
            bool_or(host_id = $2 AND beat_at > now() - make_interval(secs => $3)) AS host_fresh
       FROM worker_beacons
      WHERE (task_queue = $1 OR host_id = $2) AND beat_at > now() - interval '1 hour'`,
    [deps.taskQueue, deps.hostId, BEACON_STALE_MS / 1000],
  );
  const r = res.rows[0];
  return { workerKnown: r?.worker_known === true, workerFresh: r?.worker_fresh === true, hostKnown: r?.host_known === true, hostFresh: r?.host_fresh === true };
}
