import type { LandingReceipt } from '../domain/events';
import { OwnershipRecordSchema, type OwnershipRecord } from '../domain/projection';
import type { Pool } from './db';
import { inTransaction } from './db';
import { insertLandingCommits } from './landing-commits';

/**
 * The rows a landing scan (src/landings/scan.ts) reads and writes: what receipts and earlier scans
 * already account for, the ownerships of a repository, and the landings it infers.
 */

export interface AccountedLandings {
  /** landed heads with a sent receipt */
  receiptHeads: Set<string>;
  /** landed heads a scan inferred (or found ambiguous) before */
  inferredHeads: Set<string>;
  landedCommits: Set<string>;
  landedPatches: Set<string>;
}

export async function accountedLandings(pool: Pool, roots: readonly string[]): Promise<AccountedLandings> {
  const receipts = await pool.query<{ landed_head: string }>('SELECT landed_head FROM landing_receipts WHERE repo_root = ANY($1)', [roots]);
  const inferred = await pool.query<{ landed_head: string }>('SELECT landed_head FROM inferred_landings WHERE repo_root = ANY($1)', [roots]);
  const landed = await pool.query<{ commit_sha: string; patch_id: string | null }>(
    'SELECT commit_sha, patch_id FROM landing_commits WHERE repo_root = ANY($1)',
    [roots],
  );
  return {
    receiptHeads: new Set(receipts.rows.map((r) => r.landed_head)),
    inferredHeads: new Set(inferred.rows.map((r) => r.landed_head)),
    landedCommits: new Set(landed.rows.map((r) => r.commit_sha)),
    landedPatches: new Set(landed.rows.map((r) => r.patch_id).filter((x): x is string => x !== null)),
  };
}

/** The ownerships of a repository, at most 5000, in id order. */
export async function recordsOfRepo(pool: Pool, roots: readonly string[]): Promise<OwnershipRecord[]> {
  const rows = await pool.query<{ record: unknown }>('SELECT record FROM ownerships WHERE repo_root = ANY($1) ORDER BY ownership_id LIMIT 5000', [roots]);
  return rows.rows.map((r) => OwnershipRecordSchema.parse(r.record));
}

export interface InferredLanding {
  repoRoot: string;
  branch: string;
  landedHead: string;
  ownershipId: string;
  method: string;
  receipt: LandingReceipt;
  commits: readonly string[];
  patchIds: ReadonlyMap<string, string>;
}

/** Records an inferred landing and its pre-land commits once (a landed head already inferred keeps its first answer). */
export async function recordInferredLanding(pool: Pool, x: InferredLanding): Promise<void> {
  await inTransaction(pool, async (client) => {
    const ins = await client.query(
      `INSERT INTO inferred_landings (repo_root, landed_branch, landed_head, ownership_id, method, reason, source_branch, source_head, candidates, receipt)
       VALUES ($1, $2, $3, $4, $5, NULL, $6, $7, $8::jsonb, $9::jsonb) ON CONFLICT DO NOTHING`,
      [
        x.repoRoot,
        x.branch,
        x.landedHead,
        x.ownershipId,
        x.method,
        x.receipt.sourceBranch,
        x.receipt.sourceHead,
        JSON.stringify([x.ownershipId]),
        JSON.stringify(x.receipt),
      ],
    );
    if (ins.rowCount === 1) await insertLandingCommits(client, x.repoRoot, x.ownershipId, x.landedHead, x.commits, x.patchIds);
  });
}

/** Records a landed head that more than one ownership could have made. */
export async function recordAmbiguousLanding(
  pool: Pool,
  repoRoot: string,
  branch: string,
  landedHead: string,
  candidates: readonly string[],
  method: string,
): Promise<void> {
  await pool.query(
    `INSERT INTO inferred_landings (repo_root, landed_branch, landed_head, ownership_id, method, reason, candidates)
     VALUES ($1, $2, $3, NULL, $4, 'landing_ambiguous', $5::jsonb) ON CONFLICT DO NOTHING`,
    [repoRoot, branch, landedHead, method, JSON.stringify(candidates)],
  );
}

/** The repositories of a host's ownerships (at most 500) and, for each, the branches landings went to (at most 20). */
export async function repoRootsOfHost(pool: Pool, hostId: string): Promise<string[]> {
  const res = await pool.query<{ repo_root: string }>('SELECT DISTINCT repo_root FROM ownerships WHERE host_id = $1 LIMIT 500', [hostId]);
  return res.rows.map((r) => r.repo_root);
}

export async function landedBranchesOf(pool: Pool, repoRoot: string): Promise<string[]> {
  const res = await pool.query<{ landed_branch: string }>('SELECT DISTINCT landed_branch FROM landing_receipts WHERE repo_root = $1 LIMIT 20', [repoRoot]);
  return res.rows.map((r) => r.landed_branch);
}
