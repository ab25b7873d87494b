import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { git } from '../git/exec';
import { normalizePath } from '../git/paths';

/**
 * What `who` / `history` were given: a worktree path or a name (branch, lane, commit). A removed
 * worktree's path must still be looked up as a path, since its history outlives it (docs/guarantees.md, promise 7).
 *
 * - Only a path: absolute, `.`/`..`, `./…`, `../…`, `~`/`~/…`. Git ref names cannot begin with `/`
 *   or `.` and never contain `~` (git check-ref-format), so none of these can be a branch.
 * - A path: an existing directory (as before: a directory named like a branch wins), or an
 *   existing file named with a slash (its worktree).
 * - Probably a path: a relative name with a slash whose parent directory exists, e.g.
 *   `.worktrees/feature-x` after `git worktree remove`. `wt/feature-x` is also a branch spelling,
 *   and a `wt/` directory may well exist, so it is tried as a path first and then as a name.
 * - Otherwise a name.
 *
 * A path is normalised as the server does (realpath of the existing prefix, the rest appended);
 * an existing one is taken to the top of its worktree, so a subdirectory names its worktree.
 */
export type Target = { kind: 'path'; path: string; fallback: boolean } | { kind: 'name'; name: string };

function onlyAPath(arg: string): boolean {
  return path.isAbsolute(arg) || arg === '.' || arg === '..' || arg.startsWith('./') || arg.startsWith('../') || arg === '~' || arg.startsWith('~/');
}

function expandHome(arg: string): string {
  return arg === '~' || arg.startsWith('~/') ? path.join(os.homedir(), arg.slice(1)) : arg;
}

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

async function worktreeTopOf(dir: string): Promise<string | null> {
  const res = await git(['rev-parse', '--show-toplevel'], { cwd: dir, okCodes: [128] }).catch(() => null);
  return res && res.code === 0 && res.stdout.trim() !== '' ? res.stdout.trim() : null;
}

/**
 * A directory whose `.git` is a linked worktree's gitdir file or a repository's git dir (HEAD in
 * it) is the top of its worktree: git would answer the same, so no git process is spent on it.
 * Anything else (an invalid `.git`, which git would skip or refuse) is asked of git.
 */
function isWorktreeTop(dir: string): boolean {
  const dotGit = path.join(dir, '.git');
  try {
    const st = statSync(dotGit);
    if (st.isDirectory()) return existsSync(path.join(dotGit, 'HEAD'));
    return st.isFile() && st.size < 4096 && readFileSync(dotGit, 'utf8').startsWith('gitdir: ');
  } catch {
    return false;
  }
}

async function normalised(abs: string): Promise<string> {
  if (existsSync(abs)) {
    const dir = statSync(abs).isDirectory() ? abs : path.dirname(abs);
    if (isWorktreeTop(dir)) return realpathSync(dir);
    const top = await worktreeTopOf(dir);
    if (top) return top;
  }
  return normalizePath(abs);
}

export async function resolveTarget(arg: string, cwd: string = process.cwd()): Promise<Target> {
  const abs = path.resolve(cwd, expandHome(arg));
  const slash = arg.includes('/');
  if (onlyAPath(arg) || isDir(abs) || (slash && existsSync(abs))) return { kind: 'path', path: await normalised(abs), fallback: false };
  if (slash && isDir(path.dirname(abs))) return { kind: 'path', path: await normalised(abs), fallback: true };
  return { kind: 'name', name: arg };
}
