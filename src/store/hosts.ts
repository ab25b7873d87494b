import type { Pool } from 'pg';
import { z } from 'zod';
import { ENDED_STATES } from '../domain/states';

/**
 * The hosts the service has seen recently, with how long ago each one's agent beat (for /healthz):
 * every host that holds a lifecycle that has not ended (its worktrees need its agent for every
 * projection write) and every host whose agent beat within the last hour. A host with live
 * ownerships whose agent never beat here has `lastBeatAgoMs: null`.
 */
export const SeenHostSchema = z.strictObject({
  hostId: z.string(),
  /** milliseconds since its newest beacon beat, by PostgreSQL's clock; null: no beacon row (an agent without DATABASE_URL beats none; rows go after a day) */
  lastBeatAgoMs: z.number().int().nonnegative().nullable(),
});
export type SeenHost = z.infer<typeof SeenHostSchema>;

/** The most hosts one answer names: /healthz stays small whatever the table holds (stalest first). */
export const SEEN_HOSTS_LIMIT = 100;

export async function seenHosts(pool: Pool): Promise<SeenHost[]> {
  const res = await pool.query<{ host_id: string; age_ms: string | null }>(
    `WITH seen AS (
       SELECT DISTINCT host_id FROM ownerships WHERE state <> ALL($1::text[])
       UNION
       SELECT host_id FROM worker_beacons WHERE beat_at > now() - interval '1 hour'
     )
     SELECT s.host_id, floor(extract(epoch FROM (now() - max(b.beat_at))) * 1000)::bigint AS age_ms
       FROM seen s LEFT JOIN worker_beacons b ON b.host_id = s.host_id
      GROUP BY s.host_id
      ORDER BY max(b.beat_at) ASC NULLS FIRST, s.host_id
      LIMIT $2`,
    [[...ENDED_STATES], SEEN_HOSTS_LIMIT],
  );
  return res.rows.map((r) => SeenHostSchema.parse({ hostId: r.host_id, lastBeatAgoMs: r.age_ms === null ? null : Math.max(0, Number(r.age_ms)) }));
}

/**
 * How long ago the newest beacon of one host's agent beat, by PostgreSQL's clock; null when no
 * process of that host beat within the last day (what the API asks before it makes a caller wait
 * for that host: src/api/service/host-presence.ts).
 */
export async function hostBeatAgoMs(pool: Pool, hostId: string): Promise<number | null> {
  const res = await pool.query<{ age_ms: string | null }>(
    `SELECT floor(extract(epoch FROM (now() - max(beat_at))) * 1000)::bigint AS age_ms
       FROM worker_beacons WHERE host_id = $1 AND beat_at > now() - interval '1 day'`,
    [hostId],
  );
  const age = res.rows[0]?.age_ms ?? null;
  return age === null ? null : Math.max(0, Number(age));
}
