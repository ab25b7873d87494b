import path from 'node:path';

const chains = new Map<string, Promise<unknown>>();

/**
 * Runs `fn` after every earlier call for the same worktree has settled, so two activities on this
 * host cannot interleave their read-seq / write steps for one worktree.
 */
export function serialisePerWorktree<T>(worktreePath: string, fn: () => Promise<T>): Promise<T> {
  const key = path.resolve(worktreePath);
  const prev = chains.get(key) ?? Promise.resolve();
  const run = prev.then(fn, fn);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  chains.set(key, tail);
  void tail.then(() => {
    if (chains.get(key) === tail) chains.delete(key);
  });
  return run;
}
