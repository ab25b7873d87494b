import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { preserveWip } from '../../src/git/wip';
import { g, makeRepo, run, type Fixture } from './git-fixture';

let fx: Fixture;
beforeEach(() => {
  fx = makeRepo();
});
afterEach(() => fx.cleanup());

/** Everything a previous owner could lose: files, unstaged diff, staged diff, index, branch. */
function snapshot(wt: string): Record<string, string> {
  return {
    a: readFileSync(path.join(wt, 'a.txt'), 'utf8'),
    untracked: readFileSync(path.join(wt, 'new.txt'), 'utf8'),
    diff: g(wt, 'diff'),
    cached: g(wt, 'diff', '--cached'),
    index: g(wt, 'ls-files', '--stage'),
    status: g(wt, 'status', '--porcelain=v1', '--untracked-files=all', '--ignored'),
    head: g(wt, 'rev-parse', 'HEAD'),
    branch: g(wt, 'symbolic-ref', 'HEAD'),
    branchTip: g(wt, 'rev-parse', 'refs/heads/wt1'),
  };
}

describe('preserveWip', () => {
  it('records a dirty tree as a commit under refs/overdeck/wip without touching worktree, index or branch', async () => {
    writeFileSync(path.join(fx.wt1, 'staged.txt'), 'staged\n');
    g(fx.wt1, 'add', 'staged.txt');
    writeFileSync(path.join(fx.wt1, 'a.txt'), 'modified by the dead owner\n');
    writeFileSync(path.join(fx.wt1, 'new.txt'), 'untracked\n');
    writeFileSync(path.join(fx.wt1, 'build.ignored'), 'ignored\n');
    const before = snapshot(fx.wt1);

    const wip = await preserveWip(fx.wt1, 'own_01HX', 7);
    expect(wip).not.toBeNull();
    expect(wip?.ref).toBe('refs/overdeck/wip/own_01HX/7');
    expect(snapshot(fx.wt1)).toEqual(before);

    const sha = wip?.sha ?? '';
    expect(g(fx.repo, 'rev-parse', 'refs/overdeck/wip/own_01HX/7')).toBe(sha);
    expect(g(fx.repo, 'rev-parse', `${sha}^`)).toBe(before.head);
    expect(g(fx.repo, 'show', `${sha}:a.txt`)).toBe('modified by the dead owner');
    expect(g(fx.repo, 'show', `${sha}:new.txt`)).toBe('untracked');
    expect(g(fx.repo, 'show', `${sha}:staged.txt`)).toBe('staged');
    expect(run('git', ['cat-file', '-e', `${sha}:build.ignored`], fx.repo).status).not.toBe(0);
    // The other worktree does not see any of it.
    expect(g(fx.wt2, 'status', '--porcelain')).toBe('');
  });

  it('is idempotent per (ownership, seq): a retry returns the first snapshot', async () => {
    writeFileSync(path.join(fx.wt1, 'a.txt'), 'v1\n');
    const first = await preserveWip(fx.wt1, 'own_X', 1);
    writeFileSync(path.join(fx.wt1, 'a.txt'), 'v2\n');
    expect(await preserveWip(fx.wt1, 'own_X', 1)).toEqual(first);
    const next = await preserveWip(fx.wt1, 'own_X', 2);
    expect(next?.sha).not.toBe(first?.sha);
  });

  it('returns null and creates no ref for a clean worktree (ignored files do not count)', async () => {
    writeFileSync(path.join(fx.wt1, 'cache.ignored'), 'x\n');
    expect(await preserveWip(fx.wt1, 'own_X', 1)).toBeNull();
    expect(g(fx.repo, 'for-each-ref', 'refs/overdeck/')).toBe('');
  });

  it('refuses an ownership id that is not ref-safe', async () => {
    await expect(preserveWip(fx.wt1, '../../heads/main', 1)).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});
