import type { Pool } from 'pg';
import { z } from 'zod';
import { ConversationSchema } from '../domain/identity';
import { type AttributionStatus } from '../domain/attribution';
import {
  AttemptSchema,
  AttributionStatusSchema,
  AttributionViaSchema,
  AuthorSchema,
  CommitReportSchema,
  type Attempt,
  type Author,
  type CommitReport,
} from './attributions-schemas';

export {
  AttemptSchema,
  AttributionViaSchema,
  AuthorSchema,
  CommitReportSchema,
  type Attempt,
  type AttributionVia,
  type Author,
  type CommitReport,
} from './attributions-schemas';
import { parseEvent } from '../domain/events';

/**
 * The attributions as rows (commit_reports, commit_authorship): who wrote a commit, the disputes,
 * the attempts. Reading only; the journal shipping that writes them reads git and lives in
 * src/provenance/attributions.ts.
 */

export function unknownAuthor(commit: string): Author {
  return { commit, via: 'unknown', ownershipId: null, epoch: null, executionSessionId: null, workerId: null, conversation: null };
}

interface AttributionDbRow {
  commit_sha: string;
  status: string;
  ownership_id: string | null;
  epoch: number | null;
  execution_session_id: string | null;
  worker_id: string | null;
  conversation_id: string | null;
  via: string;
  hold_id: string | null;
  parent_execution_session_id: string | null;
}

/**
 * Authors of `commits` (full ids) in `roots`, in the order given. A commit is attributed only when
 * its reports settle on one worktree's tenure (commit_authorship); otherwise it reads unknown,
 * with its status (disputed, unowned, unknown) and the reports that say why.
 */
export async function authorsOf(pool: Pool, roots: readonly string[], commits: readonly string[]): Promise<Author[]> {
  if (commits.length === 0) return [];
  // One round trip: each commit's attribution with its ownership's tenure log (claims, reclaims,
  // conversation bindings), from which the author's conversation at that epoch is read.
  const res = await pool.query<AttributionDbRow & { log: unknown[] | null }>(
    `WITH a AS (
       SELECT DISTINCT ON (commit_sha) commit_sha, status, ownership_id, epoch, execution_session_id, worker_id, conversation_id, via, hold_id, parent_execution_session_id
         FROM commit_authorship WHERE commit_sha = ANY($1) AND (cardinality($2::text[]) = 0 OR repo_root = ANY($2))
        ORDER BY commit_sha, (status = 'attributed') DESC, recorded_at)
     SELECT a.*, l.log FROM a LEFT JOIN LATERAL (
       SELECT json_agg(e.event ORDER BY e.seq) AS log FROM ownership_events e
        WHERE a.status = 'attributed' AND e.ownership_id = a.ownership_id AND e.type IN ('ownership.claimed', 'ownership.reclaimed', 'ownership.conversation_bound')) l ON true`,
    [commits, roots],
  );
  const byCommit = new Map(res.rows.map((r) => [r.commit_sha, r]));
  const unsettled = res.rows.filter((r) => r.status !== 'attributed').map((r) => r.commit_sha);
  const reports = await reportsOfCommits(pool, roots, unsettled);
  return commits.map((c) => {
    const r = byCommit.get(c);
    if (!r) return unknownAuthor(c);
    const status = AttributionStatusSchema.parse(r.status);
    if (status !== 'attributed') return AuthorSchema.parse({ ...unknownAuthor(c), status, reports: reports.get(c) ?? [] });
    return AuthorSchema.parse({
      commit: c,
      via: AttributionViaSchema.parse(r.via),
      ownershipId: r.ownership_id,
      epoch: r.epoch,
      executionSessionId: r.execution_session_id,
      workerId: r.worker_id,
      // A child's commit reaches the parent's conversation: the parent's tenure, at that epoch.
      conversation: conversationAt(r.log ?? [], r.ownership_id, r.epoch, r.parent_execution_session_id ?? r.execution_session_id, r.conversation_id),
      ...(r.hold_id !== null && r.parent_execution_session_id !== null
        ? { hold: { holdId: r.hold_id, parentExecutionSessionId: r.parent_execution_session_id } }
        : {}),
      status,
    });
  });
}

