import type { Pool, PoolClient } from './db';

/**
 * The rows the journal shipping writes and reads (src/provenance/attributions.ts, late-work.ts):
 * the shipping cursor, the reads of a journal file, the tenure events of a worktree, commit
 * reports, git refusals and late work. SQL only: what to write is decided over git in
 * src/provenance; this says how it is kept.
 */

/** Where shipping of a worktree's journal stands, in the database: the file (its inode) and the offset shipped. */
export async function readJournalCursor(pool: Pool, hostId: string, gitDir: string): Promise<{ inode: string; offset: number } | null> {
  const res = await pool.query<{ inode: string; shipped_offset: string }>(
    'SELECT inode, shipped_offset FROM journal_cursors WHERE host_id = $1 AND git_dir = $2',
    [hostId, gitDir],
  );
  const cursor = res.rows[0];
  return cursor ? { inode: cursor.inode, offset: Number(cursor.shipped_offset) } : null;
}

export async function writeJournalCursor(pool: Pool, hostId: string, gitDir: string, inode: string, offset: number): Promise<void> {
  await pool.query(
    `INSERT INTO journal_cursors (host_id, git_dir, inode, shipped_offset) VALUES ($1, $2, $3, $4)
     ON CONFLICT (host_id, git_dir) DO UPDATE SET inode = EXCLUDED.inode, shipped_offset = EXCLUDED.shipped_offset, updated_at = now()`,
    [hostId, gitDir, inode, offset],
  );
}

/** A read of the journal file `inode` when it was `size` long. */
export async function recordJournalRead(pool: Pool, hostId: string, gitDir: string, file: { inode: string; size: number }, at: Date): Promise<void> {
  await pool.query(
    `INSERT INTO journal_reads (host_id, git_dir, inode, size_seen, read_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (host_id, git_dir, inode, size_seen) DO UPDATE SET read_at = GREATEST(journal_reads.read_at, EXCLUDED.read_at)`,
    [hostId, gitDir, file.inode, file.size, at],
  );
}

/**
 * For each offset of the journal file `inode`: the last read that cannot have seen the line there
 * (a read of this file when it was no longer than that, or of another file at this path), or null.
 */
export async function lastReadsBefore(
  pool: Pool,
  hostId: string,
  gitDir: string,
  inode: string,
  offsets: readonly number[],
): Promise<Map<number, number | null>> {
  const res = await pool.query<{ o: string; at: Date | null }>(
    `SELECT o::text AS o, (SELECT max(read_at) FROM journal_reads WHERE host_id = $1 AND git_dir = $2 AND (inode <> $3 OR size_seen <= o)) AS at FROM unnest($4::bigint[]) AS o`,
    [hostId, gitDir, inode, [...offsets]],
  );
  return new Map(res.rows.map((r) => [Number(r.o), r.at ? r.at.getTime() : null]));
}

/** The events of `types` of every ownership this worktree had on this host, periodic heartbeats left out, in log order. */
export async function worktreeTenureEvents(pool: Pool, worktreePath: string, hostId: string, types: readonly string[]): Promise<unknown[]> {
  const res = await pool.query<{ event: unknown }>(
    `SELECT event FROM ownership_events
      WHERE ownership_id IN (SELECT DISTINCT ownership_id FROM ownership_events WHERE worktree_path = $1 AND host_id = $2)
        AND type = ANY($3::text[]) AND NOT (type = 'ownership.heartbeat' AND event->'data'->>'transition' = 'periodic')
      ORDER BY ownership_id, seq`,
    [worktreePath, hostId, [...types]],
  );
  return res.rows.map((r) => r.event);
}

/** The claims and reclaims of one ownership at this worktree on this host, in log order. */
export async function claimEventsAt(pool: Pool, ownershipId: string, worktreePath: string, hostId: string): Promise<unknown[]> {
  const res = await pool.query<{ event: unknown }>(
    `SELECT event FROM ownership_events WHERE ownership_id = $1 AND worktree_path = $2 AND host_id = $3 AND type IN ('ownership.claimed', 'ownership.reclaimed') ORDER BY seq`,
    [ownershipId, worktreePath, hostId],
  );
  return res.rows.map((r) => r.event);
}

/** The ownership this worktree had last on this host, or null. */
export async function latestOwnershipAt(pool: Pool, worktreePath: string, hostId: string): Promise<string | null> {
  const res = await pool.query<{ ownership_id: string }>(
    'SELECT ownership_id FROM ownerships WHERE worktree_path = $1 AND host_id = $2 ORDER BY updated_at DESC LIMIT 1',
    [worktreePath, hostId],
  );
  return res.rows[0]?.ownership_id ?? null;
}

/** One decision per commit at a time, whichever host ships it: the commits' locks, for the transaction, in one order. */
export async function lockCommitReports(client: PoolClient, repoRoot: string, commits: readonly string[]): Promise<void> {
  for (const c of [...commits].sort()) await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`commit_report:${repoRoot}:${c}`]);
}

