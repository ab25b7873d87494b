import { promises as fs } from 'node:fs';
import path from 'node:path';
import { isNotFound } from './atomic';
import { GitSideError } from './errors';
import { git } from './exec';

export interface WorktreeDirs {
  /** realpath of the worktree's top directory (for a bare repository: the repository itself). */
  worktreePath: string;
  /** The worktree's own git dir: `.git/worktrees/<name>` for a linked worktree, `.git` for the main one. */
  privateDir: string;
  /** The repository's shared git dir (objects, refs, shared config, hooks). */
  commonDir: string;
  isMain: boolean;
}

export interface WorktreeIdentity extends WorktreeDirs {
  /**
   * The repository's root as the service keys it: the main worktree `git worktree list --porcelain`
   * names first, realpath'd. git derives that entry from the common dir alone (its real path,
   * minus a trailing `/.git`), so every worktree of a repository gets the same answer: the parent
   * of `.git` for an ordinary repository, the git dir itself for a bare or `--separate-git-dir` one.
   */
  repoRoot: string;
  /** The repository is bare (`git worktree list` marks its first entry `bare`). */
  bare: boolean;
}

interface Resolved {
  /** realpath of the worktree top; null inside a bare repository */
  top: string | null;
  privateDir: string;
  commonDir: string;
}

/**
 * One rev-parse for the git dirs of whatever contains `p`. A path that is gone, or a worktree whose
 * private git dir is gone (its `.git` file points at nothing), is `worktree_missing`: nothing a
 * retry can fix, unlike a git that failed to run.
 */
async function resolveGitDirs(p: string): Promise<Resolved> {
  const cwd = path.resolve(p);
  try {
    if (!(await fs.stat(cwd)).isDirectory()) throw new GitSideError('not_a_worktree', 'path is not a directory');
  } catch (err) {
    if (isNotFound(err)) throw new GitSideError('worktree_missing', 'the worktree directory does not exist');
    throw err;
  }
  // --show-toplevel last: in a bare repository it fails (128) after the other answers are printed.
  const res = await git(['rev-parse', '--is-bare-repository', '--absolute-git-dir', '--git-common-dir', '--show-toplevel'], { cwd, okCodes: [128] });
  const [bare, gitDir, common, top] = res.stdout.split('\n');
  if (gitDir === undefined || gitDir === '' || common === undefined || common === '') throw await notAWorktree(cwd);
  const isBare = bare === 'true';
  if (res.code !== 0 && !isBare) throw await notAWorktree(cwd);
  return {
    top: isBare || top === undefined || top === '' ? null : await fs.realpath(top),
    privateDir: await fs.realpath(gitDir),
    commonDir: await fs.realpath(path.resolve(cwd, common)),
  };
}

