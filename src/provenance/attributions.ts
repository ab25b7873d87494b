import { promises as fs } from 'node:fs';
import type { Pool, PoolClient } from '../store/db';
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
import { FULL_SHA, IdString } from '../domain/identity';
import {
  judgeClaim,
  tenureSegments,
  TENURE_EVENT_TYPES,
  type AttributionReason,
  type Judgement,
  type LineClaim,
  type TenureSegment,
} from '../domain/attribution';

import { parseEvent } from '../domain/events';
import { describeBranch } from '../git/status';
import { recordHead } from '../store/worktree-heads';
import { inTransaction } from '../store/db';

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
 * that worktree then (src/domain/attribution.ts), or a child holding under it (the child's, with
 * its hold and the parent). What the line names is kept as a claim beside it.
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
           claimed_ownership_id, claimed_epoch, claimed_session_id, claimed_owner_session_id, claimed_worker_id, claimed_conversation_id, window_from, window_to,
           hold_id, parent_execution_session_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25) ON CONFLICT DO NOTHING`,
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
          // A child's commit (via hold): the hold and the parent session, when it stays attributed.
          via === 'hold' ? (r.judgement.hold?.holdId ?? null) : null,
          via === 'hold' ? (r.judgement.hold?.parentExecutionSessionId ?? null) : null,
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
