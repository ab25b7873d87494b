import type { Pool } from './db';
import type { ObserverView } from '../contract/observers';

/**
 * Read-only observers of a worktree (migration worktree-observers): a lease per (host, worktree,
 * session), moved on by each register or heartbeat. Times are PostgreSQL's clock, so the API's
 * host and the observer never disagree about expiry. Expired rows are never answered; they are
 * deleted on the way (each register prunes its worktree's, each listing nothing: a read stays a read).
 */

export interface ObserverWhere {
  hostId: string;
  worktreePath: string;
}

interface Row {
  observer_session_id: string;
  worker_id: string;
  runtime: string;
  registered_at: Date;
  last_seen_at: Date;
  expires_at: Date;
}

const COLUMNS = 'observer_session_id, worker_id, runtime, registered_at, last_seen_at, expires_at';

const viewOf = (r: Row): ObserverView => ({
  executionSessionId: r.observer_session_id,
  workerId: r.worker_id,
  runtime: r.runtime,
  registeredAt: r.registered_at.toISOString(),
  lastSeenAt: r.last_seen_at.toISOString(),
  expiresAt: r.expires_at.toISOString(),
});

/**
 * Register or heartbeat. A live row of the same session under another worker is that worker's:
 * it is left alone and null answered (the caller refuses). An expired one is anyone's: the session
 * registers afresh (registered_at is now again).
 */
export async function observe(
  pool: Pool,
  where: ObserverWhere,
  o: { executionSessionId: string; workerId: string; runtime: string; ttlMs: number },
): Promise<ObserverView | null> {
  await pool.query(`DELETE FROM worktree_observers WHERE host_id = $1 AND worktree_path = $2 AND expires_at <= now()`, [where.hostId, where.worktreePath]);
  const res = await pool.query<Row>(
    `INSERT INTO worktree_observers AS o (host_id, worktree_path, observer_session_id, worker_id, runtime, registered_at, last_seen_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, now(), now(), now() + make_interval(secs => $6))
     ON CONFLICT (host_id, worktree_path, observer_session_id) DO UPDATE
       SET runtime = EXCLUDED.runtime, last_seen_at = now(), expires_at = EXCLUDED.expires_at
       WHERE o.worker_id = EXCLUDED.worker_id
     RETURNING ${COLUMNS}`,
    [where.hostId, where.worktreePath, o.executionSessionId, o.workerId, o.runtime, o.ttlMs / 1000],
  );
  const row = res.rows[0];
  return row ? viewOf(row) : null;
}

/** Leave: true when a live registration was there. `workerId` null (an admin): whoever's it is. */
export async function leave(pool: Pool, where: ObserverWhere, executionSessionId: string, workerId: string | null): Promise<boolean> {
  const res = await pool.query<{ live: boolean }>(
    `DELETE FROM worktree_observers
      WHERE host_id = $1 AND worktree_path = $2 AND observer_session_id = $3 AND ($4::text IS NULL OR worker_id = $4)
      RETURNING expires_at > now() AS live`,
    [where.hostId, where.worktreePath, executionSessionId, workerId],
  );
  return res.rows.some((r) => r.live);
}

/** Whether a live registration of the session is another worker's (leave refuses then, rather than saying nothing was there). */
export async function observedByOther(pool: Pool, where: ObserverWhere, executionSessionId: string, workerId: string): Promise<boolean> {
  const res = await pool.query(
    `SELECT 1 FROM worktree_observers
      WHERE host_id = $1 AND worktree_path = $2 AND observer_session_id = $3 AND worker_id <> $4 AND expires_at > now()`,
    [where.hostId, where.worktreePath, executionSessionId, workerId],
  );
  return (res.rowCount ?? 0) > 0;
}

/** The live observers of a worktree, longest-registered first. */
export async function liveObservers(pool: Pool, where: ObserverWhere): Promise<ObserverView[]> {
  const res = await pool.query<Row>(
    `SELECT ${COLUMNS} FROM worktree_observers
      WHERE host_id = $1 AND worktree_path = $2 AND expires_at > now()
      ORDER BY registered_at, observer_session_id`,
    [where.hostId, where.worktreePath],
  );
  return res.rows.map(viewOf);
}

/** Rows expired for an hour say nothing anyone asks about: pruned by whoever registers, across every worktree. */
export async function pruneObservers(pool: Pool): Promise<void> {
  await pool.query(`DELETE FROM worktree_observers WHERE expires_at < now() - interval '1 hour'`);
}
