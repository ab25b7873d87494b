/**
 * The branch report beside every projection write (src/git/status.ts describeBranch): HEAD of the
 * worktree itself and ahead/behind against the first base branch that exists, checked against
 * git's own answers on real repositories; what it cannot describe is null, never a guess.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeBranch } from '../../src/git/status';
import { git, makeRepo } from '../support/git-fixture';

process.env.GIT_CONFIG_GLOBAL = '/dev/null';
process.env.GIT_CONFIG_NOSYSTEM = '1';

const made: string[] = [];
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));
const dir = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'branch-status-'));
  made.push(d);
  return d;
};
const commit = (cwd: string, m: string) => git(cwd, 'commit', '-q', '--allow-empty', '-m', m);
const rev = (cwd: string, r: string) => git(cwd, 'rev-parse', r).trim();

test("a linked worktree's own HEAD, ahead and behind its base", async () => {
  const fx = makeRepo(1);
  made.push(path.dirname(fx.repoRoot));
  const wt = fx.worktrees[0]!.path;
  commit(wt, 'one');
  commit(wt, 'two');
  commit(fx.repoRoot, 'on main');
  const status = await describeBranch(wt, () => 'now');
  expect(status).toEqual({ head: rev(wt, 'HEAD'), base: 'main', ahead: 2, behind: 1, at: 'now' });
  // The main worktree's HEAD is main itself.
  expect(await describeBranch(fx.repoRoot, () => 'now')).toEqual({ head: rev(fx.repoRoot, 'HEAD'), base: 'main', ahead: 0, behind: 0, at: 'now' });
});

test('a detached HEAD is described; the base is the first of main, master, trunk that exists, by its exact name', async () => {
  const repo = path.join(dir(), 'r');
  execFileSync('git', ['init', '-q', '-b', 'trunk', repo]);
  commit(repo, 'root');
  // A branch whose name only ends in a base's name is no base.
  git(repo, 'branch', 'topic/main');
  git(repo, 'checkout', '-q', '-b', 'work');
  commit(repo, 'w');
  git(repo, 'checkout', '-q', '--detach');
  expect(await describeBranch(repo, () => 'now')).toEqual({ head: rev(repo, 'HEAD'), base: 'trunk', ahead: 1, behind: 0, at: 'now' });
  git(repo, 'branch', 'master', 'trunk');
  expect((await describeBranch(repo, () => 'now'))?.base).toBe('master');
});

test('no base branch: HEAD alone; an unborn HEAD or no repository at all: null', async () => {
  const repo = path.join(dir(), 'r');
  execFileSync('git', ['init', '-q', '-b', 'dev', repo]);
  expect(await describeBranch(repo)).toBeNull();
  commit(repo, 'root');
  git(repo, 'branch', 'topic/main');
  expect(await describeBranch(repo, () => 'now')).toEqual({ head: rev(repo, 'HEAD'), base: null, ahead: null, behind: null, at: 'now' });
  expect(await describeBranch(dir())).toBeNull();
});
