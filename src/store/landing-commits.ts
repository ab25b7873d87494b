import type { Pool, PoolClient } from './db';
import { inTransaction } from './db';
import type { LandingReceipt } from '../domain/events';
import { RepoGit } from '../git/repo-git';
import { attributedAmong } from './attributions';

/**
 * The pre-land commits a landing brought (landing_commits), recorded beside its receipt and
 * outside the workflow: by the host agent after it projects a landed record, by the landing API
 * once the receipt is durable, and by provenance when it meets a receipt without them. All three
 * write the same rows (idempotent), and the first one that can see the objects wins; after that
 * the commits answer without the branch, the worktree or the objects.
 *
 *  - merge (landed head has two parents), squash, rebase (the source head is not on the landed
 *    head's history): `rev-list S ^L^1`, the source branch's own commits;
 *  - fast-forward (the source head is the landed head, or on its history): the landed head's
 *    first-parent line down to the first commit not attributed to this ownership (what its
 *    journal reported and the record confirmed; a disputed commit ends it), at least the landed head itself.
 */

export const LANDED_COMMITS_LIMIT = 2000;

export async function landedCommitsOf(pool: Pool, g: RepoGit, r: Pick<LandingReceipt, 'ownershipId' | 'sourceHead' | 'landedHead'>): Promise<string[] | null> {
  const l = await g.resolve(r.landedHead);
  if (!l) return null;
  const s = await g.resolve(r.sourceHead);
  const parents = await g.parents(l);
  const fastForward = s !== null && parents.length < 2 && (s === l || (await g.isAncestor(s, l)));
  if (s !== null && !fastForward) {
    return g.revList(['--topo-order', `--max-count=${LANDED_COMMITS_LIMIT}`, s, ...parents.slice(0, 1).map((p) => `^${p}`)]);
  }
  if (s === null) return null; // the source's objects are gone: nothing can be said beyond the receipt
  const line = await g.revList(['--first-parent', `--max-count=${LANDED_COMMITS_LIMIT}`, l], false);
  const mine = await attributedAmong(pool, line, r.ownershipId);
  const out: string[] = [];
  for (const c of line) {
    if (c !== l && !mine.has(c)) break;
    out.push(c);
  }
  return out.reverse();
}

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

/** Records the landed commits of a receipt once; returns how many rows it has (0: nothing could be said). */
export async function recordLandedCommits(
  pool: Pool,
  repoCwd: string,
  repoRoot: string,
  r: Pick<LandingReceipt, 'ownershipId' | 'sourceHead' | 'landedHead'>,
): Promise<number> {
  const have = await pool.query<{ n: string }>('SELECT count(*)::text AS n FROM landing_commits WHERE ownership_id = $1 AND landed_head = $2', [
    r.ownershipId,
    r.landedHead,
  ]);
  if (Number(have.rows[0]?.n ?? '0') > 0) return Number(have.rows[0]!.n);
  const g = new RepoGit(repoCwd);
  const commits = await landedCommitsOf(pool, g, r);
  if (!commits || commits.length === 0) return 0;
  const pids = await g.patchIds(commits);
  // One writer per receipt, and only into an empty set: two callers never mix their answers.
  await inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`landing_commits:${r.ownershipId}:${r.landedHead}`]);
    await insertLandingCommits(client, repoRoot, r.ownershipId, r.landedHead, commits, pids);
  });
  return commits.length;
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
