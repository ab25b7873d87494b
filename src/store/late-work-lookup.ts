import type { Pool } from 'pg';
import { authorsOf } from './attributions';
import { LateAttemptSchema, type LateAttempt } from './attributions-schemas';

/**
 * The late work `history` shows under each older tenure (late-work.ts records it): the snapshot's
 * ref and, for each late commit, whom commit_authorship attributes it to now.
 */

interface LateDbRow {
  recorded_at: Date;
  repo_root: string;
  worktree_path: string;
  ownership_id: string;
  epoch: number;
  execution_session_id: string;
  wip_ref: string;
  wip_sha: string;
  head: string | null;
  commits: string[];
  more_commits: number;
  uncommitted: boolean;
}

/** The late work recorded for each of these ownerships, oldest first (one per snapshot), each commit with whom it is attributed to now. */
export async function lateAttemptsOf(pool: Pool, ownershipIds: readonly string[], limit = 200): Promise<Map<string, LateAttempt[]>> {
  const out = new Map<string, LateAttempt[]>();
  if (ownershipIds.length === 0) return out;
  const res = await pool.query<LateDbRow>(
    `SELECT DISTINCT ON (ownership_id, epoch, wip_sha) recorded_at, repo_root, worktree_path, ownership_id, epoch, execution_session_id, wip_ref, wip_sha, head, commits, more_commits, uncommitted
       FROM late_work WHERE ownership_id = ANY($1) ORDER BY ownership_id, epoch, wip_sha, recorded_at, journal_offset LIMIT $2`,
    [ownershipIds, limit],
  );
  const rows = res.rows.sort((a, b) => a.recorded_at.getTime() - b.recorded_at.getTime());
  for (const r of rows) {
    const authors = await authorsOf(pool, [r.repo_root], r.commits);
    const attempt = LateAttemptSchema.parse({
      at: r.recorded_at.toISOString(),
      ownershipId: r.ownership_id,
      epoch: r.epoch,
      executionSessionId: r.execution_session_id,
      ref: r.wip_ref,
      sha: r.wip_sha,
      head: r.head,
      uncommitted: r.uncommitted,
      commits: authors.map((a) => ({
        commit: a.commit,
        status: a.status ?? (a.via === 'unknown' ? 'unknown' : 'attributed'),
        ownershipId: a.ownershipId,
        epoch: a.epoch,
        executionSessionId: a.executionSessionId,
      })),
      moreCommits: r.more_commits,
      worktreePath: r.worktree_path,
    });
    out.set(r.ownership_id, [...(out.get(r.ownership_id) ?? []), attempt]);
  }
  return out;
}
