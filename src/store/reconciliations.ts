import type { Pool } from './db';

/** A reconciliation as logged (src/reconcile/port.ts ReconciliationEntry is this row). */
export interface ReconciliationRow {
  worktreePath: string;
  kind: string;
  reason: string | null;
  repaired: boolean;
  ownershipId: string | null;
  localOwnershipId: string | null;
  localSeq: number | null;
  durableSeq: number | null;
  provisional: unknown;
  at: string;
}

/** Appends the reconciliation to its log (append-only, beside ownership_events; see the migration). */
export async function logReconciliation(pool: Pool, e: ReconciliationRow): Promise<void> {
  await pool.query(
    `INSERT INTO reconciliations (ownership_id, worktree_path, kind, reason, repaired, local_ownership_id, local_seq, durable_seq, provisional, at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10)`,
    [
      e.ownershipId,
      e.worktreePath,
      e.kind,
      e.reason,
      e.repaired,
      e.localOwnershipId,
      e.localSeq,
      e.durableSeq,
      e.provisional === null ? null : JSON.stringify(e.provisional),
      e.at,
    ],
  );
}
