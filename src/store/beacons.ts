import type { Pool } from './db';

/**
 * The worker processes' beacons (`worker_beacons`): src/infra/beacon.ts beats one per process,
 * /healthz (src/api/service/health.ts) reads them. How old a fresh beacon may be is the caller's rule.
 */

export interface BeaconRow {
  processId: string;
  taskQueue: string;
  hostId: string;
  servesWorkflows: boolean;
  startedAt: string;
}

/** One beat: the row is the process's, its beat_at PostgreSQL's now. */
export async function beatBeacon(pool: Pool, row: BeaconRow): Promise<void> {
  await pool.query(
    `INSERT INTO worker_beacons (process_id, task_queue, host_id, serves_workflows, started_at, beat_at)
     VALUES ($1, $2, $3, $4, $5, now())
     ON CONFLICT (process_id) DO UPDATE SET beat_at = now()`,
    [row.processId, row.taskQueue, row.hostId, row.servesWorkflows, row.startedAt],
  );
}

/** Rows of processes gone for a day say nothing any reader asks about. */
export async function pruneBeacons(pool: Pool): Promise<void> {
  await pool.query(`DELETE FROM worker_beacons WHERE beat_at < now() - interval '1 day'`);
}

export interface BeaconVerdict {
  workerKnown: boolean;
  workerFresh: boolean;
  hostKnown: boolean;
  hostFresh: boolean;
}

/** What the beacons say of a task queue's workflow workers and a host's agent, fresh meaning beaten within staleMs. */
export async function beaconVerdict(pool: Pool, taskQueue: string, hostId: string, staleMs: number): Promise<BeaconVerdict> {
  const res = await pool.query<{ worker_known: boolean | null; worker_fresh: boolean | null; host_known: boolean | null; host_fresh: boolean | null }>(
    `SELECT bool_or(task_queue = $1 AND serves_workflows) AS worker_known,
            bool_or(task_queue = $1 AND serves_workflows AND beat_at > now() - make_interval(secs => $3)) AS worker_fresh,
            bool_or(host_id = $2) AS host_known,
            bool_or(host_id = $2 AND beat_at > now() - make_interval(secs => $3)) AS host_fresh
       FROM worker_beacons
      WHERE (task_queue = $1 OR host_id = $2) AND beat_at > now() - interval '1 hour'`,
    [taskQueue, hostId, staleMs / 1000],
  );
  const r = res.rows[0];
  return { workerKnown: r?.worker_known === true, workerFresh: r?.worker_fresh === true, hostKnown: r?.host_known === true, hostFresh: r?.host_fresh === true };
}

/** PostgreSQL answers at all. */
export async function pingDatabase(pool: Pool): Promise<void> {
  await pool.query('SELECT 1');
}
