import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';

const realGitByPath = new Map<string, string>();

/**
 * The git that od-worktree itself runs: the first on PATH that is not the agent gate (a directory
 * holding bin/git-gate's `.od-git-gate` marker). Our own git work (a snapshot, a projection) has
 * been judged already, and the gate would judge it again with an environment it never gets (the
 * service's allow-list has no OVERDECK_* variable). `git` when none is found: execFile says why.
 */
export function realGit(searchPath: string | undefined = process.env.PATH): string {
  const key = searchPath ?? '';
  const known = realGitByPath.get(key);
  if (known !== undefined) return known;
  let found = 'git';
  for (const dir of key.split(path.delimiter)) {
    if (dir === '' || existsSync(path.join(dir, '.od-git-gate'))) continue;
    const candidate = path.join(dir, 'git');
    try {
      accessSync(candidate, constants.X_OK);
      found = candidate;
      break;
    } catch {
      // not here
    }
  }
  realGitByPath.set(key, found);
  return found;
}
