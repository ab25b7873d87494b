import type { LandingReceipt } from '../domain/events';
import { LandingReceiptSchema } from '../domain/events';
import type { Pool } from './db';

/** The columns of an ownership's row the API's writes check before they reach a workflow. */
export interface OwnershipRow {
  workflowId: string;
  state: string;
  ownerWorkerId: string | null;
  /** the run the owner's worker acts in (the record's worker.runId), null when none was recorded */
  ownerRunId: string | null;
  ownerSessionId: string | null;
  epoch: number;
  seq: number;
  hostId: string;
}

/** null: no such ownership. */
export async function ownershipRowById(pool: Pool, ownershipId: string): Promise<OwnershipRow | null> {
  const res = await pool.query<{
    workflow_id: string;
    state: string;
    owner_worker_id: string | null;
    owner_run_id: string | null;
    owner_session_id: string | null;
    epoch: number;
    seq: number;
    host_id: string;
  }>(
    "SELECT workflow_id, state, owner_worker_id, record->'worker'->>'runId' AS owner_run_id, owner_session_id, epoch, seq, host_id FROM ownerships WHERE ownership_id = $1",
    [ownershipId],
  );
  const row = res.rows[0];
  if (!row) return null;
  return {
    workflowId: row.workflow_id,
    state: row.state,
    ownerWorkerId: row.owner_worker_id,
    ownerRunId: row.owner_run_id,
    ownerSessionId: row.owner_session_id,
    epoch: row.epoch,
    seq: row.seq,
    hostId: row.host_id,
  };
}

/** Each known ownership's workflow id; unknown ids are absent from the map. */
export async function workflowIdsOf(pool: Pool, ownershipIds: readonly string[]): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  if (ownershipIds.length === 0) return ids;
  const res = await pool.query<{ ownership_id: string; workflow_id: string }>(
    'SELECT ownership_id, workflow_id FROM ownerships WHERE ownership_id = ANY($1::text[])',
    [ownershipIds],
  );
  for (const row of res.rows) ids.set(row.ownership_id, row.workflow_id);
  return ids;
}

/** The receipt of a landing already recorded for this ownership and landed head, or null. */
export async function storedLandingReceipt(pool: Pool, ownershipId: string, landedHead: string): Promise<LandingReceipt | null> {
  const res = await pool.query<{ receipt: unknown }>('SELECT receipt FROM landing_receipts WHERE ownership_id = $1 AND landed_head = $2', [
    ownershipId,
    landedHead,
  ]);
  const raw = res.rows[0]?.receipt;
  return raw ? LandingReceiptSchema.parse(raw) : null;
}

/** The worktrees of a host that may still have journal lines to ship (src/provenance/attributions-shipper.ts): held ones, and those changed within a day. */
export async function journalWorktreesOf(pool: Pool, hostId: string): Promise<string[]> {
  const res = await pool.query<{ worktree_path: string }>(
    `SELECT DISTINCT worktree_path FROM ownerships WHERE host_id = $1 AND (state <> 'closed' OR updated_at > now() - interval '1 day') LIMIT 1000`,
    [hostId],
  );
  return res.rows.map((r) => r.worktree_path);
}
