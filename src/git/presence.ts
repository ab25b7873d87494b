import { promises as fs } from 'node:fs';
import { isNotFound } from './atomic';
import { assertUnderAllowedRoots } from './paths';
import { identifyWorktree } from './repo';
import type { WorktreePresence } from '../contract/removal';

/**
 * A caller's word that a worktree is gone is checked here, on its host, before the service records
 * it (`worktree-removed`): a record of a removal that did not happen would end the ownership's
 * projection and open the gate on a worktree that still holds someone's work.
 *
 * Present while git finds a worktree whose top is the recorded path. A directory that is no longer
 * a worktree, or not there at all, is gone: its repository's entry for it may live on (locked, or
 * not yet pruned), but there are no files of the worktree left to keep.
 */
export async function worktreePresence(worktreePath: string, roots: readonly string[]): Promise<WorktreePresence> {
  const top = await assertUnderAllowedRoots(worktreePath, roots);
  if (!(await exists(top))) return { present: false, detail: 'gone' };
  const id = await identifyWorktree(top).catch(() => null);
  return id !== null && id.worktreePath === top && !(id.bare && id.isMain) ? { present: true, detail: 'on_disk' } : { present: false, detail: 'gone' };
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.lstat(p);
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}