const REPORT_COLUMNS = `r.commit_sha, r.verdict, r.reason, r.recorded_at, r.worktree_path, r.ref, r.ownership_id, r.epoch, r.execution_session_id, r.worker_id, r.conversation_id,
  r.claimed_ownership_id, r.claimed_epoch, r.claimed_session_id, r.claimed_owner_session_id, r.claimed_worker_id, r.claimed_conversation_id`;

function toReport(r: Record<string, unknown>, status: string): CommitReport {
  const recorded =
    r.ownership_id === null
      ? null
      : { ownershipId: r.ownership_id, epoch: r.epoch, executionSessionId: r.execution_session_id, workerId: r.worker_id, conversationId: r.conversation_id };
  return CommitReportSchema.parse({
    commit: r.commit_sha,
    status,
    verdict: r.verdict,
    reason: r.reason,
    at: (r.recorded_at as Date).toISOString(),
    worktreePath: r.worktree_path,
    ref: r.ref,
    // the committing session when the line names one, else the owner it read from its projection
    claimed: {
      ownershipId: r.claimed_ownership_id,
      epoch: r.claimed_epoch,
      executionSessionId: r.claimed_session_id ?? r.claimed_owner_session_id,
      workerId: r.claimed_worker_id,
      conversationId: r.claimed_conversation_id,
    },
    recorded,
  });
}

/** Every report of these commits, oldest first, each with its commit's status now. */
async function reportsOfCommits(pool: Pool, roots: readonly string[], commits: readonly string[]): Promise<Map<string, CommitReport[]>> {
  const out = new Map<string, CommitReport[]>();
  if (commits.length === 0) return out;
  const res = await pool.query<Record<string, unknown> & { status: string }>(
    `SELECT ${REPORT_COLUMNS}, s.status FROM commit_reports r
       JOIN commit_authorship s ON s.repo_root = r.repo_root AND s.commit_sha = r.commit_sha AND s.commit_sha = ANY($1)
      WHERE r.commit_sha = ANY($1) AND (cardinality($2::text[]) = 0 OR r.repo_root = ANY($2)) ORDER BY r.recorded_at, r.journal_offset LIMIT 2000`,
    [commits, roots],
  );
  for (const row of res.rows) {
    const list = out.get(row.commit_sha as string) ?? [];
    list.push(toReport(row, row.status));
    out.set(row.commit_sha as string, list);
  }
  return out;
}

/**
 * Reports that attribute nobody, or whose commit is not attributed now, naming one of these
 * ownerships as recorded or as claimed: what `history` shows beside the events (a framed
 * ownership sees the line that named it). Oldest first, at most `limit`.
 */
export async function disputesOf(pool: Pool, ownershipIds: readonly string[], limit = 500): Promise<CommitReport[]> {
  if (ownershipIds.length === 0) return [];
  const res = await pool.query<Record<string, unknown>>(
    `SELECT ${REPORT_COLUMNS} FROM commit_reports r WHERE r.ownership_id = ANY($1) OR r.claimed_ownership_id = ANY($1) ORDER BY r.recorded_at, r.journal_offset LIMIT 5000`,
    [ownershipIds],
  );
  const commits = [...new Set(res.rows.map((r) => r.commit_sha as string))];
  const statuses = await statusesOf(pool, commits);
  return res.rows
    .map((r) => toReport(r, statuses.get(r.commit_sha as string) ?? 'unknown'))
    .filter((r) => r.verdict !== 'attributed' || r.status !== 'attributed')
    .slice(0, limit);
}

async function statusesOf(pool: Pool, commits: readonly string[]): Promise<Map<string, AttributionStatus>> {
  if (commits.length === 0) return new Map();
  const res = await pool.query<{ commit_sha: string; status: string }>('SELECT commit_sha, status FROM commit_authorship WHERE commit_sha = ANY($1)', [
    commits,
  ]);
  return new Map(res.rows.map((r) => [r.commit_sha, AttributionStatusSchema.parse(r.status)]));
}

