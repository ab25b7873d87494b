import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cleanGitEnv } from '../../src/git/exec';
import { withTenureSecret } from './tenure-env';

/** The author and committer of every commit a fixture makes. */
export const GIT_IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' };

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...GIT_IDENTITY },
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

/**
 * git as an agent session would run it in an owned worktree (null: a caller without a session id),
 * with the secret of its tenure there (none holds for a session that does not own it), through the
 * worktree's hooks; answers git's exit code.
 */
export function gitAs(cwd: string, session: string | null, ...args: string[]): number {
  const env = cleanGitEnv(GIT_IDENTITY);
  delete env.OVERDECK_EXECUTION_SESSION_ID;
  delete env.OVERDECK_EPOCH;
  if (session) env.OVERDECK_EXECUTION_SESSION_ID = session;
  try {
    execFileSync('git', args, { cwd, env: withTenureSecret(cwd, env), stdio: ['ignore', 'pipe', 'pipe'] });
    return 0;
  } catch (err) {
    return (err as { status?: number }).status ?? -1;
  }
}

/** `session` adds and commits a new file `file`; the commit's id. */
export function commitAs(cwd: string, session: string, file: string): string {
  writeFileSync(path.join(cwd, file), `${file}\n`);
  expect(gitAs(cwd, session, 'add', file)).toBe(0);
  expect(gitAs(cwd, session, 'commit', '-q', '-m', file)).toBe(0);
  return git(cwd, 'rev-parse', 'HEAD');
}

export interface RepoFixture {
  repoRoot: string;
  worktrees: { path: string; branch: string }[];
}

/** A real repository with one commit and `count` real worktrees (`git worktree add -b wt/<name>`). */
export function makeRepo(count = 2, base = process.env.OD_TEST_TMP ?? '/tmp'): RepoFixture {
  const dir = mkdtempSync(path.join(base, 'repo-'));
  const repoRoot = path.join(dir, 'product');
  execFileSync('git', ['init', '-q', '-b', 'main', repoRoot]);
  writeFileSync(path.join(repoRoot, 'README.md'), '# product\n');
  git(repoRoot, 'add', '.');
  // A root commit of its own: two fixtures made in the same second would otherwise be one commit, and a
  // landing recorded by one test would answer another's provenance lookup (heads resolve in any repository).
  git(repoRoot, 'commit', '-q', '-m', `initial (${path.basename(dir)})`);
  const worktrees: { path: string; branch: string }[] = [];
  for (let i = 0; i < count; i++) {
    const name = `feature-${i}`;
    const wt = path.join(repoRoot, '.worktrees', name);
    git(repoRoot, 'worktree', 'add', '-q', '-b', `wt/${name}`, wt);
    worktrees.push({ path: wt, branch: `wt/${name}` });
  }
  // Keep the worktree folder itself out of the product's status.
  writeFileSync(path.join(repoRoot, '.git', 'info', 'exclude'), '.worktrees/\n');
  return { repoRoot, worktrees };
}
