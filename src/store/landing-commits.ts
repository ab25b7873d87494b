import type { Pool, PoolClient } from './db';
import { inTransaction } from './db';

/** The rows of landing_commits: the pre-land commits each landing brought (src/provenance/landing-commits.ts computes them from git). */

/** The landed commits of one receipt, in order, with their patch-ids; nothing when the receipt has some already. */
export async function insertLandingCommits(
  client: PoolClient,
  repoRoot: string,
  ownershipId: string,
  landedHead: string,
  commits: readonly string[],
  pids: ReadonlyMap<string, string>,
): Promise<void> {
  await client.query(
    `INSERT INTO landing_commits (repo_root, ownership_id, landed_head, position, commit_sha, patch_id)
     SELECT $1, $2, $3, t.pos, t.sha, t.pid FROM unnest($4::int[], $5::text[], $6::text[]) AS t(pos, sha, pid)
      WHERE NOT EXISTS (SELECT 1 FROM landing_commits WHERE ownership_id = $2 AND landed_head = $3)`,
    [repoRoot, ownershipId, landedHead, commits.map((_, i) => i), [...commits], commits.map((c) => pids.get(c) ?? null)],
  );
}

/** How many landed-commit rows a receipt has (0: none recorded yet). */
export async function landingCommitCount(pool: Pool, ownershipId: string, landedHead: string): Promise<number> {
  const have = await pool.query<{ n: string }>('SELECT count(*)::text AS n FROM landing_commits WHERE ownership_id = $1 AND landed_head = $2', [
    ownershipId,
    landedHead,
  ]);
  return Number(have.rows[0]?.n ?? '0');
}

/** Writes a receipt's landed commits, one writer per receipt and only into an empty set: two callers never mix their answers. */
export async function writeLandingCommits(
  pool: Pool,
  repoRoot: string,
  ownershipId: string,
  landedHead: string,
  commits: readonly string[],
  pids: ReadonlyMap<string, string>,
): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`landing_commits:${ownershipId}:${landedHead}`]);
    await insertLandingCommits(client, repoRoot, ownershipId, landedHead, commits, pids);
  });
}

/** The landings whose pre-land commits include one with this patch-id (a rebase or cherry-pick copy), up to 3. */
export async function landingsOfPatchId(pool: Pool, patchId: string, roots: readonly string[]): Promise<{ ownershipId: string; landedHead: string }[]> {
  const res = await pool.query<{ ownership_id: string; landed_head: string }>(
    'SELECT DISTINCT ownership_id, landed_head FROM landing_commits WHERE patch_id = $1 AND repo_root = ANY($2) LIMIT 3',
    [patchId, roots],
  );
  return res.rows.map((x) => ({ ownershipId: x.ownership_id, landedHead: x.landed_head }));
}

/** "ownership landedHead" of every landing in these roots whose pre-land commits are recorded. */
export async function recordedLandingsOf(pool: Pool, roots: readonly string[]): Promise<Set<string>> {
  const recorded = await pool.query<{ k: string }>("SELECT DISTINCT ownership_id || ' ' || landed_head AS k FROM landing_commits WHERE repo_root = ANY($1)", [
    roots,
  ]);
  return new Set(recorded.rows.map((x) => x.k));
}

export interface LandedCommitRow {
  ownershipId: string;
  landedHead: string;
  position: number;
  commit: string;
  patchId: string | null;
}

export async function landedCommitsOfReceipt(pool: Pool, ownershipId: string, landedHead: string): Promise<LandedCommitRow[]> {
  const res = await pool.query<{ position: number; commit_sha: string; patch_id: string | null }>(
    'SELECT position, commit_sha, patch_id FROM landing_commits WHERE ownership_id = $1 AND landed_head = $2 ORDER BY position',
    [ownershipId, landedHead],
  );
  return res.rows.map((x) => ({ ownershipId, landedHead, position: x.position, commit: x.commit_sha, patchId: x.patch_id }));
}

/** Receipts (ownership, landed head) that brought `commit` as one of their pre-land commits: sent receipts first, earliest landing first. */
export async function landingsOfPreLandCommit(pool: Pool, roots: readonly string[], commit: string): Promise<{ ownershipId: string; landedHead: string }[]> {
  const res = await pool.query<{ ownership_id: string; landed_head: string }>(
    `SELECT c.ownership_id, c.landed_head FROM landing_commits c
       LEFT JOIN landing_receipts r ON r.ownership_id = c.ownership_id AND r.landed_head = c.landed_head
       LEFT JOIN inferred_landings i ON i.ownership_id = c.ownership_id AND i.landed_head = c.landed_head
      WHERE c.commit_sha = $1 AND (cardinality($2::text[]) = 0 OR c.repo_root = ANY($2))
      ORDER BY (r.ownership_id IS NULL), COALESCE(r.landed_at, (i.receipt->>'landedAt')::timestamptz), r.seq, c.position LIMIT 20`,
    [commit, roots],
  );
  return res.rows.map((x) => ({ ownershipId: x.ownership_id, landedHead: x.landed_head }));
}

/** The pre-land commits of every landing whose head is `landedHead` (a merge-queue batch lands several ownerships in one commit), in receipt order. */
export async function landedCommitsOfHead(pool: Pool, landedHead: string): Promise<LandedCommitRow[]> {
  const res = await pool.query<{ ownership_id: string; position: number; commit_sha: string; patch_id: string | null }>(
    `SELECT c.ownership_id, c.position, c.commit_sha, c.patch_id FROM landing_commits c
       LEFT JOIN landing_receipts r ON r.ownership_id = c.ownership_id AND r.landed_head = c.landed_head
      WHERE c.landed_head = $1 ORDER BY r.landed_at NULLS LAST, r.seq, c.ownership_id, c.position`,
    [landedHead],
  );
  return res.rows.map((x) => ({ ownershipId: x.ownership_id, landedHead, position: x.position, commit: x.commit_sha, patchId: x.patch_id }));
}