/** The commits attributed to an ownership now, in journal order (landings scan: what it made). */
export async function attributedCommitsOf(pool: Pool, ownershipId: string): Promise<string[]> {
  // Narrowed by its index first: the view then weighs only these commits' reports.
  const named = await pool.query<{ commit_sha: string }>(
    `SELECT commit_sha FROM commit_reports WHERE ownership_id = $1 AND verdict = 'attributed' UNION SELECT commit_sha FROM commit_attributions WHERE ownership_id = $1`,
    [ownershipId],
  );
  if (named.rows.length === 0) return [];
  const res = await pool.query<{ commit_sha: string }>(
    `SELECT commit_sha FROM commit_authorship WHERE commit_sha = ANY($1) AND ownership_id = $2 AND status = 'attributed' ORDER BY journal_offset, recorded_at`,
    [named.rows.map((r) => r.commit_sha), ownershipId],
  );
  return [...new Set(res.rows.map((r) => r.commit_sha))];
}

/** Those of `commits` attributed to the ownership now. */
export async function attributedAmong(pool: Pool, commits: readonly string[], ownershipId: string): Promise<Set<string>> {
  if (commits.length === 0) return new Set();
  const res = await pool.query<{ commit_sha: string }>(
    `SELECT commit_sha FROM commit_authorship WHERE commit_sha = ANY($1) AND ownership_id = $2 AND status = 'attributed'`,
    [commits, ownershipId],
  );
  return new Set(res.rows.map((r) => r.commit_sha));
}

/** The session and worker a commit is attributed to under this ownership, or null. */
export async function attributedAuthor(
  pool: Pool,
  commit: string,
  ownershipId: string,
): Promise<{ executionSessionId: string | null; workerId: string | null } | null> {
  const res = await pool.query<{ execution_session_id: string | null; worker_id: string | null }>(
    `SELECT execution_session_id, worker_id FROM commit_authorship WHERE commit_sha = $1 AND ownership_id = $2 AND status = 'attributed' LIMIT 1`,
    [commit, ownershipId],
  );
  const r = res.rows[0];
  return r ? { executionSessionId: r.execution_session_id, workerId: r.worker_id } : null;
}

/** The conversation of an ownership's owner at an epoch, from its tenure log (claims and conversation bindings). */
function conversationAt(
  log: readonly unknown[],
  ownershipId: string | null,
  epoch: number | null,
  session: string | null,
  conversationId: string | null,
): Author['conversation'] {
  if (ownershipId === null) return conversationId ? { conversationId, conversationUrl: null, title: null } : null;
  let found: z.infer<typeof ConversationSchema> | null = null;
  let tenureSession: string | null = null;
  for (const raw of log) {
    const e = parseEvent(raw);
    if (e.type === 'ownership.claimed' || e.type === 'ownership.reclaimed') {
      if (epoch !== null && e.data.epoch > epoch) break;
      tenureSession = e.data.owner.executionSessionId;
      found = e.data.owner.conversation;
    } else if (e.type === 'ownership.conversation_bound' && e.data.executionSessionId === (session ?? tenureSession)) {
      found = e.data.conversation;
    }
  }
  if (found && (conversationId === null || found.conversationId === conversationId)) {
    return { conversationId: found.conversationId, conversationUrl: found.conversationUrl, title: found.title ?? null };
  }
  return conversationId ? { conversationId, conversationUrl: null, title: null } : null;
}

// --- refusals as attempts ---------------------------------------------------------------------------

/** Refused attempts recorded for these ownerships or worktree paths, oldest first (at most `limit`). */
export async function attemptsOf(pool: Pool, q: { ownershipIds?: readonly string[]; worktreePaths?: readonly string[]; limit?: number }): Promise<Attempt[]> {
  const res = await pool.query<Record<string, unknown>>(
    `SELECT kind, code, recorded_at, ownership_id, epoch, execution_session_id, owner_session_id, ref, old_head, new_head, command, worktree_path
       FROM git_refusals WHERE ownership_id = ANY($1) OR worktree_path = ANY($2) ORDER BY recorded_at, journal_offset LIMIT $3`,
    [q.ownershipIds ?? [], q.worktreePaths ?? [], q.limit ?? 500],
  );
  return res.rows.map((r) =>
    AttemptSchema.parse({
      kind: r.kind,
      code: r.code,
      at: (r.recorded_at as Date).toISOString(),
      ownershipId: r.ownership_id,
      epoch: r.epoch,
      executionSessionId: r.execution_session_id,
      ownerSessionId: r.owner_session_id,
      ref: r.ref,
      oldHead: r.old_head,
      newHead: r.new_head,
      command: r.command,
      worktreePath: r.worktree_path,
    }),
  );
}
