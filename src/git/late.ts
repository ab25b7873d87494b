import type { OwnershipRecord } from '../domain/projection';
import { isHeldState } from '../domain/states';
import { assertDirUnchanged, confineDirs } from './confine';
import { GitSideError } from './errors';
import { git } from './exec';
import { appendJournalLine, commitsOfMove, journalStat, readJournal, reflogEntries, type JournalLine } from './journal';
import { type LocalProjection, readProjection } from './projection';
import { pinnedGit, type WorktreeDirs, worktreeDirs } from './repo';
import { serialisePerWorktree } from './serial';
import { lateRef, preserveLateSnapshot } from './wip';
import { withWriterLock } from './writer-lock';

/**
 * Late work of an older tenure (docs/git-projection.md#late-work-of-an-older-tenure). Between an
 * owner change the record made (a forced reclaim while the host was cut off, its agent down) and
 * the host agent writing the newer projection, the worktree's hooks still enforce the older one:
 * its owner, with its tenure secret, can still commit there. Before the host agent writes the
 * newer projection (after which the new owner may move the branch), what that owner did late is
 * kept under refs/overdeck/wip/<ownership>/late-e<epoch> and said once in the journal
 * (`late_preserved`), which the shipper records for `history`.
 *
 * "Late" is by the journal: a `commit` line of that ownership and epoch whose move git's reflog
 * dates after the newer tenure's start (the host's clock and the workflow's are assumed to agree).
 * Git's reflog names whole seconds: a move in the very second of the change counts as late when
 * the newer tenure was taken by a reclaim, not when it was handed over (a handoff's owner gave the
 * worktree up; its last commits before that are its own); and the files on disk when the record says the older owner's
 * WIP was not preserved at the owner change. Who made those commits is not decided here: the
 * shipper attributes each commit line from the ownership log, as any other.
 */

/** How much of the journal's end is searched for the older tenure's lines (they are its newest). */
export const LATE_SCAN_BYTES = 4 * 1024 * 1024;
/** Late commits one `late_preserved` line lists (the line stays one write under PIPE_BUF); the rest are counted in `more`. */
export const LATE_COMMITS_LISTED = 48;
/** The clocks of the host (the journal's read) and the workflow workers (the record) are assumed to agree within this (as attribution's CLOCK_SLACK_MS): the shipper's check of a late line. */
export const LATE_CLOCK_SLACK_MS = 2_000;
/** Late commits off HEAD (a reset after them) the snapshot keeps as further parents. */
const ALSO_KEEP_MAX = 16;

/** The older tenure whose late work a projection write must look for. */
export interface LateTenure {
  ownershipId: string;
  epoch: number;
  executionSessionId: string;
  /** ms since the epoch: when the next tenure of the ownership began (its lineage entry) */
  since: number;
  /** the next tenure was taken from this one (a reclaim), not handed over by it */
  takenFrom: boolean;
  /** the record says this tenure's WIP was not preserved when it ended: the files on disk are its too */
  wipNotPreserved: boolean;
}

/**
 * The tenure the worktree's hooks still enforce when the record has moved past it: the same
 * ownership at an older epoch, held. Null otherwise (no projection, another or a provisional
 * ownership, a free state, or nothing newer).
 */
export function lateTenureOf(local: LocalProjection | null, record: OwnershipRecord): LateTenure | null {
  if (local === null || local.provisional === true || local.ownershipId !== record.ownershipId) return null;
  if (local.epoch >= record.epoch || !isHeldState(local.state)) return null;
  const next = record.lineage.find((l) => l.epoch > local.epoch);
  if (next === undefined) return null;
  const own = record.lineage.find((l) => l.epoch === local.epoch);
  const began = own === undefined ? -Infinity : Date.parse(own.at);
  const w = record.wipNotPreserved ?? null;
  return {
    ownershipId: local.ownershipId,
    epoch: local.epoch,
    executionSessionId: local.executionSessionId,
    since: Date.parse(next.at),
    takenFrom: next.via === 'reclaim' || next.via === 'forced_reclaim',
    wipNotPreserved: w !== null && w.executionSessionId === local.executionSessionId && Date.parse(w.at) >= began,
  };
}

export interface LatePreserved {
  ref: string;
  sha: string;
  /** HEAD when the snapshot was made (its first parent) */
  head: string | null;
  /** the late commits, oldest first */
  commits: string[];
  /** the snapshot holds files that differ from that HEAD (uncommitted or untracked) */
  uncommitted: boolean;
  /** false: an earlier call made the ref (a retried activity), and it is what is returned */
  created: boolean;
  /** this call appended the `late_preserved` line (false: the journal had it already) */
  journaled: boolean;
}

export interface LateOptions {
  allowedRoots?: readonly string[];
  signal?: AbortSignal;
  heartbeat?: () => void;
}

/**
 * Preserves the late work of the tenure the worktree still enforces, if the record has moved past
 * it; null when there is none. Run before the projection of `record` is written. Idempotent: the
 * ref is made once (a retry returns it) and the journal line is appended only when the journal
 * does not hold it yet. A worktree that is gone has nothing to preserve (null).
 */
export async function preserveLateWork(worktreePath: string, record: OwnershipRecord, opts: LateOptions = {}): Promise<LatePreserved | null> {
  // A first tenure follows no other of its ownership: the common projection write starts no git here.
  if (record.epoch <= 1 || record.lineage.length < 2) return null;
  let dirs: WorktreeDirs;
  try {
    dirs = await worktreeDirs(worktreePath);
    if (opts.allowedRoots !== undefined) await confineDirs(dirs, opts.allowedRoots);
  } catch (err) {
    if (err instanceof GitSideError && err.code === 'worktree_missing') return null;
    throw err;
  }
  const local = await readProjection(dirs.worktreePath);
  const tenure = lateTenureOf(local, record);
  if (tenure === null) return null;
  // The same chain and lock as the projection write that follows: two attempts never snapshot or journal at once.
  return serialisePerWorktree(dirs.worktreePath, () => withWriterLock(dirs, () => preserveUnderLock(dirs, tenure, opts)));
}

