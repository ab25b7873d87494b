import type { Pool } from 'pg';
import { ulid } from 'ulidx';
import { type OverrideRow } from '../contract/history-rows';

/**
 * Recorded overrides (migrations/1700000000013_overrides.sql): who stepped into an owned worktree
 * with its owner's tenure, why, when, in which tenure. Written by the API before it hands out the
 * tenure (src/api/service/tenure.ts), read beside the events by `history`.
 */

export { OverrideRowSchema, type OverrideRow } from '../contract/history-rows';

export interface OverrideInput {
  ownershipId: string;
  epoch: number;
  principal: string;
  reason: string;
}

/** Appends one override and answers it as recorded (committed when this resolves). */
export async function recordOverride(pool: Pool, o: OverrideInput): Promise<OverrideRow> {
  const id = `ovr_${ulid()}`;
  const { rows } = await pool.query<{ at: Date }>(
    'INSERT INTO overrides (id, ownership_id, epoch, principal, reason) VALUES ($1, $2, $3, $4, $5) RETURNING at',
    [id, o.ownershipId, o.epoch, o.principal, o.reason],
  );
  return { overrideId: id, ownershipId: o.ownershipId, epoch: o.epoch, principal: o.principal, reason: o.reason, at: rows[0]!.at.toISOString() };
}

/** The overrides of each ownership, oldest first (at most `limit` each, the latest). */
export async function overridesOf(pool: Pool, ownershipIds: readonly string[], limit = 50): Promise<Map<string, OverrideRow[]>> {
  const out = new Map<string, OverrideRow[]>();
  if (ownershipIds.length === 0) return out;
  const { rows } = await pool.query<{ id: string; ownership_id: string; epoch: number; principal: string; reason: string; at: Date }>(
    `SELECT id, ownership_id, epoch, principal, reason, at FROM (
       SELECT o.*, row_number() OVER (PARTITION BY ownership_id ORDER BY at DESC, id DESC) AS n FROM overrides o WHERE ownership_id = ANY($1)
     ) x WHERE n <= $2 ORDER BY at, id`,
    [ownershipIds, limit],
  );
  for (const r of rows) {
    const row: OverrideRow = {
      overrideId: r.id,
      ownershipId: r.ownership_id,
      epoch: r.epoch,
      principal: r.principal,
      reason: r.reason,
      at: r.at.toISOString(),
    };
    out.set(row.ownershipId, [...(out.get(row.ownershipId) ?? []), row]);
  }
  return out;
}
