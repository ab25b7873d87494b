import { promises as fs } from 'node:fs';
import path from 'node:path';
import { isNotFound } from './atomic';
import { GitSideError } from './errors';
import { git } from './exec';

export interface WorktreeDirs {
  /** The worktree's own git dir: `.git/worktrees/<name>` for a linked worktree, `.git` for the main one. */
  privateDir: string;
  /** The repository's shared git dir (objects, refs, shared config, hooks). */
  commonDir: string;
  isMain: boolean;
}

const cache = new Map<string, WorktreeDirs>();

/**
 * The git dirs of a worktree. Resolved once with git and cached; each later call re-checks the
 * worktree's `.git` entry on disk (no process) because a worktree removed and re-added at the same
 * path gets a new private dir (`wt1`, then `wt11`...).
 */
export async function worktreeDirs(worktreePath: string): Promise<WorktreeDirs> {
  const key = path.resolve(worktreePath);
  const cached = cache.get(key);
  if (cached !== undefined && (await stillPointsAt(key, cached))) return cached;
  cache.delete(key);
  const res = await git(['rev-parse', '--is-inside-work-tree', '--absolute-git-dir', '--git-common-dir', '--show-toplevel'], {
    cwd: key,
    okCodes: [128],
  });
  const [inside, gitDir, common, top] = res.stdout.split('\n');
  if (res.code !== 0 || inside !== 'true' || gitDir === undefined || common === undefined || top === undefined) {
    throw new GitSideError('not_a_worktree', 'path is not inside a git worktree');
  }
  // Projection and lock belong to a whole worktree; a subdirectory spelling would be a second key for it.
  if ((await fs.realpath(top)) !== (await fs.realpath(key))) {
    throw new GitSideError('not_a_worktree', 'path is inside a worktree but is not its top directory');
  }
  const privateDir = await fs.realpath(gitDir);
  const commonDir = await fs.realpath(path.resolve(key, common));
  const dirs: WorktreeDirs = { privateDir, commonDir, isMain: privateDir === commonDir };
  cache.set(key, dirs);
  return dirs;
}

async function stillPointsAt(worktree: string, dirs: WorktreeDirs): Promise<boolean> {
  const dotGit = path.join(worktree, '.git');
  try {
    const st = await fs.stat(dotGit);
    if (st.isDirectory()) return dirs.isMain && (await fs.realpath(dotGit)) === dirs.privateDir;
    const m = /^gitdir: (.+)$/m.exec(await fs.readFile(dotGit, 'utf8'));
    if (m?.[1] === undefined) return false;
    return (await fs.realpath(path.resolve(worktree, m[1].trim()))) === dirs.privateDir;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}
