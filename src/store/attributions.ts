import { promises as fs } from 'node:fs';
import type { Pool, PoolClient } from 'pg';
import { z } from 'zod';
import {
  commitsOfMove,
  journalStat,
  readJournal,
  reflogMessages,
  readShippedOffset,
  REFUSAL_KINDS,
  writeShippedOffset,
  type JournalLine,
} from '../git/journal';
import { shipLateLines } from './late-work';
import { confineDirs } from '../git/confine';
import { git } from '../git/exec';
import { identifyWorktree, pinnedGit, type WorktreeIdentity } from '../git/repo';
import { ConversationSchema, FULL_SHA, IdString } from '../domain/identity';
import {
  judgeClaim,
  tenureSegments,
  TENURE_EVENT_TYPES,
  type AttributionReason,
  type AttributionStatus,
  type Judgement,
  type LineClaim,
  type TenureSegment,
} from '../domain/attribution';
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
import { describeBranch } from '../git/status';
import { recordHead } from './worktree-heads';
import { inTransaction } from './db';

/**
 * Ships worktree journals (src/git/journal.ts) into PostgreSQL: the commits of each `commit` line
 * become commit_reports, `ref_refused` / `wrapper_refused` lines become git_refusals, the host
 * agent's `late_preserved` lines become late_work (late-work.ts). Idempotent
 * and resumable: every row is keyed so a second shipping inserts nothing, and the shipped offset
 * is written only after the rows are committed (a crash in between ships the same lines again).
 *
 * Who made a commit is decided here from the durable record, never from the line: the worktree is
 * the one whose journal this is (the shipper opened it), the time is bounded by the shipper's own
 * reads of that journal (journal_reads), and the author is the tenure the ownership log says held
 * that worktree then (src/domain/attribution.ts). What the line names is kept as a claim beside it.
 */

const isId = (s: string): boolean => s !== '' && IdString.safeParse(s).success;

/**
 * The window's bounds are this host's clock, the tenures' the workflow workers': a line is judged
 * against the tenures of its window widened by this much either side, the disagreement the clocks
 * of one deployment are assumed to stay within.
 */
export const CLOCK_SLACK_MS = 2_000;

/** What a line claims, each id only when it is one; ownership and epoch only of a durable ownership (not an offline claim's placeholder). */
export function claimOf(line: JournalLine): LineClaim {
  const id = (s: string): string | null => (isId(s) ? s : null);
  const durable = line.ownership.startsWith('own_') && isId(line.ownership);
  return {
    ownershipId: durable ? line.ownership : null,
    epoch: durable && /^[0-9]{1,9}$/.test(line.epoch) ? Number(line.epoch) : null,
    executionSessionId: id(line.owner),
    committerSessionId: id(line.session),
    workerId: id(line.worker),
    conversationId: id(line.conversation),
    state: line.state === '' ? null : line.state,
  };
}

export interface ShipResult {
  /** commit reports inserted that attribute their commit */
  attributed: number;
  /** commit reports inserted that do not (disputed, unowned, unknown) */
  unattributed: number;
  refusals: number;
  skipped: number;
  /** offset shipped up to */
  offset: number;
  /** the worktree's private git dir (where the journal is) */
  privateDir: string;
  /** the journal file shipped (`device:inode:birth`, '' when there is none yet) */
  inode: string;
}

/** Passes per call: each reads at most JOURNAL_READ_LIMIT bytes, so one call is bounded. */
const MAX_PASSES = 8;

/** Ships one worktree's journal from where the last shipping stopped. */
export async function shipJournal(pool: Pool, worktreePath: string, opts: { hostId: string; allowedRoots: readonly string[] }): Promise<ShipResult> {
  const id = await identifyWorktree(worktreePath);
  await confineDirs(id, opts.allowedRoots);
  const file = await journalStat(id);
  const out: ShipResult = {
    attributed: 0,
    unattributed: 0,
    refusals: 0,
    skipped: 0,
    offset: await startOffset(pool, opts.hostId, id, file.inode),
    privateDir: id.privateDir,
    inode: file.inode,
  };
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    // Before the read: whatever lies past this size was written after this moment.
    const now = await journalStat(id);
    if (now.inode !== file.inode) break; // replaced while shipping: the next call starts on the new file
    await recordRead(pool, opts.hostId, id.privateDir, now, new Date());
    const chunk = await readJournal(id, out.offset);
    const readAt = Date.now();
    if (chunk.end === out.offset) break;
    out.skipped += chunk.skipped;
    const rows = await rowsOf(pool, id, opts.hostId, file.inode, chunk.lines, readAt);
    const inserted = await insertRows(pool, id, opts.hostId, rows);
    out.skipped += (await shipLateLines(pool, id, opts.hostId, chunk.lines, readAt)).rejected;
    await recordMovedHead(pool, id, opts.hostId, chunk.lines);
    out.attributed += inserted.attributed;
    out.unattributed += inserted.unattributed;
    out.refusals += inserted.refusals;
    await pool.query(
      `INSERT INTO journal_cursors (host_id, git_dir, inode, shipped_offset) VALUES ($1, $2, $3, $4)
       ON CONFLICT (host_id, git_dir) DO UPDATE SET inode = EXCLUDED.inode, shipped_offset = EXCLUDED.shipped_offset, updated_at = now()`,
      [opts.hostId, id.privateDir, file.inode, chunk.end],
    );
    await writeShippedOffset(id, chunk.end);
    out.offset = chunk.end;
    if (!chunk.more) break;
  }
  return out;
}