/** Why git found no repository at `cwd`: a `.git` file pointing at a git dir that is gone means the worktree is. */
async function notAWorktree(cwd: string): Promise<GitSideError> {
  try {
    const dotGit = path.join(cwd, '.git');
    if ((await fs.lstat(dotGit)).isFile()) {
      const m = /^gitdir: (.+)$/m.exec(await fs.readFile(dotGit, 'utf8'));
      if (m?.[1] !== undefined && !(await exists(path.resolve(cwd, m[1].trim())))) {
        return new GitSideError('worktree_missing', "the worktree's private git dir does not exist");
      }
    }
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  return new GitSideError('not_a_worktree', 'path is not inside a git worktree');
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.stat(p);
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

const cache = new Map<string, WorktreeDirs>();

/**
 * The git dirs of a worktree, given its top directory. Resolved once with git and cached; each later
 * call re-checks the worktree's `.git` entry on disk (no process) because a worktree removed and
 * re-added at the same path gets a new private dir (`wt1`, then `wt11`...).
 */
export async function worktreeDirs(worktreePath: string): Promise<WorktreeDirs> {
  const key = path.resolve(worktreePath);
  const cached = cache.get(key);
  if (cached !== undefined && (await stillPointsAt(key, cached))) return cached;
  cache.delete(key);
  const r = await resolveGitDirs(key);
  if (r.top === null) throw new GitSideError('not_a_worktree', 'a bare repository has no worktree to own');
  // Projection and lock belong to a whole worktree; a subdirectory spelling would be a second key for it.
  if (r.top !== (await fs.realpath(key))) {
    throw new GitSideError('not_a_worktree', 'path is inside a worktree but is not its top directory');
  }
  const dirs: WorktreeDirs = { worktreePath: r.top, privateDir: r.privateDir, commonDir: r.commonDir, isMain: r.privateDir === r.commonDir };
  cache.set(key, dirs);
  return dirs;
}

/**
 * What an identity was derived from, as the file system says it is now: the path's real path,
 * its `.git` entry, the private git dir, the common dir and the repository config (core.bare,
 * and config.worktree beside it). Inode, change time and size together: a worktree removed and
 * added again (here or elsewhere), a `.git` file rewritten, a repository replaced or moved all
 * change at least one of them. No process, a handful of stat calls.
 */
type Stamp = string;

async function stampOf(p: string): Promise<Stamp> {
  try {
    const st = await fs.lstat(p, { bigint: true });
    return `${st.dev}:${st.ino}:${st.ctimeNs}:${st.mtimeNs}:${st.size}:${st.mode}`;
  } catch (err) {
    if (isNotFound(err)) return 'absent';
    throw err;
  }
}

/** The directory's own inode only: its times change with every index or ref written in it. */
async function dirIdOf(p: string): Promise<Stamp> {
  try {
    const st = await fs.stat(p, { bigint: true });
    return `${st.dev}:${st.ino}`;
  } catch (err) {
    if (isNotFound(err)) return 'absent';
    throw err;
  }
}

const repoStamp = async (commonDir: string) =>
  [await dirIdOf(commonDir), await stampOf(path.join(commonDir, 'config')), await stampOf(path.join(commonDir, 'config.worktree'))].join('|');

const worktreeStamp = async (top: string, dirs: { privateDir: string }) =>
  [
    await stampOf(path.join(top, '.git')),
    await dirIdOf(dirs.privateDir),
    await stampOf(path.join(dirs.privateDir, 'commondir')),
    await stampOf(path.join(dirs.privateDir, 'gitdir')),
  ].join('|');

/** Bounded: a long-running worker sees many worktrees; the oldest entries go first. */
const IDENTITY_CACHE_MAX = 4096;
const identities = new Map<string, { real: string; stamp: Stamp; repo: Stamp; id: WorktreeIdentity }>();
const repoRoots = new Map<string, { stamp: Stamp; repoRoot: string; bare: boolean }>();

function remember<K, V>(m: Map<K, V>, k: K, v: V): void {
  m.delete(k);
  m.set(k, v);
  if (m.size > IDENTITY_CACHE_MAX) m.delete(m.keys().next().value as K);
}

/** Forgets every cached identity (tests, and a caller that knows the disk changed under it). */
export function clearIdentityCache(): void {
  identities.clear();
  repoRoots.clear();
  cache.clear();
}

/**
 * The repository root and bareness of a common dir: `git worktree list --porcelain`'s first entry,
 * which git derives from the common dir's real path and its config alone; so it is asked once per
 * repository and kept while the common dir and its config stay the same.
 */
async function repoRootOfCommonDir(commonDir: string, cwd: string): Promise<{ repoRoot: string; bare: boolean; stamp: Stamp }> {
  const stamp = await repoStamp(commonDir);
  const hit = repoRoots.get(commonDir);
  if (hit && hit.stamp === stamp) return hit;
  const list = await git(['worktree', 'list', '--porcelain'], { cwd });
  // The first block is the main worktree: "worktree <path>" then HEAD/branch lines, or "bare".
  const firstBlock = list.stdout.split('\n\n')[0] ?? '';
  const first = /^worktree (.+)$/m.exec(firstBlock)?.[1];
  if (first === undefined) throw new GitSideError('not_a_worktree', 'git worktree list named no main worktree');
  const bare = /^bare$/m.test(firstBlock);
  const repoRoot = bare ? commonDir : await fs.realpath(first).catch(() => path.resolve(first));
  const entry = { stamp, repoRoot, bare };
  remember(repoRoots, commonDir, entry);
  return entry;
}

/**
 * The one derivation of a worktree's identity (top, git dirs, repository root) from git, for any
 * path inside a worktree or a bare repository. At most two git processes (rev-parse, then
 * `worktree list` once per repository); the top of a worktree asked again costs none while what
 * it was derived from is unchanged on disk (see stampOf), which bind relies on.
 */
export async function identifyWorktree(worktreePath: string): Promise<WorktreeIdentity> {
  const key = path.resolve(worktreePath);
  const cached = identities.get(key);
  if (cached) {
    const real = await fs.realpath(key).catch(() => null);
    if (real === cached.real && (await worktreeStamp(real, cached.id)) === cached.stamp && (await repoStamp(cached.id.commonDir)) === cached.repo)
      return { ...cached.id };
    identities.delete(key);
  }
  // The stamp is read before git runs: a change while it runs makes the next call look again.
  const real = await fs.realpath(key).catch(() => null);
  const r = await resolveGitDirs(worktreePath);
  const top = r.top ?? r.privateDir;
  const before = real !== null && r.top === real ? await worktreeStamp(real, r) : null;
  // The same answer worktreeDirs would get from git for this top (a projection of it in this process follows a bind).
  if (r.top !== null && r.top === real)
    cache.set(key, { worktreePath: r.top, privateDir: r.privateDir, commonDir: r.commonDir, isMain: r.privateDir === r.commonDir });
  const repo = await repoRootOfCommonDir(r.commonDir, top);
  const id: WorktreeIdentity = {
    worktreePath: top,
    privateDir: r.privateDir,
    commonDir: r.commonDir,
    isMain: r.privateDir === r.commonDir,
    repoRoot: repo.repoRoot,
    bare: repo.bare,
  };
  // Only a worktree's top is kept: that is what its `.git` stamps. A subdirectory or a bare repository is asked each time.
  if (before !== null && real !== null) remember(identities, key, { real, stamp: before, repo: repo.stamp, id });
  return { ...id };
}

/**
 * git runs on the directories that were resolved (and checked), never on what the worktree's
 * `.git` file says at the moment of the call: a `.git` swapped afterwards cannot redirect a write.
 */
export function pinnedGit(dirs: WorktreeDirs): { cwd: string; env: { GIT_DIR: string; GIT_WORK_TREE: string } } {
  return { cwd: dirs.worktreePath, env: { GIT_DIR: dirs.privateDir, GIT_WORK_TREE: dirs.worktreePath } };
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