async function preserveUnderLock(dirs: WorktreeDirs, t: LateTenure, opts: LateOptions): Promise<LatePreserved | null> {
  const ref = lateRef(t.ownershipId, t.epoch);
  const found = await scanJournal(dirs, t, ref);
  const pinned = pinnedGit(dirs);
  const revParse = async (rev: string): Promise<string | null> => {
    const res = await git(['rev-parse', '-q', '--verify', `${rev}^{object}`], { cwd: pinned.cwd, env: pinned.env, okCodes: [1, 128] });
    return res.code === 0 ? res.stdout.trim() : null;
  };
  const existing = await revParse(ref);
  if (existing === null && found.commits.length === 0 && !t.wipNotPreserved) return null;

  const head = await revParse('HEAD');
  const offHead = head === null ? found.commits : await notReachable(dirs, found.commits, head);
  const snap = await preserveLateSnapshot(
    dirs.worktreePath,
    ref,
    `od-worktree: late work of ${t.executionSessionId} at epoch ${t.epoch} of ${t.ownershipId}\n`,
    {
      ...(opts.allowedRoots !== undefined ? { allowedRoots: opts.allowedRoots } : {}),
      ...(opts.signal !== undefined ? { signal: opts.signal } : {}),
      ...(opts.heartbeat !== undefined ? { heartbeat: opts.heartbeat } : {}),
      alsoKeep: offHead.slice(-ALSO_KEEP_MAX),
      // WIP alone: a worktree that matches HEAD has nothing to keep.
      evenIfClean: found.commits.length > 0,
    },
  );
  if (snap === null) return null;

  // Read back from the snapshot itself, so a retry that finds the first one reports what it holds.
  const first = await revParse(`${snap.sha}^1`);
  const tree = await revParse(`${snap.sha}^{tree}`);
  const uncommitted = first === null || tree !== (await revParse(`${first}^{tree}`));
  // Only what the ref holds is listed (a snapshot an earlier attempt made predates later commits).
  const offSnapshot = new Set(await notReachable(dirs, found.commits, snap.sha));
  const commits = found.commits.filter((c) => !offSnapshot.has(c));

  let journaled = false;
  if (found.recorded === null) {
    await assertDirUnchanged(dirs.privateDir);
    await appendJournalLine(dirs, {
      kind: 'late_preserved',
      ref,
      old: first ?? '',
      new: snap.sha,
      session: t.executionSessionId,
      ownership: t.ownershipId,
      epoch: String(t.epoch),
      owner: t.executionSessionId,
      commits: commits.slice(0, LATE_COMMITS_LISTED).join(':'),
      more: String(Math.max(0, commits.length - LATE_COMMITS_LISTED)),
      uncommitted: uncommitted ? '1' : '0',
    });
    journaled = true;
  }
  return { ref, sha: snap.sha, head: first, commits, uncommitted, created: snap.created, journaled };
}

/**
 * The tenure's late commits in the journal's end, oldest first, and its `late_preserved` line for
 * `ref` if the journal holds one already.
 */
async function scanJournal(dirs: WorktreeDirs, t: LateTenure, ref: string): Promise<{ commits: string[]; recorded: JournalLine | null }> {
  const moves: JournalLine[] = [];
  let recorded: JournalLine | null = null;
  let at = Math.max(0, (await journalStat(dirs)).size - LATE_SCAN_BYTES);
  for (;;) {
    // A read that starts inside a line skips it: it does not parse as one.
    const chunk = await readJournal(dirs, at);
    for (const line of chunk.lines) {
      if (line.ownership !== t.ownershipId || line.epoch !== String(t.epoch)) continue;
      if (line.kind === 'commit') moves.push(line);
      else if (line.kind === 'late_preserved' && line.ref === ref) recorded = line;
    }
    if (!chunk.more || chunk.end === at) break;
    at = chunk.end;
  }
  if (moves.length === 0) return { commits: [], recorded };
  const reflog = await reflogEntries(dirs, new Set(moves.map((l) => l.ref)));
  const messages = new Map([...reflog].map(([move, e]) => [move, e.message]));
  const commits: string[] = [];
  for (const line of moves) {
    // Git names the second it wrote the entry in. A commit in the very second of the change is
    // ambiguous: after a reclaim (the tenure was taken, its owner likely cut off) it is kept as
    // late, since keeping costs a ref; after a handoff (its owner gave the worktree up) it is the
    // tenure's own last commit. Either way the journal attributes it to this session.
    const when = reflog.get(`${line.old} ${line.new}`)?.at ?? null;
    const late = when !== null && (t.takenFrom ? (when + 1) * 1000 > t.since : when * 1000 >= t.since);
    if (!late) continue;
    for (const c of await commitsOfMove(dirs, line, messages)) if (!commits.includes(c)) commits.push(c);
  }
  return { commits, recorded };
}

/** Of `commits`, those not reachable from `tip`. */
async function notReachable(dirs: WorktreeDirs, commits: readonly string[], tip: string): Promise<string[]> {
  if (commits.length === 0) return [];
  const pinned = pinnedGit(dirs);
  const res = await git(['rev-list', '--no-walk=unsorted', ...commits, '--not', tip], { cwd: pinned.cwd, env: pinned.env, okCodes: [128] });
  if (res.code !== 0) return [...commits];
  const off = new Set(res.stdout.split('\n').filter((s) => s !== ''));
  return commits.filter((c) => off.has(c));
}
