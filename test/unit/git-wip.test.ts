import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { preserveWip, wipSize } from '../../src/git/wip';
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

  it('says its size: the paths it changes against HEAD (a deletion too) and the bytes of their content', async () => {
    writeFileSync(path.join(fx.wt1, 'a.txt'), 'twelve bytes');
    writeFileSync(path.join(fx.wt1, 'new.txt'), 'five\n');
    mkdirSync(path.join(fx.wt1, 'dir'));
    writeFileSync(path.join(fx.wt1, 'dir', 'deep.txt'), '');
    const tracked = g(fx.wt1, 'ls-files')
      .split('\n')
      .find((f) => f !== 'a.txt');
    if (tracked) rmSync(path.join(fx.wt1, tracked));
    const wip = await preserveWip(fx.wt1, 'own_SIZE', 1);
    expect(await wipSize(fx.wt1, wip!.sha)).toEqual({ files: tracked ? 4 : 3, bytes: 12 + 5 });
    expect(await wipSize(fx.wt1, 'not a sha')).toBeNull();
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

  it('records what `git add -A` would, without running it: changes, deletions, modes, symlinks, odd names, conflicts, sparse and assume-unchanged entries', async () => {
    const wt = fx.wt1;
    const w = (f: string, c: string) => {
      mkdirSync(path.dirname(path.join(wt, f)), { recursive: true });
      writeFileSync(path.join(wt, f), c);
    };
    // A conflict first (a merge needs a clean tree): both branches change conflict.txt.
    w('conflict.txt', 'base\n');
    g(wt, 'add', '.');
    g(wt, 'commit', '-q', '-m', 'base');
    g(fx.wt2, 'merge', '-q', 'wt1');
    writeFileSync(path.join(fx.wt2, 'conflict.txt'), 'theirs\n');
    g(fx.wt2, 'commit', '-q', '-am', 'theirs');
    w('conflict.txt', 'ours\n');
    for (const [f, c] of Object.entries({
      'keep.txt': 'keep\n',
      'mod.txt': 'mod\n',
      'del.txt': 'del\n',
      'mkexec.txt': 'x\n',
      'd/f.txt': 'f\n',
      fd: 'fd\n',
      'sp ace.txt': 's\n',
      'ü.txt': 'u\n',
      'sparse.txt': 'sp\n',
      'au.txt': 'au\n',
      'samesize.txt': 'abcd\n',
      'sub/file.txt': 'in sub\n',
    }))
      w(f, c);
    symlinkSync('keep.txt', path.join(wt, 'link'));
    symlinkSync('keep.txt', path.join(wt, 'relink'));
    g(wt, 'add', '.');
    g(wt, 'commit', '-q', '-m', 'tracked');
    w('samesize.txt', 'wxyz\n'); // same size, likely the same second as the index: racily clean
    expect(run('git', ['merge', 'wt2'], wt).status).not.toBe(0);

    w('mod.txt', 'modified and longer\n');
    unlinkSync(path.join(wt, 'del.txt'));
    chmodSync(path.join(wt, 'mkexec.txt'), 0o755);
    unlinkSync(path.join(wt, 'relink'));
    symlinkSync('mod.txt', path.join(wt, 'relink'));
    rmSync(path.join(wt, 'd'), { recursive: true });
    w('d', 'now a file\n');
    unlinkSync(path.join(wt, 'fd'));
    w('fd/inner.txt', 'now a directory\n');
    for (const [f, c] of Object.entries({
      'new.txt': 'new\n',
      'new\nline.txt': 'nl\n',
      'ü2.txt': 'u2\n',
      'newdir/x.txt': 'x\n',
      'build.ignored': 'ignored\n',
      'staged-then-gone.txt': 'sg\n',
    }))
      w(f, c);
    symlinkSync('new.txt', path.join(wt, 'newlink'));
    // A directory replaced by a symlink to one outside the worktree: what is behind it is not the worktree's.
    mkdirSync(path.join(fx.root, 'outside'));
    writeFileSync(path.join(fx.root, 'outside', 'file.txt'), 'a secret outside the worktree\n');
    rmSync(path.join(wt, 'sub'), { recursive: true });
    symlinkSync(path.join(fx.root, 'outside'), path.join(wt, 'sub'));
    g(wt, 'add', 'staged-then-gone.txt');
    unlinkSync(path.join(wt, 'staged-then-gone.txt'));
    w('ita.txt', 'intent to add\n');
    g(wt, 'add', '-N', 'ita.txt');
    g(wt, 'update-index', '--skip-worktree', 'sparse.txt');
    unlinkSync(path.join(wt, 'sparse.txt'));
    g(wt, 'update-index', '--assume-unchanged', 'au.txt');
    w('au.txt', 'changed but assumed unchanged\n');
    // A nested repository: `git add -A` would record its HEAD as a gitlink; the service never runs git in it.
    g(wt, 'init', '-q', 'nested');
    w('nested/n.txt', 'n\n');
    g(path.join(wt, 'nested'), 'add', '.');
    g(path.join(wt, 'nested'), 'commit', '-q', '-m', 'n');

    // The oracle: `git add -A` into a copy of the index.
    const gitDir = g(wt, 'rev-parse', '--absolute-git-dir');
    const oracleIndex = path.join(fx.root, 'oracle.index');
    copyFileSync(path.join(gitDir, 'index'), oracleIndex);
    expect(run('git', ['add', '-A'], wt, { GIT_INDEX_FILE: oracleIndex }).status).toBe(0);
    const oracleTree = run('git', ['write-tree'], wt, { GIT_INDEX_FILE: oracleIndex }).stdout.trim();
    expect(oracleTree).toMatch(/^[0-9a-f]{40}$/);
    const before = g(wt, 'ls-files', '-s', '-v', '--debug');

    const wip = await preserveWip(wt, 'own_DIFF', 1);
    const listing = (tree: string) =>
      g(fx.repo, 'ls-tree', '-r', '--full-tree', tree)
        .split('\n')
        .filter((l) => !/\tnested$/.test(l));
    expect(listing(wip!.sha)).toEqual(listing(oracleTree));
    const got = listing(wip!.sha).join('\n');
    for (const want of [
      /^100755 blob \S+\tmkexec\.txt$/m,
      /^120000 blob \S+\tsub$/m,
      /\t"new\\nline\.txt"$/m,
      /\tfd\/inner\.txt$/m,
      /\td$/m,
      /\tita\.txt$/m,
      /\tsparse\.txt$/m,
    ])
      expect(got).toMatch(want);
    for (const gone of [/\tdel\.txt$/m, /\td\/f\.txt$/m, /\tsub\/file\.txt$/m, /staged-then-gone/, /build\.ignored/]) expect(got).not.toMatch(gone);
    expect(g(fx.repo, 'cat-file', 'blob', `${wip!.sha}:ita.txt`)).toBe('intent to add');
    expect(g(fx.repo, 'cat-file', 'blob', `${wip!.sha}:relink`)).toBe('mod.txt');
    expect(g(fx.repo, 'cat-file', 'blob', `${wip!.sha}:au.txt`)).toBe('au');
    expect(g(fx.repo, 'ls-tree', '-r', wip!.sha, 'nested')).toBe('');
    // Nothing behind the symlinked directory was read into the repository, not even as a loose object.
    const secret = run('git', ['hash-object', '--stdin'], fx.repo, {}, 'a secret outside the worktree\n').stdout.trim();
    expect(run('git', ['cat-file', '-e', secret], fx.repo).status).not.toBe(0);
    // The real index, stat data and flags included, is as the owner left it.
    expect(g(wt, 'ls-files', '-s', '-v', '--debug')).toBe(before);
  });
});
