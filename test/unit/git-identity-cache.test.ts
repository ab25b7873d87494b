/**
 * identifyWorktree's cache (src/git/repo.ts): a worktree asked again costs no git process, and
 * whatever changes what git would answer (the worktree removed and added again from another
 * repository, moved elsewhere, its repository moved) is seen on the next call, never answered
 * from the cache. git processes are counted through a wrapper first on PATH.
 */
import { chmodSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { clearIdentityCache, identifyWorktree, worktreeDirs } from '../../src/git/repo';
import { g, makeRepo, run, type Fixture } from './git-fixture';

let fx: Fixture;
let log: string;
const realPath = process.env.PATH;

beforeAll(() => {
  fx = makeRepo();
  const bin = path.join(fx.root, 'bin');
  mkdirSync(bin);
  log = path.join(fx.root, 'git-calls.log');
  writeFileSync(log, '');
  const gitPath = run('sh', ['-c', 'command -v git'], fx.root).stdout.trim();
  writeFileSync(path.join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${gitPath}' "$@"\n`);
  chmodSync(path.join(bin, 'git'), 0o755);
  process.env.PATH = `${bin}:${realPath}`;
});
afterAll(() => {
  process.env.PATH = realPath;
  fx.cleanup();
});
beforeEach(() => clearIdentityCache());

const calls = () => readFileSync(log, 'utf8').split('\n').filter(Boolean).length;
async function counted<T>(fn: () => Promise<T>): Promise<{ value: T; gits: number }> {
  const before = calls();
  const value = await fn();
  return { value, gits: calls() - before };
}

test('a worktree asked again costs no git process; another worktree of the same repository costs one', async () => {
  const first = await counted(() => identifyWorktree(fx.wt1));
  expect(first.value).toMatchObject({ worktreePath: fx.wt1, repoRoot: fx.repo, commonDir: path.join(fx.repo, '.git'), isMain: false, bare: false });
  expect(first.gits).toBe(2);
  const again = await counted(() => identifyWorktree(fx.wt1));
  expect(again).toEqual({ value: first.value, gits: 0 });
  const sibling = await counted(() => identifyWorktree(fx.wt2));
  expect(sibling.value).toMatchObject({ worktreePath: fx.wt2, repoRoot: fx.repo });
  expect(sibling.gits).toBe(1);
  // A subdirectory is not a worktree's top: answered, never kept.
  mkdirSync(path.join(fx.wt1, 'sub'), { recursive: true });
  for (let i = 0; i < 2; i++) {
    const sub = await counted(() => identifyWorktree(path.join(fx.wt1, 'sub')));
    expect(sub.value.worktreePath).toBe(fx.wt1);
    expect(sub.gits).toBe(1);
  }
});

test("a worktree identified costs its git dirs no process: worktreeDirs answers what git would (a bind's projection in the same process)", async () => {
  const id = await identifyWorktree(fx.wt1);
  const dirs = await counted(() => worktreeDirs(fx.wt1));
  expect(dirs).toEqual({ value: { worktreePath: id.worktreePath, privateDir: id.privateDir, commonDir: id.commonDir, isMain: false }, gits: 0 });
  // What git itself says, asked afresh.
  clearIdentityCache();
  const asked = await counted(() => worktreeDirs(fx.wt1));
  expect(asked).toEqual({ value: dirs.value, gits: 1 });
  // A subdirectory's identity primes nothing: worktreeDirs refuses it as before.
  mkdirSync(path.join(fx.wt2, 'deep'), { recursive: true });
  await identifyWorktree(path.join(fx.wt2, 'deep'));
  await expect(worktreeDirs(path.join(fx.wt2, 'deep'))).rejects.toMatchObject({ code: 'not_a_worktree' });
});

test('a worktree removed and added again at the same path from another repository: the new repository', async () => {
  const other = path.join(fx.root, 'other');
  g(fx.root, 'init', '-q', '-b', 'main', other);
  g(other, 'commit', '-q', '--allow-empty', '-m', 'other');
  const wt = path.join(fx.root, 'swapped');
  g(fx.repo, 'worktree', 'add', '-q', '-b', 'swapped', wt);
  expect((await identifyWorktree(wt)).repoRoot).toBe(fx.repo);
  g(fx.repo, 'worktree', 'remove', wt);
  g(other, 'worktree', 'add', '-q', '-b', 'swapped', wt);
  const now = await identifyWorktree(wt);
  expect({ repoRoot: now.repoRoot, commonDir: now.commonDir }).toEqual({ repoRoot: realpathSync(other), commonDir: path.join(realpathSync(other), '.git') });
});

test('a worktree removed here and added elsewhere: the old path is no worktree any more, the new one is', async () => {
  const here = path.join(fx.root, 'moving');
  const there = path.join(fx.root, 'moved');
  g(fx.repo, 'worktree', 'add', '-q', '-b', 'moving', here);
  await identifyWorktree(here);
  g(fx.repo, 'worktree', 'remove', here);
  g(fx.repo, 'worktree', 'add', '-q', there, 'moving');
  await expect(identifyWorktree(here)).rejects.toMatchObject({ code: 'worktree_missing' });
  expect(await identifyWorktree(there)).toMatchObject({ worktreePath: there, repoRoot: fx.repo });
  // Left where it was, with its git dir pruned: missing, not the cached identity.
  const pruned = path.join(fx.root, 'pruned');
  g(fx.repo, 'worktree', 'add', '-q', '-b', 'pruned', pruned);
  const id = await identifyWorktree(pruned);
  renameSync(id.privateDir, `${id.privateDir}.gone`);
  await expect(identifyWorktree(pruned)).rejects.toMatchObject({ code: 'worktree_missing' });
});

test('the repository moved and its worktrees repaired: the new root, from the cache too', async () => {
  const fresh = makeRepo();
  try {
    expect((await identifyWorktree(fresh.wt1)).repoRoot).toBe(fresh.repo);
    expect((await identifyWorktree(fresh.wt2)).repoRoot).toBe(fresh.repo);
    const movedRepo = path.join(fresh.root, 'repo-moved');
    renameSync(fresh.repo, movedRepo);
    g(movedRepo, 'worktree', 'repair', fresh.wt1, fresh.wt2);
    for (const wt of [fresh.wt1, fresh.wt2])
      expect(await identifyWorktree(wt)).toMatchObject({ worktreePath: wt, repoRoot: movedRepo, commonDir: path.join(movedRepo, '.git') });
  } finally {
    fresh.cleanup();
  }
});
