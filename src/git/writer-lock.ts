import path from 'node:path';
import lockfile from 'proper-lockfile';
import { assertDirUnchanged } from './confine';
import { GitSideError } from './errors';
import type { WorktreeDirs } from './repo';

/** A directory (mkdir is the atomic test-and-set) in the worktree's private git dir. */
export const WRITER_LOCK_DIR = 'overdeck.write.lock';

/**
 * A holder refreshes the lock's mtime every STALE_MS / 2; one that has not for STALE_MS crashed
 * (or its event loop stalled that long) and the lock is taken over. Writes under it take
 * milliseconds, so this only decides how long a crashed holder blocks the worktree.
 */
const STALE_MS = 5_000;
/** Longer than STALE_MS, so one call outlasts a crashed holder's lock. */
export const DEFAULT_LOCK_WAIT_MS = 12_000;

export interface WriterLockOptions {
  /** Bounded wait for the lock; then a retryable `projection_busy`. */
  waitMs?: number;
}

/**
 * Runs `fn` holding the worktree's cross-process writer lock: the worker's host agent, a second
 * host agent with the same host id, `od-worktree claim --offline` and reconcile each read-probe-
 * write the projection (config include file, lock JSON, git worktree lock) only inside it.
 *
 * proper-lockfile (mkdir + mtime refresh) rather than O_EXCL + pid: staleness by mtime works when
 * the writers sit in different pid namespaces (the worker in a container, the CLI on the host, one
 * bind-mounted worktree) where a pid says nothing, and it cannot be fooled by pid reuse. What it
 * cannot rule out: two contenders taking over the same stale lock at the same instant, or a holder
 * stalled beyond STALE_MS; a takeover noticed while held fails the call (retryable) after `fn`.
 * Hooks never take the lock: readers see whole files (rename), so the hot path stays process-free.
 */
export async function withWriterLock<T>(dirs: WorktreeDirs, fn: () => Promise<T>, opts: WriterLockOptions = {}): Promise<T> {
  return withDirLock(dirs.privateDir, WRITER_LOCK_DIR, fn, opts);
}

/** The same lock on `lockName` in `dir` (a git dir of ours, checked unchanged before each attempt). */
export async function withDirLock<T>(dir: string, lockName: string, fn: () => Promise<T>, opts: WriterLockOptions = {}): Promise<T> {
  const lockPath = path.join(dir, lockName);
  const deadline = Date.now() + (opts.waitMs ?? DEFAULT_LOCK_WAIT_MS);
  let compromised = false;
  let release: () => Promise<void>;
  for (let attempt = 0; ; attempt++) {
    await assertDirUnchanged(dir);
    try {
      release = await lockfile.lock(lockPath, {
        lockfilePath: lockPath,
        realpath: false,
        stale: STALE_MS,
        retries: 0,
        onCompromised: () => {
          compromised = true;
        },
      });
      break;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new GitSideError('worktree_missing', "the worktree's private git dir disappeared");
      if (code !== 'ELOCKED') throw err;
      const left = deadline - Date.now();
      if (left <= 0) throw new GitSideError('projection_busy', 'another writer held the worktree projection lock too long; retry');
      // Short, jittered, growing pauses: holders keep it for milliseconds.
      await new Promise((r) => setTimeout(r, Math.min(left, Math.random() * Math.min(5 + attempt * 5, 100))));
    }
  }
  try {
    const result = await fn();
    if (compromised) throw new GitSideError('projection_busy', 'the projection lock was taken over while held; retry');
    return result;
  } finally {
    await release().catch(() => undefined); // already gone when compromised
  }
}
