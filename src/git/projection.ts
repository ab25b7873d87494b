import path from 'node:path';
import { GitSideError } from './errors';
import { git } from './exec';
import { lockFromProjection, lockWorktreeIn, unlockWorktreeIn, worktreeLockReasonIn } from './lock';
import { clearLockIn, writeLockIn } from './lock-file';
import { openWorktree, type WriteOptions, writeProjectionAt } from './projection-cas';
import { isLiveState, type LocalProjection, LocalProjectionSchema, parseConfigZ, parseProjectionEntries } from './projection-format';
import type { WorktreeDirs } from './repo';
import { serialisePerWorktree } from './serial';
import { withWriterLock } from './writer-lock';
import { updateRegistryQuietly } from './registry';

/**
 * The worktree's local projection, as the rest of the code uses it: read what the hooks see, write
 * the config projection, or bring all three local artefacts (config projection, lock JSON, git's
 * worktree lock) to one ownership state, each under the per-worktree chain and the cross-process
 * writer lock. The format, the setup, the write step and the provisional stash are modules of
 * their own (projection-format.ts, worktree-config.ts, projection-cas.ts, provisional-stash.ts).
 */

export {
  isLiveState,
  isProvisionalConflictState,
  type LocalProjection,
  LocalProjectionSchema,
  NON_LIVE_STATES,
  parseConfigZ,
  parseProjectionEntries,
  PROJECTION_FILE,
  PROJECTION_KEYS,
  PROVISIONAL_CONFLICT_STATE,
  PROVISIONAL_CONFLICT_STATES,
  PROVISIONAL_STATE,
  renderProjection,
} from './projection-format';
export { type WriteOptions, writeProjectionIn } from './projection-cas';
export { clearSupersededProvisional, readSupersededProvisional, SUPERSEDED_PROVISIONAL_FILE } from './provisional-stash';

/**
 * The per-process chain, then the worktree's cross-process writer lock, around `fn` on the
 * worktree's resolved (and, with roots, confined) dirs.
 */
function underWriterLock<T>(worktreePath: string, opts: WriteOptions, fn: (dirs: WorktreeDirs) => Promise<T>): Promise<T> {
  return serialisePerWorktree(worktreePath, async () => {
    const dirs = await openWorktree(worktreePath, opts);
    return withWriterLock(dirs, () => fn(dirs), opts.lockWaitMs !== undefined ? { waitMs: opts.lockWaitMs } : {});
  });
}

/**
 * Replaces this worktree's projection as a whole (null clears it and the lock file). Returns
 * 'skipped' for a write older (lower seq) than what is on disk, so a late retry cannot roll back
 * a newer owner; throws `projection_conflict` over another live ownership.
 */
export async function writeProjection(worktreePath: string, p: LocalProjection | null, opts: WriteOptions = {}): Promise<'written' | 'skipped'> {
  const valid = p === null ? null : LocalProjectionSchema.parse(p);
  return underWriterLock(worktreePath, opts, (dirs) => writeProjectionAt(dirs, valid, opts));
}

/**
 * What the hooks see: worktree-scope config with includes followed. (`--worktree` alone does NOT
 * follow includes, as for any single-file scope; git 2.39 verified.) Every decision on the host
 * about who may mutate reads this, never the lock JSON.
 */
export async function readProjection(worktreePath: string): Promise<LocalProjection | null> {
  const res = await git(['config', '-z', '--worktree', '--includes', '--get-regexp', '^overdeck\\.'], {
    cwd: path.resolve(worktreePath),
    okCodes: [1, 128],
  });
  if (res.code === 1) return null;
  if (res.code === 128) {
    // Without the extension git refuses --worktree in a multi-worktree repo; we never wrote there.
    if (/worktreeConfig/i.test(res.stderr)) return null;
    throw new GitSideError('git_failed', `git config exited 128: ${res.stderr.split('\n')[0] ?? ''}`.slice(0, 240));
  }
  return parseProjectionEntries(parseConfigZ(res.stdout));
}

export interface ApplyOptions extends WriteOptions {
  /**
   * Whether git's own worktree lock should be held (so `git worktree remove`/`prune` refuse): held
   * while the state is live, dropped otherwise. false drops a lock we placed earlier but never a
   * lock someone else placed (reason without our prefix).
   */
  gitLock: boolean;
  /** Shown by `git worktree list`; prefixed with "overdeck: ". Default names session, ownership, epoch. */
  lockReason?: string;
}

export const GIT_LOCK_PREFIX = 'overdeck: ';

/** Ids only, never the conversation URL (docs/guarantees.md). */
export function gitLockReason(p: LocalProjection): string {
  return `owned by session ${p.executionSessionId} (ownership ${p.ownershipId}, epoch ${p.epoch})`;
}

/**
 * Brings all three local artefacts to one ownership state under the per-worktree chain and the
 * cross-process writer lock: config projection first (what hooks read, the authority), then the
 * lock JSON (docs/git-projection.md, derived from it), then git's worktree lock. A skipped (older)
 * projection leaves the locks alone too, so they never describe different owners.
 */
export async function applyLocalProjection(worktreePath: string, p: LocalProjection | null, opts: ApplyOptions): Promise<'written' | 'skipped'> {
  const valid = p === null ? null : LocalProjectionSchema.parse(p);
  return underWriterLock(worktreePath, opts, async (dirs) => {
    const result = await writeProjectionAt(dirs, valid, opts);
    // The repository's registry for other tools (registry.ts): this worktree's entry, after every projection, a skipped one too.
    if (result === 'skipped') return updateRegistryQuietly(dirs.commonDir, dirs.privateDir).then(() => result);
    const live = valid !== null && isLiveState(valid.state);
    if (valid !== null && live) await writeLockIn(dirs, lockFromProjection(valid));
    else await clearLockIn(dirs);
    if (valid !== null && live && opts.gitLock) {
      await lockWorktreeIn(dirs, GIT_LOCK_PREFIX + (opts.lockReason ?? gitLockReason(valid)));
    } else if ((await worktreeLockReasonIn(dirs))?.startsWith(GIT_LOCK_PREFIX) === true) {
      await unlockWorktreeIn(dirs);
    }
    await updateRegistryQuietly(dirs.commonDir, dirs.privateDir);
    return result;
  });
}
