/**
 * Complete WIP snapshots and their restore (src/git/wip.ts, src/git/restore.ts, docs/restore.md) on
 * real repositories: what a worktree holds (every file's bytes and mode, symlinks, the index, HEAD
 * and its branch) is read with git itself before the snapshot and after the restore, and must be
 * the same; a restore that cannot be whole fails with its reason code and changes nothing it need not.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { RestoreFailureOutputSchema, RestoreOutputSchema } from '../../src/contract/restore';
import { cleanGitEnv } from '../../src/git/exec';
import { findSnapshotForPath, restoreWorktree } from '../../src/git/restore';
import { preserveWip, preserveWipByTree, readWipSnapshot } from '../../src/git/wip';
import { g, gMany, makeRepo, run, type Fixture } from './git-fixture';

const BIN = path.resolve(__dirname, '../../bin/od-worktree.js');

let fx: Fixture;
beforeEach(() => {
  fx = makeRepo();
});
afterEach(() => fx.cleanup());

/** Every entry under `top` but `.git`, by its raw path: a file's mode bits and bytes, a symlink's target, a directory. */
function filesOf(top: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: Buffer, rel: string) => {
    for (const name of readdirSync(dir, { encoding: 'buffer' })) {
      const key = rel === '' ? name.toString('latin1') : `${rel}/${name.toString('latin1')}`;
      if (key === '.git') continue;
      const abs = Buffer.concat([dir, Buffer.from('/'), name]);
      const st = lstatSync(abs);
      if (st.isSymbolicLink()) out[key] = `link ${readlinkSync(abs, { encoding: 'buffer' }).toString('hex')}`;
      else if (st.isDirectory()) {
        out[key] = 'dir';
        walk(abs, key);
      } else out[key] = `file ${(st.mode & 0o111) !== 0 ? 'x' : '-'} ${readFileSync(abs).toString('hex')}`;
    }
  };
  walk(Buffer.from(top), '');
  return out;
}

/** What git says of the worktree: the index entry by entry, HEAD, the branch, and the status of every file. */
function gitStateOf(wt: string): Record<string, string> {
  const [index, head, status] = gMany(wt, ['ls-files', '--stage'], ['rev-parse', 'HEAD'], ['status', '--porcelain=v1', '--untracked-files=all', '--ignored']);
  const branch = run('git', ['symbolic-ref', '-q', 'HEAD'], wt).stdout.trim();
  return { index: index!, head: head!, branch, status: status! };
}

const refsOf = (repo: string) => g(repo, 'for-each-ref', '--format=%(refname) %(objectname)');
const worktreesOf = (repo: string) => g(repo, 'worktree', 'list', '--porcelain');

/** A worktree with every kind of uncommitted work: the snapshot must keep each. */
function dirty(wt: string): void {
  writeFileSync(path.join(wt, 'tool.sh'), '#!/bin/sh\necho tracked\n');
  writeFileSync(path.join(wt, 'staged.txt'), 'base\n');
  writeFileSync(path.join(wt, 'gone.txt'), 'to be deleted\n');
  g(wt, 'add', '.');
  g(wt, 'commit', '-q', '-m', 'tracked files');
  // A dirty tracked file, unstaged.
  writeFileSync(path.join(wt, 'a.txt'), 'modified on disk, not staged\n');
  // Staged one way, changed again on disk: index and disk differ.
  writeFileSync(path.join(wt, 'staged.txt'), 'staged version\n');
  g(wt, 'add', 'staged.txt');
  writeFileSync(path.join(wt, 'staged.txt'), 'disk version, after staging\n');
  // A new file staged, and one staged then deleted on disk.
  writeFileSync(path.join(wt, 'added.txt'), 'new and staged\n');
  g(wt, 'add', 'added.txt');
  unlinkSync(path.join(wt, 'gone.txt'));
  // The executable bit: a tracked file made executable, an untracked one executable from the start.
  chmodSync(path.join(wt, 'tool.sh'), 0o755);
  writeFileSync(path.join(wt, 'run.sh'), '#!/bin/sh\necho untracked\n', { mode: 0o755 });
  // Untracked files, one in a new directory, one binary under a name that is not UTF-8.
  writeFileSync(path.join(wt, 'new.txt'), 'untracked\n');
  mkdirSync(path.join(wt, 'newdir', 'deeper'), { recursive: true });
  writeFileSync(path.join(wt, 'newdir', 'deeper', 'x.txt'), 'nested untracked\n');
  writeFileSync(Buffer.from(`${wt}/bin-\xff.dat`, 'latin1'), Buffer.from([0, 1, 2, 0xff, 0xfe, 0x80, 10, 13, 0]));
  // Symlinks: an untracked one, and one staged pointing elsewhere than on disk.
  symlinkSync('a.txt', path.join(wt, 'link-to-a'));
  symlinkSync('new.txt', path.join(wt, 'staged-link'));
  g(wt, 'add', 'staged-link');
  unlinkSync(path.join(wt, 'staged-link'));
  symlinkSync('../somewhere/else', path.join(wt, 'staged-link'));
  // Ignored (`*.ignored` in the fixture's .gitignore): not in a snapshot unless asked for.
  writeFileSync(path.join(wt, 'secret.ignored'), 'ignored content\n');
}

