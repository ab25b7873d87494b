import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Pool } from 'pg';
import { z } from 'zod';

const UpDown = z.enum(['up', 'down']);
export const HealthReportSchema = z.strictObject({ ok: z.boolean(), temporal: UpDown, postgres: UpDown, worker: UpDown, hostAgent: UpDown });
export type HealthReport = z.infer<typeof HealthReportSchema>;

export interface HealthDeps {
  temporal: Client;
  pool: Pool;
  namespace: string;
  taskQueue: string;
  hostTaskQueue: string;
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
  return { ok: temporalUp === 'up' && postgres === 'up' && worker === 'up', temporal: temporalUp, postgres, worker, hostAgent };
}