/** Another worktree already reports this commit as its own (attributed, or competing). */
export async function commitReportedElsewhere(
  client: PoolClient,
  at: { repoRoot: string; hostId: string; worktreePath: string },
  commit: string,
): Promise<boolean> {
  const res = await client.query(
    `SELECT 1 FROM commit_reports WHERE repo_root = $1 AND commit_sha = $2 AND NOT (host_id = $3 AND worktree_path = $4)
        AND (verdict = 'attributed' OR reason = 'attribution_reported_by_other_worktree') LIMIT 1`,
    [at.repoRoot, commit, at.hostId, at.worktreePath],
  );
  return (res.rowCount ?? 0) > 0;
}

export interface CommitReportRow {
  repoRoot: string;
  commit: string;
  hostId: string;
  gitDir: string;
  offset: number;
  worktreePath: string;
  ref: string;
  verdict: string;
  reason: string | null;
  via: string;
  /** via hold: the hold a child committed under and the parent session that granted it (docs/ownership-record.md#child-holds) */
  hold?: { holdId: string; parentExecutionSessionId: string } | null;
  recorded: {
    ownershipId: string | null;
    epoch: number | null;
    executionSessionId: string | null;
    workerId: string | null;
    conversationId: string | null;
  } | null;
  claimed: {
    ownershipId: string | null;
    epoch: number | null;
    committerSessionId: string | null;
    executionSessionId: string | null;
    workerId: string | null;
    conversationId: string | null;
  };
  windowFrom: Date | null;
  windowTo: Date;
}

/** A commit report, once per (commit, journal line): whether it was new. */
export async function insertCommitReport(client: PoolClient, r: CommitReportRow): Promise<boolean> {
  const res = await client.query(
    `INSERT INTO commit_reports (repo_root, commit_sha, host_id, git_dir, journal_offset, worktree_path, ref, verdict, reason, via,
       ownership_id, epoch, execution_session_id, worker_id, conversation_id,
       claimed_ownership_id, claimed_epoch, claimed_session_id, claimed_owner_session_id, claimed_worker_id, claimed_conversation_id, window_from, window_to,
       hold_id, parent_execution_session_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25) ON CONFLICT DO NOTHING`,
    [
      r.repoRoot,
      r.commit,
      r.hostId,
      r.gitDir,
      r.offset,
      r.worktreePath,
      r.ref,
      r.verdict,
      r.reason,
      r.via,
      r.recorded?.ownershipId ?? null,
      r.recorded?.epoch ?? null,
      r.recorded?.executionSessionId ?? null,
      r.recorded?.workerId ?? null,
      r.recorded?.conversationId ?? null,
      r.claimed.ownershipId,
      r.claimed.epoch,
      r.claimed.committerSessionId,
      r.claimed.executionSessionId,
      r.claimed.workerId,
      r.claimed.conversationId,
      r.windowFrom,
      r.windowTo,
      r.via === 'hold' ? (r.hold?.holdId ?? null) : null,
      r.via === 'hold' ? (r.hold?.parentExecutionSessionId ?? null) : null,
    ],
  );
  return (res.rowCount ?? 0) > 0;
}

export interface GitRefusalRow {
  hostId: string;
  gitDir: string;
  offset: number;
  kind: string;
  code: string;
  ownershipId: string | null;
  epoch: number | null;
  executionSessionId: string | null;
  envEpoch: string | null;
  ownerSessionId: string | null;
  ref: string | null;
  oldHead: string | null;
  newHead: string | null;
  command: string | null;
  repoRoot: string;
  worktreePath: string;
}

/** A git move the hooks or the git wrapper refused, once per journal line: whether it was new. */
export async function insertGitRefusal(client: PoolClient, r: GitRefusalRow): Promise<boolean> {
  const res = await client.query(
    `INSERT INTO git_refusals (host_id, git_dir, journal_offset, kind, code, ownership_id, epoch, execution_session_id, env_epoch, owner_session_id, ref, old_head, new_head, command, repo_root, worktree_path)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT DO NOTHING`,
    [
      r.hostId,
      r.gitDir,
      r.offset,
      r.kind,
      r.code,
      r.ownershipId,
      r.epoch,
      r.executionSessionId,
      r.envEpoch,
      r.ownerSessionId,
      r.ref,
      r.oldHead,
      r.newHead,
      r.command,
      r.repoRoot,
      r.worktreePath,
    ],
  );
  return (res.rowCount ?? 0) > 0;
}

export interface LateWorkRow {
  hostId: string;
  gitDir: string;
  offset: number;
  repoRoot: string;
  worktreePath: string;
  ownershipId: string;
  epoch: number;
  executionSessionId: string;
  wipRef: string;
  wipSha: string;
  head: string | null;
  commits: readonly string[];
  moreCommits: number;
  uncommitted: boolean;
}

/** An older tenure's late work, once per journal line: whether it was new. */
export async function insertLateWork(pool: Pool, r: LateWorkRow): Promise<boolean> {
  const res = await pool.query(
    `INSERT INTO late_work (host_id, git_dir, journal_offset, repo_root, worktree_path, ownership_id, epoch, execution_session_id, wip_ref, wip_sha, head, commits, more_commits, uncommitted)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT DO NOTHING`,
    [
      r.hostId,
      r.gitDir,
      r.offset,
      r.repoRoot,
      r.worktreePath,
      r.ownershipId,
      r.epoch,
      r.executionSessionId,
      r.wipRef,
      r.wipSha,
      r.head,
      [...r.commits],
      r.moreCommits,
      r.uncommitted,
    ],
  );
  return (res.rowCount ?? 0) > 0;
}