describe('a snapshot records the index, HEAD and branch, and the path', () => {
  it('reads back what it was taken against; the index is the staged state, the tree the files on disk', async () => {
    dirty(fx.wt1);
    const stagedTree = run('git', ['write-tree'], fx.wt1).stdout.trim();
    const before = gitStateOf(fx.wt1);
    const wip = await preserveWip(fx.wt1, 'own_R', 1);
    // Taking it changes nothing in the worktree.
    expect(gitStateOf(fx.wt1)).toEqual(before);
    const d = await readWipSnapshot(fx.repo, wip!.ref);
    expect(d).toMatchObject({
      format: 1,
      sha: wip!.sha,
      head: before.head,
      branch: { ref: 'refs/heads/wt1', tip: before.head },
      index: { tree: stagedTree },
      indexUnmerged: false,
      ignored: { stored: false, reason: 'not_requested' },
      worktreePath: fx.wt1,
      alsoKeep: [],
    });
    // The first parent is still HEAD (late.ts and the existing readers rely on it); the index commit holds the staged tree.
    expect(g(fx.repo, 'rev-parse', `${wip!.sha}^1`)).toBe(before.head);
    expect(g(fx.repo, 'rev-parse', `${d.index!.commit}^{tree}`)).toBe(stagedTree);
    expect(g(fx.repo, 'show', `${wip!.sha}:staged.txt`)).toBe('disk version, after staging');
    expect(g(fx.repo, 'show', `${d.index!.tree}:staged.txt`)).toBe('staged version');
  });

  it('a staged change undone on disk is work too: the snapshot keeps the index even when the files match HEAD', async () => {
    writeFileSync(path.join(fx.wt1, 'a.txt'), 'staged only\n');
    g(fx.wt1, 'add', 'a.txt');
    writeFileSync(path.join(fx.wt1, 'a.txt'), 'two\n');
    const wip = await preserveWip(fx.wt1, 'own_R', 1);
    expect(wip).not.toBeNull();
    const d = await readWipSnapshot(fx.repo, wip!.sha);
    expect(g(fx.repo, 'show', `${d.index!.tree}:a.txt`)).toBe('staged only');
    expect(g(fx.repo, 'rev-parse', `${wip!.sha}^{tree}`)).toBe(g(fx.repo, 'rev-parse', 'wt1^{tree}'));
  });

  it('a detached HEAD is recorded as such; a snapshot of the same files with another index is another ref', async () => {
    g(fx.wt1, 'checkout', '-q', '--detach');
    writeFileSync(path.join(fx.wt1, 'a.txt'), 'x\n');
    const first = await preserveWipByTree(fx.wt1, 'own_R');
    expect(await readWipSnapshot(fx.repo, first!.ref)).toMatchObject({ branch: null, head: g(fx.wt1, 'rev-parse', 'HEAD') });
    expect(first!.ref).toBe(`refs/overdeck/wip/own_R/tree-${first!.tree}`);
    g(fx.wt1, 'add', 'a.txt');
    const second = await preserveWipByTree(fx.wt1, 'own_R');
    expect(second!.tree).toBe(first!.tree);
    expect(second!.ref).toMatch(new RegExp(`^refs/overdeck/wip/own_R/tree-${first!.tree}-[0-9a-f]{16}$`));
    // Unchanged again: the same ref, not a third.
    expect(await preserveWipByTree(fx.wt1, 'own_R')).toEqual({ ...second, created: false });
  });
});

