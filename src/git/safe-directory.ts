import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { GitEnvExtras } from './safe-env';

/**
 * The one repository a service git run may trust although another Unix user owns it.
 *
 * git refuses (`detected dubious ownership`) a repository it discovers from its working directory
 * when the worktree or git dir is owned by someone else, unless `safe.directory` names it in
 * protected config (system, global or the command line). The service reads no global or system
 * config (safe-env.ts), so a service running as its own Unix user (docs/operations.md#users)
 * against worktrees its agents own would fail every call. Each service run therefore carries
 * `-c safe.directory=<path>` naming exactly the repository git will open from that run: the
 * realpath of the directory git's own discovery stops at (the worktree top holding `.git`, or the
 * git dir itself for a bare repository or a run inside a git dir), or, for a run pinned with
 * GIT_DIR, the realpath of its work tree or git dir. Never `*`, never a prefix: a run trusts the
 * repository it was pointed at and no other. What points it there (the worktree paths confined to
 * OD_ALLOWED_ROOTS, confine.ts) is the caller's, as before.
 */
export async function safeDirectoryFor(cwd: string, env: GitEnvExtras = {}): Promise<string | null> {
  const pinned = env.GIT_WORK_TREE ?? env.GIT_DIR;
  if (pinned !== undefined) return realOrNull(path.resolve(cwd, pinned));
  const start = await realOrNull(path.resolve(cwd));
  if (start === null) return null;
  for (let dir = start; ; dir = path.dirname(dir)) {
    // git's order at each level: a `.git` entry first (worktree), then the directory as a git dir.
    if (await present(path.join(dir, '.git'))) return dir;
    if (await isGitDir(dir)) return dir;
    if (path.dirname(dir) === dir) return null;
  }
}

/** What git's is_git_directory accepts: HEAD, and objects/ + refs/ here or in the dir `commondir` names. */
async function isGitDir(dir: string): Promise<boolean> {
  if (!(await isFile(path.join(dir, 'HEAD')))) return false;
  let common = dir;
  try {
    const named = (await fs.readFile(path.join(dir, 'commondir'), 'utf8')).trim();
    if (named !== '') common = path.resolve(dir, named);
  } catch {
    // no commondir: a main git dir
  }
  return (await isDir(path.join(common, 'objects'))) && (await isDir(path.join(common, 'refs')));
}

async function realOrNull(p: string): Promise<string | null> {
  return fs.realpath(p).catch(() => null);
}

async function present(p: string): Promise<boolean> {
  return fs.lstat(p).then(
    () => true,
    () => false,
  );
}

async function isFile(p: string): Promise<boolean> {
  return fs.stat(p).then(
    (s) => s.isFile(),
    () => false,
  );
}

async function isDir(p: string): Promise<boolean> {
  return fs.stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );
}