/**
 * Where shipping resumes: the database's cursor while the journal is the same file (the offset file
 * in the worktree can be rewound or pushed on by whoever works there); 0 for a new file; the offset
 * file only for a journal this database never shipped (one shipped before cursors existed).
 */
async function startOffset(pool: Pool, hostId: string, id: WorktreeIdentity, inode: string): Promise<number> {
  const res = await pool.query<{ inode: string; shipped_offset: string }>(
    'SELECT inode, shipped_offset FROM journal_cursors WHERE host_id = $1 AND git_dir = $2',
    [hostId, id.privateDir],
  );
  const cursor = res.rows[0];
  if (!cursor) return readShippedOffset(id);
  return cursor.inode === inode ? Number(cursor.shipped_offset) : 0;
}

async function recordRead(pool: Pool, hostId: string, gitDir: string, file: { inode: string; size: number }, at: Date): Promise<void> {
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
async function writtenAfter(pool: Pool, hostId: string, gitDir: string, inode: string, offsets: readonly number[]): Promise<Map<number, number | null>> {
  const res = await pool.query<{ o: string; at: Date | null }>(
    `SELECT o::text AS o, (SELECT max(read_at) FROM journal_reads WHERE host_id = $1 AND git_dir = $2 AND (inode <> $3 OR size_seen <= o)) AS at FROM unnest($4::bigint[]) AS o`,
    [hostId, gitDir, inode, [...offsets]],
  );
  return new Map(res.rows.map((r) => [Number(r.o), r.at ? r.at.getTime() : null]));
}

/** Every stretch during which a tenure held this worktree, from the ownership log of every ownership it had. */
async function tenuresOf(pool: Pool, id: WorktreeIdentity, hostId: string): Promise<TenureSegment[]> {
  const res = await pool.query<{ event: unknown }>(
    `SELECT event FROM ownership_events
      WHERE ownership_id IN (SELECT DISTINCT ownership_id FROM ownership_events WHERE worktree_path = $1 AND host_id = $2)
        AND type = ANY($3::text[]) AND NOT (type = 'ownership.heartbeat' AND event->'data'->>'transition' = 'periodic')
      ORDER BY ownership_id, seq`,
    [id.worktreePath, hostId, [...TENURE_EVENT_TYPES]],
  );
  return tenureSegments(res.rows.map((r) => parseEvent(r.event)));
}

/** After a journaled move: this worktree's own head, for its own ownership (never one a line names), for `who` and `list` (worktree-heads.ts). */
async function recordMovedHead(pool: Pool, id: WorktreeIdentity, hostId: string, lines: readonly JournalLine[]): Promise<void> {
  const moved = lines.filter((l) => l.kind === 'commit').at(-1);
  if (!moved || !(await commitExists(id, moved.new))) return;
  const own = await pool.query<{ ownership_id: string }>(
    'SELECT ownership_id FROM ownerships WHERE worktree_path = $1 AND host_id = $2 ORDER BY updated_at DESC LIMIT 1',
    [id.worktreePath, hostId],
  );
  const ownershipId = own.rows[0]?.ownership_id;
  if (!ownershipId) return;
  const status = await describeBranch(id.worktreePath).catch(() => null);
  if (status) await recordHead(pool, ownershipId, id.worktreePath, status);
}

async function commitExists(id: WorktreeIdentity, sha: string): Promise<boolean> {
  if (!FULL_SHA.test(sha)) return false;
  const res = await git(['cat-file', '-e', `${sha}^{commit}`], { cwd: id.worktreePath, env: { GIT_DIR: id.commonDir }, okCodes: [1, 128] });
  return res.code === 0;
}

/** Of `commits`, those not reachable from any of `tips` (all of them when there is no tip). */
async function notReachable(id: WorktreeIdentity, commits: readonly string[], tips: readonly string[]): Promise<Set<string>> {
  if (tips.length === 0 || commits.length === 0) return new Set(commits);
  const res = await git(['rev-list', '--no-walk=unsorted', ...commits, '--not', ...tips], {
    cwd: id.worktreePath,
    env: { GIT_DIR: id.commonDir },
    okCodes: [128],
  });
  return new Set(res.code === 0 ? res.stdout.split('\n').filter((s) => FULL_SHA.test(s)) : commits);
}

/**
 * The heads of every other worktree of this repository, from git's own worktree list (not a line's
 * word), owned or not: a commit made in a worktree nobody holds (the main worktree, one never
 * bound, one released) is as much another worktree's as one made under another owner, and a forged
 * line in this journal naming it must not make it this tenure's.
 */
async function otherHeads(id: WorktreeIdentity): Promise<string[]> {
  const list = await git(['worktree', 'list', '--porcelain'], { cwd: id.worktreePath, okCodes: [128] });
  const heads: string[] = [];
  for (const block of list.stdout.split('\n\n')) {
    const wt = /^worktree (.+)$/m.exec(block)?.[1];
    const head = /^HEAD ([0-9a-f]+)$/m.exec(block)?.[1];
    if (!wt || !head || !FULL_SHA.test(head)) continue;
    const real = await fs.realpath(wt).catch(() => wt);
    if (real !== id.worktreePath) heads.push(head);
  }
  return heads;
}

async function ownHead(id: WorktreeIdentity): Promise<string | null> {
  const res = await git(['rev-parse', '--verify', '--quiet', 'HEAD'], { ...pinnedGit(id), okCodes: [1, 128] });
  const head = res.stdout.trim();
  return res.code === 0 && FULL_SHA.test(head) ? head : null;
}

interface ReportRow {
  commit: string;
  ref: string;
  offset: number;
  claim: LineClaim;
  judgement: Judgement;
  window: { from: number | null; to: number };
}

async function rowsOf(
  pool: Pool,
  id: WorktreeIdentity,
  hostId: string,
  inode: string,
  lines: JournalLine[],
  readAt: number,
): Promise<{ reports: ReportRow[]; refusals: JournalLine[] }> {
  const reports: ReportRow[] = [];
  const refusals: JournalLine[] = lines.filter((l) => (REFUSAL_KINDS as readonly string[]).includes(l.kind));
  const moves = lines.filter((l) => l.kind === 'commit');
  if (moves.length === 0) return { reports, refusals };
  const reflog = await reflogMessages(id, new Set(moves.map((l) => l.ref)));
  const tenures = await tenuresOf(pool, id, hostId);
  const after = await writtenAfter(
    pool,
    hostId,
    id.privateDir,
    inode,
    moves.map((l) => l.offset),
  );
  let heads: { others: string[]; own: string | null } | null = null;
  for (const line of moves) {
    const commits = await commitsOfMove(id, line, reflog);
    if (commits.length === 0) continue;
    const claim = claimOf(line);
    const window = { from: after.get(line.offset) ?? null, to: readAt };
    const judgement = judgeClaim(claim, tenures, { from: window.from === null ? null : window.from - CLOCK_SLACK_MS, to: window.to + CLOCK_SLACK_MS });
    let contested = new Set<string>();
    if (judgement.verdict === 'attributed') {
      // A commit on another worktree's branch (owned or free) and not on this one's was made there:
      // this journal claiming it (a forged line, a forged reflog) does not make it this worktree's.
      heads ??= { others: await otherHeads(id), own: await ownHead(id) };
      if (heads.others.length > 0) {
        const offOthers = await notReachable(id, commits, heads.others);
        const offOwn = await notReachable(id, commits, heads.own ? [heads.own] : []);
        contested = new Set(commits.filter((c) => !offOthers.has(c) && offOwn.has(c)));
      }
    }
    for (const commit of commits) {
      const j: Judgement = contested.has(commit)
        ? { ...judgement, verdict: 'disputed', reason: 'attribution_commit_of_other_worktree', via: 'unknown' }
        : judgement;
      reports.push({ commit, ref: line.ref, offset: line.offset, claim, judgement: j, window });
    }
  }
  return { reports, refusals };
}

async function insertRows(
  pool: Pool,
  id: WorktreeIdentity,
  hostId: string,
  rows: { reports: ReportRow[]; refusals: JournalLine[] },
): Promise<{ attributed: number; unattributed: number; refusals: number }> {
  if (rows.reports.length === 0 && rows.refusals.length === 0) return { attributed: 0, unattributed: 0, refusals: 0 };
  return inTransaction(pool, async (client) => {
    let attributed = 0;
    let unattributed = 0;
    // One decision per commit at a time, whichever host ships it: locks taken in one order.
    const consistent = [...new Set(rows.reports.filter((r) => r.judgement.verdict === 'attributed').map((r) => r.commit))].sort();
    for (const c of consistent) await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`commit_report:${id.repoRoot}:${c}`]);
    for (const r of rows.reports) {
      const verdict = r.judgement.verdict === 'attributed' && (await reportedElsewhere(client, id, hostId, r.commit)) ? 'disputed' : r.judgement.verdict;
      const reason: AttributionReason | null = verdict !== r.judgement.verdict ? 'attribution_reported_by_other_worktree' : r.judgement.reason;
      const via = verdict === 'attributed' ? r.judgement.via : 'unknown';
      const rec = r.judgement.recorded;
      const res = await client.query(
        `INSERT INTO commit_reports (repo_root, commit_sha, host_id, git_dir, journal_offset, worktree_path, ref, verdict, reason, via,
           ownership_id, epoch, execution_session_id, worker_id, conversation_id,
           claimed_ownership_id, claimed_epoch, claimed_session_id, claimed_owner_session_id, claimed_worker_id, claimed_conversation_id, window_from, window_to)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23) ON CONFLICT DO NOTHING`,
        [
          id.repoRoot,
          r.commit,
          hostId,
          id.privateDir,
          r.offset,
          id.worktreePath,
          r.ref.slice(0, 1024),
          verdict,
          reason,
          via,
          rec?.ownershipId ?? null,
          rec?.epoch ?? null,
          rec?.executionSessionId ?? null,
          rec?.workerId ?? null,
          rec?.conversationId ?? null,
          r.claim.ownershipId,
          r.claim.epoch,
          r.claim.committerSessionId,
          r.claim.executionSessionId,
          r.claim.workerId,
          r.claim.conversationId,
          r.window.from === null ? null : new Date(r.window.from),
          new Date(r.window.to),
        ],
      );
      if ((res.rowCount ?? 0) > 0) {
        if (verdict === 'attributed') attributed++;
        else unattributed++;
      }
    }
    let refusals = 0;
    for (const r of rows.refusals) {
      const opt = (s: string): string | null => (s === '' ? null : s.slice(0, 1024));
      const res = await client.query(
        `INSERT INTO git_refusals (host_id, git_dir, journal_offset, kind, code, ownership_id, epoch, execution_session_id, env_epoch, owner_session_id, ref, old_head, new_head, command, repo_root, worktree_path)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT DO NOTHING`,
        [
          hostId,
          id.privateDir,
          r.offset,
          r.kind,
          r.code === '' ? 'refused' : r.code.slice(0, 64),
          isId(r.ownership) ? r.ownership : null,
          /^[0-9]{1,9}$/.test(r.epoch) ? Number(r.epoch) : null,
          isId(r.session) ? r.session : null,
          opt(r.env_epoch),
          isId(r.owner) ? r.owner : null,
          opt(r.ref),
          opt(r.old),
          opt(r.new),
          opt(r.command),
          id.repoRoot,
          id.worktreePath,
        ],
      );
      refusals += res.rowCount ?? 0;
    }
    return { attributed, unattributed, refusals };
  });
}

/** Another worktree already reports this commit as its own (attributed, or competing): first shipped is not first served. */
async function reportedElsewhere(client: PoolClient, id: WorktreeIdentity, hostId: string, commit: string): Promise<boolean> {
  const res = await client.query(
    `SELECT 1 FROM commit_reports WHERE repo_root = $1 AND commit_sha = $2 AND NOT (host_id = $3 AND worktree_path = $4)
        AND (verdict = 'attributed' OR reason = 'attribution_reported_by_other_worktree') LIMIT 1`,
    [id.repoRoot, commit, hostId, id.worktreePath],
  );
  return (res.rowCount ?? 0) > 0;
}

// --- reading --------------------------------------------------------------------------------------

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
       SELECT DISTINCT ON (commit_sha) commit_sha, status, ownership_id, epoch, execution_session_id, worker_id, conversation_id, via
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
      conversation: conversationAt(r.log ?? [], r.ownership_id, r.epoch, r.execution_session_id, r.conversation_id),
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
