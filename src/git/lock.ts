import path from 'node:path';
import { readFileIfExists, writeFileAtomic } from './atomic';
import { GitSideError } from './errors';
import { git } from './exec';
import { clearLockIn, type LockJson, readLockIn, writeLockIn } from './lock-file';
import type { LocalProjection } from './projection';
import { worktreeDirs } from './repo';

export { LOCK_FILE, type LockJson, LockJsonSchema } from './lock-file';

/** Lock JSON of spec §10 for a projection; times become unix seconds as the spec's example shows. */
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

/** Writes `<private git dir>/overdeck.lock.json` by temp file + rename. */
export async function writeLock(worktreePath: string, lock: LockJson): Promise<void> {
  await writeLockIn(await worktreeDirs(worktreePath), lock);
}

export async function readLock(worktreePath: string): Promise<LockJson | null> {
  return readLockIn(await worktreeDirs(worktreePath));
}

export async function clearLock(worktreePath: string): Promise<void> {
  await clearLockIn(await worktreeDirs(worktreePath));
}

/** git keeps the lock reason in `<private git dir>/locked` (gitrepository-layout(5)). */
function oneLine(reason: string): string {
  return reason.replace(/[\x00-\x1f\x7f]+/g, ' ').trim().slice(0, 500);
}

/**
 * `git worktree lock` so `git worktree remove`/`prune` refuse while the worktree is owned.
 * Idempotent. A new reason on an already-locked worktree replaces the documented `locked` file by
 * rename instead of unlock + lock, so there is no instant in which the worktree is unlocked.
 * The main worktree cannot be locked by git: no-op.
 */
export async function lockWorktree(worktreePath: string, reason: string): Promise<void> {
  const dirs = await worktreeDirs(worktreePath);
  if (dirs.isMain) return;
  const wanted = oneLine(reason);
  const lockedFile = path.join(dirs.privateDir, 'locked');
  const current = await readLockedReason(lockedFile);
  if (current === null) {
    const res = await git(['worktree', 'lock', '--reason', wanted, path.resolve(worktreePath)], { cwd: dirs.commonDir, okCodes: [128] });
    if (res.code === 0) return;
    // Lost a race with another locker: fall through and set our reason on the existing lock.
    if ((await readLockedReason(lockedFile)) === null) {
      throw new GitSideError('git_failed', `git worktree lock failed: ${res.stderr.split('\n')[0] ?? ''}`.slice(0, 240));
    }
  } else if (current === wanted) {
    return;
  }
  await writeFileAtomic(lockedFile, `${wanted}\n`); // same layout as git writes it
}

/** git writes the reason followed by a newline; null when the worktree is not locked. */
async function readLockedReason(lockedFile: string): Promise<string | null> {
  const raw = await readFileIfExists(lockedFile);
  return raw === null ? null : raw.replace(/\n$/, '');
}

/** `git worktree unlock`; an unlocked (or main) worktree is fine. */
export async function unlockWorktree(worktreePath: string): Promise<void> {
  const dirs = await worktreeDirs(worktreePath);
  if (dirs.isMain) return;
  const lockedFile = path.join(dirs.privateDir, 'locked');
  if ((await readLockedReason(lockedFile)) === null) return;
  const res = await git(['worktree', 'unlock', path.resolve(worktreePath)], { cwd: dirs.commonDir, okCodes: [128] });
  if (res.code !== 0 && (await readLockedReason(lockedFile)) !== null) {
    throw new GitSideError('git_failed', `git worktree unlock failed: ${res.stderr.split('\n')[0] ?? ''}`.slice(0, 240));
  }
}

/** The reason git shows for a locked worktree, or null when unlocked. */
export async function worktreeLockReason(worktreePath: string): Promise<string | null> {
  const dirs = await worktreeDirs(worktreePath);
  if (dirs.isMain) return null;
  return readLockedReason(path.join(dirs.privateDir, 'locked'));
}
