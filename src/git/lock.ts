import path from 'node:path';
import { readFileIfExists } from './atomic';
import { removeInDir, writeInDir } from './confine';
import { clearLockIn, type LockJson, readLockIn, writeLockIn } from './lock-file';
import type { LocalProjection } from './projection-format';
import { type WorktreeDirs, worktreeDirs } from './repo';
import { serialisePerWorktree } from './serial';
import { withWriterLock } from './writer-lock';

export { LOCK_FILE, type LockJson, LockJsonSchema } from './lock-file';

/** Lock JSON (docs/git-projection.md#lock-file) for a projection; times are unix seconds. */
export function lockFromProjection(p: LocalProjection): LockJson {
  return {
    schema_version: 2,
    ownership_id: p.ownershipId,
    execution_session_id: p.executionSessionId,
    conversation_id: p.conversationId,
    claimed_at: Math.floor(Date.parse(p.claimedAt) / 1000),
    last_seen_at: Math.floor(Date.parse(p.lastSeenAt) / 1000),
    epoch: p.epoch,
  };
}

async function locked<T>(worktreePath: string, fn: (dirs: WorktreeDirs) => Promise<T>): Promise<T> {
  return serialisePerWorktree(worktreePath, async () => {
    const dirs = await worktreeDirs(worktreePath);
    return withWriterLock(dirs, () => fn(dirs));
  });
}

/** Writes `<private git dir>/overdeck.lock.json` by temp file + rename, under the worktree's writer lock. */
export async function writeLock(worktreePath: string, lock: LockJson): Promise<void> {
  await locked(worktreePath, (dirs) => writeLockIn(dirs, lock));
}

/** The lock JSON as written; a derived copy, for display and for checking it was written (never for a decision). */
export async function readLock(worktreePath: string): Promise<LockJson | null> {
  return readLockIn(await worktreeDirs(worktreePath));
}

export async function clearLock(worktreePath: string): Promise<void> {
  await locked(worktreePath, (dirs) => clearLockIn(dirs));
}

/** git keeps the lock reason in `<private git dir>/locked` (gitrepository-layout(5)). */
function oneLine(reason: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this screens out
  const controls = /[\x00-\x1f\x7f]+/g;
  return reason.replace(controls, ' ').trim().slice(0, 500);
}

const LOCKED = 'locked';

/**
 * git's worktree lock, so `git worktree remove`/`prune` refuse while the worktree is owned.
 * Written as the documented `<private git dir>/locked` file (what `git worktree lock` writes: the
 * reason and a newline) through the verified private dir, rather than by `git worktree lock`,
 * which would find the dir again by itself. Replaced by rename, so there is no instant in which
 * the worktree is unlocked. Idempotent. The main worktree cannot be locked: no-op.
 */
export async function lockWorktreeIn(dirs: WorktreeDirs, reason: string): Promise<void> {
  if (dirs.isMain) return;
  const wanted = oneLine(reason);
  if ((await readLockedReason(dirs)) === wanted) return;
  await writeInDir(dirs.privateDir, LOCKED, `${wanted}\n`);
}

/** git writes the reason followed by a newline; null when the worktree is not locked. */
async function readLockedReason(dirs: WorktreeDirs): Promise<string | null> {
  const raw = await readFileIfExists(path.join(dirs.privateDir, LOCKED));
  return raw === null ? null : raw.replace(/\n$/, '');
}

/** Unlocks (what `git worktree unlock` does: removes the file); an unlocked (or main) worktree is fine. */
export async function unlockWorktreeIn(dirs: WorktreeDirs): Promise<void> {
  if (dirs.isMain) return;
  await removeInDir(dirs.privateDir, LOCKED);
}

export async function worktreeLockReasonIn(dirs: WorktreeDirs): Promise<string | null> {
  return dirs.isMain ? null : readLockedReason(dirs);
}

export async function lockWorktree(worktreePath: string, reason: string): Promise<void> {
  await locked(worktreePath, (dirs) => lockWorktreeIn(dirs, reason));
}

export async function unlockWorktree(worktreePath: string): Promise<void> {
  await locked(worktreePath, (dirs) => unlockWorktreeIn(dirs));
}

/** The reason git shows for a locked worktree, or null when unlocked. */
export async function worktreeLockReason(worktreePath: string): Promise<string | null> {
  return worktreeLockReasonIn(await worktreeDirs(worktreePath));
}
