import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' },
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
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
  git(repoRoot, 'commit', '-q', '-m', 'initial');
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
