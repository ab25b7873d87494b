import { promises as fs } from 'node:fs';
import { GitSideError } from '../git/errors';
import { git } from '../git/exec';
import { confineDirs } from '../git/confine';
import { assertUnderAllowedRoots, normalizePath, PathRefusal } from '../git/paths';
import { checkedOutBranch } from '../git/head';
import { identifyWorktree } from '../git/repo';

export interface WorktreeInfo {
  /** realpath of the worktree's top directory */
  path: string;
  /** realpath of the repository's main worktree (what the service calls repoRoot) */
  repoRoot: string;
  /** checked-out branch without refs/heads/, null when HEAD is detached */
  branch: string | null;
}

/** The top of the worktree containing `p` (any subdirectory works), its repository root and branch. */
export async function inspectWorktree(p: string, allowedRoots?: readonly string[]): Promise<WorktreeInfo> {
  let start: string;
  try {
    start = allowedRoots ? await assertUnderAllowedRoots(p, allowedRoots, { mustExist: true }) : await normalizePath(p);
  } catch (err) {
    if (err instanceof PathRefusal) throw new GitSideError('invalid_argument', err.message);
    throw err;
  }
  const top = await git(['rev-parse', '--show-toplevel'], { cwd: start, okCodes: [128] }).catch(() => null);
  if (top === null || top.code !== 0 || top.stdout.trim() === '') throw new GitSideError('not_a_worktree', 'path is not inside a git worktree');
  // The one derivation of the repository root (git/repo.ts), and every git dir under the roots.
  const id = await identifyWorktree(await fs.realpath(top.stdout.trim()));
  if (allowedRoots) {
    await confineDirs(id, allowedRoots).catch((err: unknown) => {
      if (err instanceof PathRefusal) throw new GitSideError('invalid_argument', err.message);
      throw err;
    });
  }
  const wt = id.worktreePath;
  const repoRoot = id.repoRoot;
  return { path: wt, repoRoot, branch: await checkedOutBranch(id) };
}
