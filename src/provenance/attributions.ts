import { promises as fs } from 'node:fs';
import type { Pool } from '../store/db';
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
import {
  commitReportedElsewhere,
  insertCommitReport,
  insertGitRefusal,
  lastReadsBefore,
  latestOwnershipAt,
  lockCommitReports,
  readJournalCursor,
  recordJournalRead,
  worktreeTenureEvents,
  writeJournalCursor,
} from '../store/journal-rows';

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
    await recordJournalRead(pool, opts.hostId, id.privateDir, now, new Date());
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
    await writeJournalCursor(pool, opts.hostId, id.privateDir, file.inode, chunk.end);
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
  const cursor = await readJournalCursor(pool, hostId, id.privateDir);
  if (!cursor) return readShippedOffset(id);
  return cursor.inode === inode ? cursor.offset : 0;
}

/** Every stretch during which a tenure held this worktree, from the ownership log of every ownership it had. */
async function tenuresOf(pool: Pool, id: WorktreeIdentity, hostId: string): Promise<TenureSegment[]> {
  return tenureSegments((await worktreeTenureEvents(pool, id.worktreePath, hostId, TENURE_EVENT_TYPES)).map(parseEvent));
}

/** After a journaled move: this worktree's own head, for its own ownership (never one a line names), for `who` and `list` (worktree-heads.ts). */
async function recordMovedHead(pool: Pool, id: WorktreeIdentity, hostId: string, lines: readonly JournalLine[]): Promise<void> {
  const moved = lines.filter((l) => l.kind === 'commit').at(-1);
  if (!moved || !(await commitExists(id, moved.new))) return;
  const ownershipId = await latestOwnershipAt(pool, id.worktreePath, hostId);
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
  const after = await lastReadsBefore(
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
    await lockCommitReports(client, id.repoRoot, [...new Set(rows.reports.filter((r) => r.judgement.verdict === 'attributed').map((r) => r.commit))]);
    const here = { repoRoot: id.repoRoot, hostId, worktreePath: id.worktreePath };
    for (const r of rows.reports) {
      // First shipped is not first served: another worktree's report of the commit as its own makes this one disputed.
      const verdict = r.judgement.verdict === 'attributed' && (await commitReportedElsewhere(client, here, r.commit)) ? 'disputed' : r.judgement.verdict;
      const reason: AttributionReason | null = verdict !== r.judgement.verdict ? 'attribution_reported_by_other_worktree' : r.judgement.reason;
      const rec = r.judgement.recorded;
      const inserted = await insertCommitReport(client, {
        repoRoot: id.repoRoot,
        commit: r.commit,
        hostId,
        gitDir: id.privateDir,
        offset: r.offset,
        worktreePath: id.worktreePath,
        ref: r.ref.slice(0, 1024),
        verdict,
        reason,
        via: verdict === 'attributed' ? r.judgement.via : 'unknown',
        // A child's commit (via hold): the hold and the parent session, when it stays attributed.
        hold: r.judgement.hold ?? null,
        recorded: rec
          ? {
              ownershipId: rec.ownershipId ?? null,
              epoch: rec.epoch ?? null,
              executionSessionId: rec.executionSessionId ?? null,
              workerId: rec.workerId ?? null,
              conversationId: rec.conversationId ?? null,
            }
          : null,
        claimed: {
          ownershipId: r.claim.ownershipId,
          epoch: r.claim.epoch,
          committerSessionId: r.claim.committerSessionId,
          executionSessionId: r.claim.executionSessionId,
          workerId: r.claim.workerId,
          conversationId: r.claim.conversationId,
        },
        windowFrom: r.window.from === null ? null : new Date(r.window.from),
        windowTo: new Date(r.window.to),
      });
      if (inserted) {
        if (verdict === 'attributed') attributed++;
        else unattributed++;
      }
    }
    let refusals = 0;
    for (const r of rows.refusals) {
      const opt = (s: string): string | null => (s === '' ? null : s.slice(0, 1024));
      const inserted = await insertGitRefusal(client, {
        hostId,
        gitDir: id.privateDir,
        offset: r.offset,
        kind: r.kind,
        code: r.code === '' ? 'refused' : r.code.slice(0, 64),
        ownershipId: isId(r.ownership) ? r.ownership : null,
        epoch: /^[0-9]{1,9}$/.test(r.epoch) ? Number(r.epoch) : null,
        executionSessionId: isId(r.session) ? r.session : null,
        envEpoch: opt(r.env_epoch),
        ownerSessionId: isId(r.owner) ? r.owner : null,
        ref: opt(r.ref),
        oldHead: opt(r.old),
        newHead: opt(r.new),
        command: opt(r.command),
        repoRoot: id.repoRoot,
        worktreePath: id.worktreePath,
      });
      if (inserted) refusals++;
    }
    return { attributed, unattributed, refusals };
  });
}
