import path from 'node:path';
import { readFileIfExists } from './atomic';
import { GitSideError } from './errors';
import { git } from './exec';
import { PROJECTION_FILE, PROJECTION_KEYS } from './projection-format';
import { pinnedGit, type WorktreeDirs } from './repo';

/**
 * What a worktree says of itself, read on its own host through its resolved (and, by the caller,
 * confined) git dirs: the branch checked out, and the ownership its local projection names.
 */

/** The branch checked out in the worktree, without refs/heads/; null when HEAD is detached (or names no branch). */
export async function checkedOutBranch(dirs: WorktreeDirs): Promise<string | null> {
  const head = await git(['symbolic-ref', '-q', 'HEAD'], { ...pinnedGit(dirs), okCodes: [1] });
  const ref = head.code === 0 ? head.stdout.trim() : '';
  return ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null;
}

/**
 * The ownership the worktree's projection (overdeck.config in its private git dir) names, or null.
 * The private git dir travels with the worktree through `git worktree move`, so a moved worktree
 * still names the ownership recorded at its old path. A projection git cannot read names nothing:
 * this is a hint for a lookup in PostgreSQL, never a decision by itself. No process for a worktree
 * that never had one.
 */
export async function projectedOwnershipId(dirs: WorktreeDirs): Promise<string | null> {
  const file = path.join(dirs.privateDir, PROJECTION_FILE);
  const raw = await readFileIfExists(file);
  if (raw === null || raw.trim() === '') return null;
  try {
    const res = await git(['config', '-z', '--file', file, '--get', PROJECTION_KEYS.ownershipId], { ...pinnedGit(dirs), okCodes: [1] });
    const id = res.code === 0 ? res.stdout.replace(/\0$/, '').trim() : '';
    return id === '' ? null : id;
  } catch (err) {
    if (err instanceof GitSideError) return null;
    throw err;
  }
}