describe('restoreWorktree', () => {
  it('snapshot, `git worktree remove --force`, restore: every file, mode, symlink, the index, HEAD and branch as they were, verified', async () => {
    dirty(fx.wt1);
    const files = filesOf(fx.wt1);
    const state = gitStateOf(fx.wt1);
    const wip = await preserveWip(fx.wt1, 'own_R', 3);
    g(fx.repo, 'worktree', 'remove', '--force', fx.wt1);
    expect(existsSync(fx.wt1)).toBe(false);

    const out = await restoreWorktree({ repo: fx.repo, snapshotRef: wip!.ref });
    expect(RestoreOutputSchema.parse(out)).toEqual({
      ok: true,
      worktreePath: fx.wt1,
      snapshot: { sha: wip!.sha, ref: wip!.ref },
      head: { mode: 'branch', ref: 'refs/heads/wt1', sha: state.head, created: false },
      restored: { files: 11, untracked: 5, ignored: 0, index: 'restored' },
      verified: true,
      owner: null,
    });
    // The ignored file was not asked for, so it is not back; everything else is, byte for byte.
    const { 'secret.ignored': ignoredFile, ...rest } = files;
    expect(ignoredFile).toBeDefined();
    expect(filesOf(fx.wt1)).toEqual(rest);
    const { status, ...gitRest } = state;
    expect(gitStateOf(fx.wt1)).toEqual({
      ...gitRest,
      status: status
        .split('\n')
        .filter((l) => l !== '!! secret.ignored')
        .join('\n'),
    });
    // It has no owner: nothing of a projection was restored.
    expect(run('git', ['config', '--worktree', '--get-regexp', '^overdeck\\.'], fx.wt1).stdout).toBe('');
  });

  it('ignored files, opted in: stored and restored within their bound; over it none is stored, and the snapshot says so', async () => {
    dirty(fx.wt1);
    mkdirSync(path.join(fx.wt1, 'cache.ignored'));
    writeFileSync(path.join(fx.wt1, 'cache.ignored', 'blob'), 'in an ignored directory\n', { mode: 0o755 });
    const files = filesOf(fx.wt1);
    const within = await preserveWip(fx.wt1, 'own_R', 1, { ignored: { maxBytes: 1024 } });
    const over = await preserveWip(fx.wt1, 'own_R', 2, { ignored: { maxBytes: 10 } });
    const bytes = 'ignored content\n'.length + 'in an ignored directory\n'.length;
    expect((await readWipSnapshot(fx.repo, within!.ref)).ignored).toMatchObject({ stored: true, bytes });
    expect((await readWipSnapshot(fx.repo, over!.ref)).ignored).toEqual({ stored: false, reason: 'over_bound', bytes, bound: 10 });
    // Over the bound, the snapshot is the same as without ignored files.
    expect(g(fx.repo, 'rev-parse', `${over!.ref}^{tree}`)).toBe(g(fx.repo, 'rev-parse', `${within!.ref}^{tree}`));

    g(fx.repo, 'worktree', 'remove', '--force', fx.wt1);
    const back = await restoreWorktree({ repo: fx.repo, snapshotRef: within!.ref });
    expect(back.restored.ignored).toBe(2);
    expect(filesOf(fx.wt1)).toEqual(files);

    const elsewhere = path.join(fx.root, 'over');
    const partial = await restoreWorktree({ repo: fx.repo, snapshotRef: over!.ref, path: elsewhere });
    expect(partial.restored.ignored).toBe(0);
    expect(existsSync(path.join(elsewhere, 'secret.ignored'))).toBe(false);
    // wt1 holds the branch now: the second restore checks out the recorded HEAD detached, and says why.
    expect(partial.head).toEqual({
      mode: 'detached',
      sha: g(fx.wt1, 'rev-parse', 'HEAD'),
      why: 'branch_in_use',
      branch: 'refs/heads/wt1',
      branchTip: g(fx.wt1, 'rev-parse', 'HEAD'),
    });
  });

  it('a branch that moved since the snapshot: HEAD is the recorded one, detached, and the answer says the branch moved', async () => {
    writeFileSync(path.join(fx.wt1, 'a.txt'), 'wip\n');
    const head = g(fx.wt1, 'rev-parse', 'HEAD');
    const wip = await preserveWip(fx.wt1, 'own_R', 1);
    g(fx.repo, 'worktree', 'remove', '--force', fx.wt1);
    g(fx.repo, 'update-ref', 'refs/heads/wt1', 'main~1');
    const out = await restoreWorktree({ repo: fx.repo, sha: wip!.sha });
    expect(out.head).toEqual({ mode: 'detached', sha: head, why: 'branch_moved', branch: 'refs/heads/wt1', branchTip: g(fx.repo, 'rev-parse', 'main~1') });
    expect(run('git', ['symbolic-ref', '-q', 'HEAD'], fx.wt1).status).toBe(1);
    expect(readFileSync(path.join(fx.wt1, 'a.txt'), 'utf8')).toBe('wip\n');
    expect(out.snapshot).toEqual({ sha: wip!.sha, ref: null });
  });

  it('refuses a target that exists and is not empty, before anything changes', async () => {
    writeFileSync(path.join(fx.wt1, 'a.txt'), 'wip\n');
    const wip = await preserveWip(fx.wt1, 'own_R', 1);
    const occupied = path.join(fx.root, 'occupied');
    mkdirSync(occupied);
    writeFileSync(path.join(occupied, 'mine.txt'), 'not yours\n');
    const [refs, worktrees] = [refsOf(fx.repo), worktreesOf(fx.repo)];
    await expect(restoreWorktree({ repo: fx.repo, snapshotRef: wip!.ref, path: occupied })).rejects.toMatchObject({ code: 'path_exists' });
    // The live worktree itself is such a path too.
    await expect(restoreWorktree({ repo: fx.repo, snapshotRef: wip!.ref })).rejects.toMatchObject({ code: 'path_exists' });
    expect(readdirSync(occupied)).toEqual(['mine.txt']);
    expect([refsOf(fx.repo), worktreesOf(fx.repo)]).toEqual([refs, worktrees]);
  });

  it('a corrupted snapshot (an object it needs is missing) fails as snapshot_corrupt and adds no worktree', async () => {
    writeFileSync(path.join(fx.wt1, 'only-here.txt'), 'content no other object has\n');
    const wip = await preserveWip(fx.wt1, 'own_R', 1);
    const blob = g(fx.repo, 'rev-parse', `${wip!.sha}:only-here.txt`);
    g(fx.repo, 'worktree', 'remove', '--force', fx.wt1);
    rmSync(path.join(fx.repo, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
    const worktrees = worktreesOf(fx.repo);
    const err = await restoreWorktree({ repo: fx.repo, snapshotRef: wip!.ref }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'snapshot_corrupt', message: expect.stringMatching(/missing/) });
    expect(existsSync(fx.wt1)).toBe(false);
    expect(worktreesOf(fx.repo)).toBe(worktrees);
    // A ref naming no snapshot at all is another answer.
    await expect(restoreWorktree({ repo: fx.repo, snapshotRef: 'refs/overdeck/wip/own_R/99' })).rejects.toMatchObject({ code: 'snapshot_not_found' });
  });

  it('a worktree that differs from the snapshot after the restore wrote it is a mismatch, never a success', async () => {
    writeFileSync(path.join(fx.wt1, 'a.txt'), 'wip\n');
    const wip = await preserveWip(fx.wt1, 'own_R', 1);
    g(fx.repo, 'worktree', 'remove', '--force', fx.wt1);
    const err = await restoreWorktree({
      repo: fx.repo,
      snapshotRef: wip!.ref,
      // A writer in the new worktree between the restore's writes and its check.
      beforeVerify: (wt) => writeFileSync(path.join(wt, 'a.txt'), 'changed meanwhile\n'),
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'restore_mismatch', details: { part: 'files', paths: ['M\ta.txt'], worktreePath: fx.wt1, left: true } });
  });
});

describe('od-worktree restore', () => {
  it('the latest of two snapshots is the one taken later, whatever their commit dates say (a reclaim and a removal a moment apart)', async () => {
    writeFileSync(path.join(fx.wt1, 'a.txt'), 'first\n');
    const first = await preserveWip(fx.wt1, 'own_TIE', 1);
    writeFileSync(path.join(fx.wt1, 'notes.md'), 'later\n');
    const later = await preserveWipByTree(fx.wt1, 'own_TIE');
    // Commit dates count seconds: two snapshots a moment apart often share one, and the older then
    // won on its ref's name. Rather than wait for such a pair, the later snapshot's commit is made
    // again, the same in all but its dates, a second before the first's: only the snapshot's own
    // millisecond record can still tell which came last.
    const firstSeconds = Number(g(fx.repo, 'log', '-1', '--format=%ct', first!.sha));
    const [tree, parents] = [g(fx.repo, 'log', '-1', '--format=%T', later!.sha), g(fx.repo, 'log', '-1', '--format=%P', later!.sha)];
    const message = run('git', ['log', '-1', '--format=%B', later!.sha], fx.repo).stdout;
    const date = `${firstSeconds - 1} +0000`;
    const parentArgs = parents
      .split(' ')
      .filter(Boolean)
      .flatMap((p) => ['-p', p]);
    const remade = run('git', ['commit-tree', tree, ...parentArgs, '-F', '-'], fx.repo, { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date }, message);
    expect(remade.status).toBe(0);
    const sha = remade.stdout.trim();
    g(fx.repo, 'update-ref', later!.ref, sha);
    expect(Number(g(fx.repo, 'log', '-1', '--format=%ct', sha))).toBeLessThan(firstSeconds);
    expect(await findSnapshotForPath(fx.repo, fx.wt1)).toMatchObject({ ref: later!.ref, sha });
  });

  it('restores the latest snapshot recorded for a removed worktree path; --json answers the contract; a second restore refuses the path', async () => {
    dirty(fx.wt1);
    const files = filesOf(fx.wt1);
    await preserveWip(fx.wt1, 'own_R', 1);
    writeFileSync(path.join(fx.wt1, 'later.txt'), 'only in the later snapshot\n');
    const later = await preserveWip(fx.wt1, 'own_R', 2);
    g(fx.repo, 'worktree', 'remove', '--force', fx.wt1);
    expect(await findSnapshotForPath(fx.repo, fx.wt1)).toMatchObject({ ref: later!.ref, sha: later!.sha });

    const cli = (args: string[]) =>
      spawnSync(process.execPath, [BIN, ...args], { cwd: fx.repo, env: cleanGitEnv({ OD_ALLOWED_ROOTS: fx.root }), encoding: 'utf8' });
    const res = cli(['restore', fx.wt1, '--json']);
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    const body = RestoreOutputSchema.parse(JSON.parse(res.stdout));
    expect(body).toMatchObject({ worktreePath: fx.wt1, snapshot: { ref: later!.ref }, verified: true, owner: null, head: { mode: 'branch' } });
    const { 'secret.ignored': _ignored, ...rest } = files;
    expect(filesOf(fx.wt1)).toEqual({ ...rest, 'later.txt': `file - ${Buffer.from('only in the later snapshot\n').toString('hex')}` });

    const again = cli(['restore', later!.ref.replace('refs/overdeck/wip/', ''), '--json']);
    expect(again.status).toBe(1);
    expect(RestoreFailureOutputSchema.parse(JSON.parse(again.stdout))).toMatchObject({ code: 'path_exists' });
    const human = cli(['restore', path.join(fx.root, 'never-was')]);
    expect(human.status).toBe(3);
    expect(human.stderr).toMatch(/snapshot_not_found/);
  });
});
