import { existsSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gitAs, initRepo } from '../chaos/git';

export const git = gitAs('torture');

/**
 * One worktree of the run: a real `git worktree add`, reachable by several spellings that must all
 * mean the same worktree (a symlink to it, a symlink to its repository, a trailing `/.`), and a
 * spoofed repository root (a parent dir of the real one) that must never make a second ownership.
 */
export interface Slot {
  k: number;
  name: string;
  repoRoot: string;
  /** canonical (realpath) location */
  path: string;
  /** other spellings of `path` */
  spellings: string[];
  /** other spellings of `repoRoot` */
  repoRootSpellings: string[];
  /** a directory above the real root, still under the allowed roots */
  spoofedRepoRoot: string;
  /** the branch of the current generation (a recycled worktree gets a fresh one) */
  branch: string;
  generation: number;
  /** git work in the worktree (commits, HEAD reads, recycling) runs one at a time */
  chain: Promise<unknown>;
}

/** Runs `fn` after everything queued on the slot; errors do not poison the chain. */
export function onSlot<T>(slot: Slot, fn: () => Promise<T>): Promise<T> {
  const next = slot.chain.then(fn, fn);
  slot.chain = next.catch(() => undefined);
  return next;
}

/** `count` worktrees over repositories of at most `perRepo` worktrees each, with their symlink spellings. */
export async function makeSlots(baseDir: string, count: number, perRepo = 3): Promise<Slot[]> {
  const base = realpathSync(baseDir);
  const links = path.join(base, 'links');
  mkdirSync(links, { recursive: true });
  const slots: Slot[] = [];
  for (let r = 0; r * perRepo < count; r++) {
    const repoRoot = path.join(base, 'repos', `repo-${r}`, 'product');
    await initRepo(git, repoRoot, `product ${r}`);
    const repoLink = path.join(links, `repo-${r}`);
    symlinkSync(repoRoot, repoLink);
    for (let i = 0; i < perRepo && slots.length < count; i++) {
      const k = slots.length;
      const name = `wt-${k}`;
      const wt = path.join(repoRoot, '.worktrees', name);
      const branch = `wt/${name}`;
      await git(repoRoot, ['worktree', 'add', '-q', '-b', branch, wt]);
      const wtLink = path.join(links, name);
      symlinkSync(wt, wtLink);
      slots.push({
        k,
        name,
        repoRoot,
        path: realpathSync(wt),
        spellings: [wtLink, `${wt}/.`, path.join(repoLink, '.worktrees', name), `${wtLink}/`],
        repoRootSpellings: [repoLink, `${repoRoot}/.`],
        spoofedRepoRoot: path.dirname(repoRoot),
        branch,
        generation: 0,
        chain: Promise.resolve(),
      });
    }
  }
  return slots;
}

export function headOf(slot: Slot): Promise<string> {
  return onSlot(slot, () => git(slot.path, ['rev-parse', 'HEAD']));
}

/** The owner's work before a submit: one real commit on the worktree's branch. */
export function commitWork(slot: Slot, label: string): Promise<string> {
  return onSlot(slot, async () => {
    writeFileSync(path.join(slot.path, `work-${label}.txt`), `${label}\n`);
    await git(slot.path, ['add', '-A']);
    await git(slot.path, ['commit', '-q', '--no-verify', '-m', `work ${label}`]);
    return git(slot.path, ['rev-parse', 'HEAD']);
  });
}

/** What a landing controller does once a branch landed: remove the worktree; later it comes back on a fresh branch. */
export function removeWorktree(slot: Slot): Promise<void> {
  return onSlot(slot, async () => {
    try {
      await git(slot.repoRoot, ['worktree', 'remove', '--force', '--force', slot.path]);
    } catch (err) {
      // The host agent may write into the worktree's private git dir while git deletes it
      // ("Directory not empty"): the worktree itself is gone, prune forgets the rest.
      if (existsSync(slot.path)) throw err;
      await git(slot.repoRoot, ['worktree', 'prune']);
    }
  });
}

export function readdWorktree(slot: Slot): Promise<void> {
  return onSlot(slot, async () => {
    slot.generation++;
    slot.branch = `wt/${slot.name}-g${slot.generation}`;
    await git(slot.repoRoot, ['worktree', 'add', '-q', '-b', slot.branch, slot.path]);
  });
}
