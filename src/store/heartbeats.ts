import type { Pool } from 'pg';

/**
 * Heartbeats of current owners, recorded by the API (one row per ownership, overwritten) instead
 * of a signal each: the workflow reads the row when the owner's lease runs out, so a heartbeat
 * costs its workflow nothing in history until then (migration ownership_heartbeats).
 */
/** Records it; true when it is the first heartbeat of this tenure (session, epoch) the store has seen. */
export async function recordHeartbeat(pool: Pool, ownershipId: string, executionSessionId: string, epoch: number): Promise<boolean> {
  // One statement: `before` sees the row as it was when the statement began.
  const res = await pool.query<{ session: string | null; epoch: number | null }>(
    `WITH before AS (SELECT execution_session_id, epoch FROM ownership_heartbeats WHERE ownership_id = $1),
          written AS (
            INSERT INTO ownership_heartbeats (ownership_id, execution_session_id, epoch, heard_at) VALUES ($1, $2, $3, now())
            ON CONFLICT (ownership_id) DO UPDATE SET execution_session_id = EXCLUDED.execution_session_id, epoch = EXCLUDED.epoch, heard_at = now()
            RETURNING 1)
     SELECT (SELECT execution_session_id FROM before) AS session, (SELECT epoch FROM before) AS epoch FROM written`,
    [ownershipId, executionSessionId, epoch],
  );
  const was = res.rows[0];
  return !was || was.session !== executionSessionId || was.epoch !== epoch;
}

export interface StoredHeartbeat {
  executionSessionId: string;
  epoch: number;
  /** how long ago, by PostgreSQL's clock (no skew between the API's host and the worker's) */
  ageMs: number;
}

export async function readHeartbeat(pool: Pool, ownershipId: string): Promise<StoredHeartbeat | null> {
  const res = await pool.query<{ execution_session_id: string; epoch: number; age_ms: string }>(
    `SELECT execution_session_id, epoch, floor(extract(epoch FROM (now() - heard_at)) * 1000)::bigint AS age_ms FROM ownership_heartbeats WHERE ownership_id = $1`,
    [ownershipId],
  );
  const row = res.rows[0];
  return row ? { executionSessionId: row.execution_session_id, epoch: row.epoch, ageMs: Math.max(0, Number(row.age_ms)) } : null;
}

/** When each ownership's owner was last heard, by tenure (for the live views between lease checks). */
export async function heardOf(pool: Pool, ownershipIds: readonly string[]): Promise<Map<string, { executionSessionId: string; epoch: number; at: string }>> {
  if (ownershipIds.length === 0) return new Map();
  const res = await pool.query<{ ownership_id: string; execution_session_id: string; epoch: number; heard_at: Date }>(
    'SELECT ownership_id, execution_session_id, epoch, heard_at FROM ownership_heartbeats WHERE ownership_id = ANY($1::text[])',
    [ownershipIds],
  );
  return new Map(res.rows.map((r) => [r.ownership_id, { executionSessionId: r.execution_session_id, epoch: r.epoch, at: r.heard_at.toISOString() }]));
}

/** The live view's last heartbeat, made current with the recorded one of the same tenure. */
export function withHeard<L extends { lastHeartbeatAt: string | null }>(
  liveness: L,
  r: { owner: { executionSessionId: string } | null; epoch: number },
  heard: { executionSessionId: string; epoch: number; at: string } | undefined,
): L {
  if (!heard || r.owner?.executionSessionId !== heard.executionSessionId || r.epoch !== heard.epoch) return liveness;
  if (liveness.lastHeartbeatAt !== null && Date.parse(liveness.lastHeartbeatAt) >= Date.parse(heard.at)) return liveness;
  return { ...liveness, lastHeartbeatAt: heard.at };
}
