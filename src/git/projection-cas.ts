import path from 'node:path';
import { readFileIfExists } from './atomic';
import { confineDirs, writeInDir } from './confine';
import { GitSideError } from './errors';
import { clearLockIn } from './lock-file';
import { isLiveState, type LocalProjection, LocalProjectionSchema, PROJECTION_FILE, renderProjection } from './projection-format';
import { stashProvisional, supersedes } from './provisional-stash';
import { type WorktreeDirs, worktreeDirs } from './repo';
import { ensureWorktreeConfigExtension, probe, type Probed } from './worktree-config';

/**
 * The config projection's write step: which write may replace what is on disk (order by seq within
 * one ownership, compare-and-swap for explicit writers, never over another live ownership), and
 * the replacement itself, by rename.
 */

export interface WriteOptions {
  /** For clears: skip when the projection on disk has a higher seq (a late clear must not erase a newer owner). */
  clearIfSeqAtMost?: number;
  /**
   * For clears: the ownership being cleared. A projection of any other ownership on disk is not
   * ours to erase ('skipped'), whatever its seq: seqs of different ownerships do not compare.
   */
  clearOwnershipId?: string;
  /**
   * Replace whatever is on disk, whatever its seq or ownership: only for explicit paths (an offline
   * claim over a non-live projection, `od-worktree reconcile --repair`), never for the host agent's writes.
   */
  force?: boolean;
  /**
   * Compare-and-swap: write only when the seq on disk is still this one (null: no projection), else
   * 'skipped'; the order and conflict checks are bypassed. For explicit writers that decided on
   * what they read (offline claim, reconcile), so a projection the host agent wrote meanwhile is
   * never overwritten.
   */
  expectSeq?: number | null;
  /**
   * When set, the worktree and the private and common git dirs it leads to must all resolve under
   * one of these before anything is written (PathRefusal `path_outside_allowed_roots`).
   */
  allowedRoots?: readonly string[];
  /** Bounded wait for the cross-process writer lock (default DEFAULT_LOCK_WAIT_MS). */
  lockWaitMs?: number;
}

/** Resolves the worktree's dirs and, when roots are given, confines all of them (confine.ts). */
export async function openWorktree(worktreePath: string, opts: Pick<WriteOptions, 'allowedRoots'>): Promise<WorktreeDirs> {
  const dirs = await worktreeDirs(worktreePath);
  if (opts.allowedRoots !== undefined) await confineDirs(dirs, opts.allowedRoots);
  return dirs;
}

function conflict(current: LocalProjection): GitSideError {
  return new GitSideError(
    'projection_conflict',
    `the worktree carries live ownership ${current.ownershipId} (state ${current.state}); only an explicit repair replaces it`,
  );
}

/**
 * Whether an ordinary write (no force, no expectSeq) may replace what is on disk. Seqs order the
 * writes of ONE ownership; a projection of another ownership is replaced only when its lifecycle
 * no longer holds the worktree (released/landed/closed) or it is a provisional claim (stashed);
 * a live one is a `projection_conflict`.
 */
function mayReplace(probed: Probed, next: LocalProjection | null, opts: WriteOptions): boolean {
  const { current, seq } = probed;
  if (current === 'corrupt' || current === null) {
    // Nothing parseable to compare ownerships with: the seq alone, as far as it parses.
    if (next === null) return !(seq !== null && opts.clearIfSeqAtMost !== undefined && seq > opts.clearIfSeqAtMost);
    return !(seq !== null && next.seq < seq);
  }
  if (next === null) {
    if (opts.clearOwnershipId !== undefined && current.ownershipId !== opts.clearOwnershipId) return false;
    return !(opts.clearIfSeqAtMost !== undefined && current.seq > opts.clearIfSeqAtMost);
  }
  if (current.ownershipId === next.ownershipId) return next.seq >= current.seq;
  if (current.provisional === true || !isLiveState(current.state)) return true;
  throw conflict(current);
}

/** The config projection step, on resolved dirs, with the caller holding the chain and the writer lock. */
export async function writeProjectionAt(dirs: WorktreeDirs, valid: LocalProjection | null, opts: WriteOptions): Promise<'written' | 'skipped'> {
  await ensureWorktreeConfigExtension(dirs);
  const probed = await probe(dirs);
  if (opts.expectSeq !== undefined) {
    if (opts.expectSeq !== probed.seq) return 'skipped';
  } else if (opts.force !== true && !mayReplace(probed, valid, opts)) {
    return 'skipped';
  }
  if (supersedes(probed.current, valid)) await stashProvisional(dirs, probed.current);
  if (valid === null) {
    // An empty file rather than unlink: the include stays valid and readers see "no keys" atomically.
    if ((await readFileIfExists(path.join(dirs.privateDir, PROJECTION_FILE))) !== null) await writeInDir(dirs.privateDir, PROJECTION_FILE, '');
    await clearLockIn(dirs);
    return 'written';
  }
  await writeInDir(dirs.privateDir, PROJECTION_FILE, renderProjection(valid));
  return 'written';
}

/**
 * Unserialised config projection step (no chain, no writer lock): what writeProjection and
 * applyLocalProjection run inside both. Exported for the benchmark's breakdown.
 */
export async function writeProjectionIn(worktreePath: string, p: LocalProjection | null, opts: WriteOptions = {}): Promise<'written' | 'skipped'> {
  const valid = p === null ? null : LocalProjectionSchema.parse(p);
  return writeProjectionAt(await openWorktree(worktreePath, opts), valid, opts);
}
