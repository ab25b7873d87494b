import { promises as fs } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from './atomic';
import { GitSideError } from './errors';
import { assertUnderAllowedRoots, PathRefusal } from './paths';
import type { WorktreeDirs } from './repo';

/**
 * Every directory a write for this worktree lands in must sit under an allowed root: the worktree
 * itself AND the private and common git dirs its `.git` file leads to. Checking the worktree path
 * alone let a worktree under the roots whose `.git` names a git dir elsewhere have the projection,
 * the lock JSON and extensions.worktreeConfig written into a repository outside them. The dirs
 * are realpaths already (repo.ts); one that no longer resolves to itself moved meanwhile and is
 * refused too (fail closed).
 */
export async function confineDirs(dirs: WorktreeDirs, roots: readonly string[]): Promise<void> {
  for (const dir of new Set([dirs.worktreePath, dirs.privateDir, dirs.commonDir])) {
    const real = await assertUnderAllowedRoots(dir, roots, { mustExist: true }).catch((err: unknown) => {
      if (err instanceof PathRefusal && err.code === 'path_not_found') throw new GitSideError('worktree_missing', 'a git dir of the worktree disappeared');
      throw err;
    });
    if (real !== dir) throw new PathRefusal('path_outside_allowed_roots');
  }
}

/**
 * Re-checks, right before a write, that `dir` (a realpath that was checked) still resolves to
 * itself, so a git dir swapped for a symlink after the check is not written through. Retryable:
 * a retry resolves the worktree again and confineDirs then refuses what is outside the roots.
 *
 * What remains: between this realpath and the rename/mkdir that follows, a component of the path
 * could still be swapped by someone with write access to a parent directory (microseconds). Node
 * has no renameat/openat on a pinned directory descriptor, so the window can be narrowed, not
 * closed; exploiting it needs write access inside the allowed roots, i.e. the repository's owner.
 */
export async function assertDirUnchanged(dir: string): Promise<void> {
  let real: string;
  try {
    real = await fs.realpath(dir);
  } catch {
    throw new GitSideError('worktree_missing', 'a git dir of the worktree disappeared during the write');
  }
  if (real !== dir) throw new GitSideError('git_failed', 'a git dir of the worktree moved during the write');
}

/** Atomic write of `dir/name` through the verified real directory, re-verified before the rename. */
export async function writeInDir(dir: string, name: string, data: string, mode = 0o644): Promise<void> {
  const check = () => assertDirUnchanged(dir);
  await check();
  try {
    await writeFileAtomic(path.join(dir, name), data, mode, { beforeRename: check });
  } catch (err) {
    // The dir vanished under the write (`git worktree remove` deleting it meanwhile): final, not a retry.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new GitSideError('worktree_missing', 'a git dir of the worktree disappeared during the write');
    throw err;
  }
}

export async function removeInDir(dir: string, name: string): Promise<void> {
  await assertDirUnchanged(dir);
  await fs.rm(path.join(dir, name), { force: true });
}
