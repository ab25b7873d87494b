import type { Pool } from '../store/db';
import type { LandingReceipt } from '../domain/events';
import { RepoGit } from '../git/repo-git';
import { attributedAmong } from '../store/attributions';
import { landingCommitCount, writeLandingCommits } from '../store/landing-commits';

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

/** Records the landed commits of a receipt once; returns how many rows it has (0: nothing could be said). */
export async function recordLandedCommits(
  pool: Pool,
  repoCwd: string,
  repoRoot: string,
  r: Pick<LandingReceipt, 'ownershipId' | 'sourceHead' | 'landedHead'>,
): Promise<number> {
  const have = await landingCommitCount(pool, r.ownershipId, r.landedHead);
  if (have > 0) return have;
  const g = new RepoGit(repoCwd);
  const commits = await landedCommitsOf(pool, g, r);
  if (!commits || commits.length === 0) return 0;
  const pids = await g.patchIds(commits);
  await writeLandingCommits(pool, repoRoot, r.ownershipId, r.landedHead, commits, pids);
  return commits.length;
}
