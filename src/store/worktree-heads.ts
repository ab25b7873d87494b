import type { Pool } from 'pg';
import { BranchStatusSchema, type BranchStatus } from '../domain/branch';

/**
 * The branch head of owned worktrees as their journals say it moved (see the migration
 * worktree_heads). Written by the journal shipper after a ref move; read by the lookups, which
 * show whichever is newer: this, or the head the workflow's last projection write reported.
 */
export async function recordHead(pool: Pool, ownershipId: string, worktreePath: string, status: BranchStatus): Promise<void> {
  await pool.query(
    `INSERT INTO worktree_heads (ownership_id, worktree_path, status, seen_at) VALUES ($1, $2, $3::jsonb, now())
     ON CONFLICT (ownership_id) DO UPDATE SET worktree_path = EXCLUDED.worktree_path, status = EXCLUDED.status, seen_at = now()`,
    [ownershipId, worktreePath, JSON.stringify(status)],
  );
}

export async function headsOf(pool: Pool, ownershipIds: readonly string[]): Promise<Map<string, BranchStatus>> {
  if (ownershipIds.length === 0) return new Map();
  const res = await pool.query<{ ownership_id: string; status: unknown }>(
    'SELECT ownership_id, status FROM worktree_heads WHERE ownership_id = ANY($1::text[])',
    [ownershipIds],
  );
  const out = new Map<string, BranchStatus>();
  for (const row of res.rows) {
    const parsed = BranchStatusSchema.safeParse(row.status);
    if (parsed.success) out.set(row.ownership_id, parsed.data);
  }
  return out;
}

/** The newer of two reports of a branch (null when neither). */
export function newerBranch(a: BranchStatus | null | undefined, b: BranchStatus | null | undefined): BranchStatus | null {
  if (!a) return b ?? null;
  if (!b) return a;
  return Date.parse(b.at) > Date.parse(a.at) ? b : a;
}
