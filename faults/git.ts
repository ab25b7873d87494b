import { existsSync, readdirSync, readFileSync, watch, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gitAs, initRepo } from '../chaos/git';

export const git = gitAs('faults');

/** One worktree of the run: a real `git worktree add` under the allowed roots, recreated per lifecycle on a fresh branch. */
export interface Worktree {
  k: number;
  name: string;
  repoRoot: string;
  path: string;
  branch: string;
  generation: number;
  /** the host the worktree is on, when not the API's own (a multi-host run): binds name it */
  hostId?: string;
}

/**
 * `count` worktrees, two per repository (a landing moves the repository's main). `prefix` and
 * `firstK` keep the names (which session ids are made of) and slots of extra worktrees distinct.
 */
export async function makeWorktrees(baseDir: string, count: number, perRepo = 2, prefix = 'wt', firstK = 0): Promise<Worktree[]> {
  const out: Worktree[] = [];
  for (let r = 0; r * perRepo < count; r++) {
    const repoRoot = path.join(baseDir, `repo-${r}`);
    await initRepo(git, repoRoot, `repo ${r}`);
    for (let i = 0; i < perRepo && out.length < count; i++) {
      const k = firstK + out.length;
      const name = `${prefix}-${out.length}`;
      const wt: Worktree = { k, name, repoRoot, path: path.join(repoRoot, '.worktrees', name), branch: `wt/${name}-g0`, generation: 0 };
      await git(repoRoot, ['worktree', 'add', '-q', '-b', wt.branch, wt.path]);
      out.push(wt);
    }
  }
  return out;
}

/** The owner's work before a submit: one real commit on the worktree's branch. */
export async function commitWork(wt: Worktree, label: string): Promise<string> {
  writeFileSync(path.join(wt.path, `work-${label}.txt`), `${label}\n`);
  await git(wt.path, ['add', '-A']);
  await git(wt.path, ['commit', '-q', '--no-verify', '-m', `work ${label}`]);
  return git(wt.path, ['rev-parse', 'HEAD']);
}

/** Uncommitted work a reclaim has to preserve. */
export function dirty(wt: Worktree, label: string): void {
  writeFileSync(path.join(wt.path, `wip-${label}.txt`), `${label}\n`);
}

/**
 * What the landing controller lands: a real commit on the repository's main with the source's
 * tree (main's checkout is not touched: only the ref moves).
 */
export function landOnMain(wt: Worktree, sourceHead: string): Promise<string> {
  // The worktrees of one repository land on the same main: one landing at a time per repository.
  return onRepo(wt.repoRoot, async () => {
    const tree = await git(wt.repoRoot, ['rev-parse', `${sourceHead}^{tree}`]);
    const main = await git(wt.repoRoot, ['rev-parse', 'refs/heads/main']);
    const landed = await git(wt.repoRoot, ['commit-tree', tree, '-p', main, '-p', sourceHead, '-m', `land ${wt.branch}`]);
    await git(wt.repoRoot, ['update-ref', 'refs/heads/main', landed, main]);
    return landed;
  });
}

const repoChains = new Map<string, Promise<unknown>>();
function onRepo<T>(repoRoot: string, fn: () => Promise<T>): Promise<T> {
  const next = (repoChains.get(repoRoot) ?? Promise.resolve()).then(fn, fn);
  repoChains.set(
    repoRoot,
    next.catch(() => undefined),
  );
  return next;
}

/** The landing controller's removal after a landing, then the next lifecycle's worktree on a fresh branch. */
export function recycle(wt: Worktree): Promise<void> {
  // git's worktree registry is the repository's: one removal or addition at a time per repository.
  return onRepo(wt.repoRoot, async () => {
    await removeRegistered(wt);
    wt.generation++;
    wt.branch = `wt/${wt.name}-g${wt.generation}`;
    await git(wt.repoRoot, ['worktree', 'add', '-q', '-b', wt.branch, wt.path]);
  });
}

/** The worktree removed as git removes it (its registration too), before the service is told: it checks with git. */
export function removeWorktree(wt: Worktree): Promise<void> {
  return onRepo(wt.repoRoot, () => removeRegistered(wt));
}

async function removeRegistered(wt: Worktree): Promise<void> {
  try {
    if (existsSync(wt.path)) await git(wt.repoRoot, ['worktree', 'remove', '--force', '--force', wt.path]);
  } catch (err) {
    // The host agent may write into the worktree's private git dir while git deletes it.
    if (existsSync(wt.path)) throw err;
  }
  // A directory deleted behind git's back keeps its registration, locked by the service's projection: prune needs it unlocked.
  await git(wt.repoRoot, ['worktree', 'unlock', wt.path]).catch(() => undefined);
  await git(wt.repoRoot, ['worktree', 'prune']);
}

export function exists(wt: Worktree): boolean {
  return existsSync(path.join(wt.path, '.git'));
}

/** The worktree's private git dir (where git keeps its index, and WIP preservation its private one). */
export function privateGitDir(wt: Worktree): string | null {
  try {
    const m = /^gitdir: (.+)$/m.exec(readFileSync(path.join(wt.path, '.git'), 'utf8'));
    return m?.[1] ? path.resolve(wt.path, m[1].trim()) : null;
  } catch {
    return null;
  }
}

/** Resolves true as soon as a file whose name matches appears in `dir`, false after `timeoutMs`. */
export function waitForFile(dir: string, name: RegExp, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (hit: boolean) => {
      if (done) return;
      done = true;
      clearInterval(poll);
      clearTimeout(timer);
      watcher?.close();
      resolve(hit);
    };
    let watcher: ReturnType<typeof watch> | null = null;
    try {
      watcher = watch(dir, (_event, file) => {
        if (file && name.test(String(file))) finish(true);
      });
      watcher.on('error', () => undefined);
    } catch {
      watcher = null;
    }
    const poll = setInterval(() => {
      try {
        if (readdirSync(dir).some((f) => name.test(f))) finish(true);
      } catch {
        /* the directory may go away */
      }
    }, 2);
    const timer = setTimeout(() => finish(false), timeoutMs);
  });
}
