import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { applyLocalProjection } from '../../src/git/projection';
import { parseLockReason, readRegistry, refreshRegistry, registryPath, scanRegistry, updateRegistryEntry } from '../../src/git/registry';
import { makeRepo, projection, run, type Fixture } from './git-fixture';

/**
 * The registry other tools read without us (docs/integrating.md#the-registry): written by the
 * projection, read here with jq (python3's json where jq is missing) and by the doc's own
 * ten-line shell check, which must refuse to delete an owned worktree and delete a free one.
 * A projection updates its own entry under the registry's lock: planted back, a full scan per
 * update, an update without the lock, and a failed update without its mark each fail a test here.
 */

let fx: Fixture;
beforeEach(() => {
  fx = makeRepo();
});
afterEach(() => fx.cleanup());

const ROOT = path.resolve(__dirname, '../..');
const common = () => realpathSync(path.join(fx.repo, '.git'));
const hasJq = spawnSync('sh', ['-c', 'command -v jq'], { encoding: 'utf8' }).status === 0;

/** The owners of the registry's worktrees, as a reader with only the file and jq (or python3) sees them. */
function ownersByJq(): string[] {
  const file = registryPath(common());
  const r = hasJq
    ? run('jq', ['-r', '.worktrees[] | "\\(.path) \\(.executionSessionId) \\(.epoch)"', file], fx.repo)
    : run(
        'python3',
        ['-c', 'import json,sys\nfor w in json.load(open(sys.argv[1]))["worktrees"]: print(w["path"], w["executionSessionId"], w["epoch"])', file],
        fx.repo,
      );
  expect(r.status).toBe(0);
  return r.stdout.split('\n').filter(Boolean);
}

/** The ```sh block after "ten-line check" in docs/integrating.md, as a script file. */
function docCheck(): string {
  const doc = readFileSync(path.join(ROOT, 'docs/integrating.md'), 'utf8');
  const at = doc.indexOf("A cleanup script's ten-line check");
  expect(at).toBeGreaterThanOrEqual(0);
  const block = /```sh\n([\s\S]*?)```/.exec(doc.slice(at));
  expect(block).not.toBeNull();
  expect(block![1]!.split('\n').filter((l) => l.trim() !== '').length).toBeLessThanOrEqual(10);
  const file = path.join(fx.repo, '..', 'safe-remove.sh');
  writeFileSync(file, block![1]!, { mode: 0o755 });
  return file;
}

describe('registry.json', () => {
  it('lists the owned worktrees with owner and epoch after each projection, and drops a released one', async () => {
    await applyLocalProjection(fx.wt1, projection('A', 3, { epoch: 2 }), { gitLock: true });
    await applyLocalProjection(fx.wt2, projection('B', 1), { gitLock: true });
    expect(ownersByJq()).toEqual([`${realpathSync(fx.wt1)} session_A 2`, `${realpathSync(fx.wt2)} session_B 1`]);

    await applyLocalProjection(fx.wt2, projection('B', 2, { state: 'released' }), { gitLock: true });
    expect(ownersByJq()).toEqual([`${realpathSync(fx.wt1)} session_A 2`]);

    const reg = await readRegistry(common());
    expect(reg?.worktrees[0]).toMatchObject({ ownershipId: 'own_A', conversationId: 'conv-A', main: false, lockReason: expect.stringMatching(/^overdeck: /) });
    expect(parseLockReason(reg!.worktrees[0]!.lockReason!)).toEqual({ executionSessionId: 'session_A', ownershipId: 'own_A', epoch: 2 });
    // The same owner from git alone: `git worktree list --porcelain`'s locked line, as a tool that only runs git reads it.
    const porcelain = run('git', ['worktree', 'list', '--porcelain'], fx.repo).stdout;
    const locked = porcelain
      .split('\n')
      .filter((l) => l.startsWith('locked '))
      .map((l) => parseLockReason(l.slice('locked '.length)));
    expect(locked).toEqual([{ executionSessionId: 'session_A', ownershipId: 'own_A', epoch: 2 }]);
  });

  it('holds no secret: no tenure hash, no conversation URL', async () => {
    const p = projection('A', 3, { tenureHash: 'a'.repeat(64) });
    await applyLocalProjection(fx.wt1, p, { gitLock: true });
    const text = readFileSync(registryPath(common()), 'utf8');
    expect(text).not.toContain('a'.repeat(64));
    expect(text).not.toContain(p.conversationUrl!);
    expect(text).not.toMatch(/tenure|secret|token/i);
  });

  it('is replaced by rename and left alone when nothing changed', async () => {
    await applyLocalProjection(fx.wt1, projection('A', 1), { gitLock: true });
    const file = registryPath(common());
    const inode = spawnSync('stat', ['-c', '%i', file], { encoding: 'utf8' }).stdout;
    await refreshRegistry(common());
    expect(spawnSync('stat', ['-c', '%i', file], { encoding: 'utf8' }).stdout).toBe(inode);
    await applyLocalProjection(fx.wt1, projection('A', 2, { epoch: 5 }), { gitLock: true });
    expect(spawnSync('stat', ['-c', '%i', file], { encoding: 'utf8' }).stdout).not.toBe(inode);
    expect(readdirSync(path.dirname(file)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('holds every owner when many worktrees project at once (one writer at a time under its lock)', async () => {
    const more = Array.from({ length: 6 }, (_, i) => {
      const wt = path.join(fx.root, `more-${i}`);
      run('git', ['worktree', 'add', '-q', '-b', `more-${i}`, wt], fx.repo);
      return wt;
    });
    const wts = [fx.wt1, fx.wt2, ...more];
    await Promise.all(wts.map((wt, i) => applyLocalProjection(wt, projection(`C${i}`, 1), { gitLock: true })));
    expect(ownersByJq()).toHaveLength(wts.length);
    expect((await readRegistry(common()))?.worktrees.map((w) => w.executionSessionId).sort()).toEqual(wts.map((_, i) => `session_C${i}`).sort());
    expect(await readRegistry(common())).toEqual(await scanRegistry(common()));
    // The updates alone, all at once, onto a registry that lists none of them: none is lost.
    writeFileSync(registryPath(common()), JSON.stringify({ schema: 'od-worktree.registry/1', commonDir: common(), worktrees: [] }));
    const gitDirs = readdirSync(path.join(common(), 'worktrees')).map((n) => path.join(common(), 'worktrees', n));
    await Promise.all(gitDirs.map((d) => updateRegistryEntry(common(), d)));
    expect(await readRegistry(common())).toEqual(await scanRegistry(common()));
  });

  it("a projection rewrites its own worktree's entry only: it reads no other worktree's git dir", async () => {
    await applyLocalProjection(fx.wt1, projection('A', 1), { gitLock: true });
    // A lock JSON the projection never wrote, planted in the other worktree's git dir.
    const planted = path.join(common(), 'worktrees', path.basename(fx.wt2), 'overdeck.lock.json');
    writeFileSync(planted, readFileSync(path.join(common(), 'worktrees', path.basename(fx.wt1), 'overdeck.lock.json')));
    await applyLocalProjection(fx.wt1, projection('A', 2, { epoch: 2 }), { gitLock: true });
    expect(ownersByJq()).toEqual([`${realpathSync(fx.wt1)} session_A 2`]);
    // A rebuild reads them all.
    await refreshRegistry(common());
    expect(ownersByJq()).toHaveLength(2);
  });

  it('an update that failed leaves a mark, and the next projection of any worktree rebuilds the registry whole', async () => {
    const file = registryPath(common());
    await applyLocalProjection(fx.wt2, projection('B', 1), { gitLock: true });
    rmSync(file);
    mkdirSync(file); // the registry cannot be read or replaced: wt1's update fails
    await expect(applyLocalProjection(fx.wt1, projection('A', 1), { gitLock: true })).resolves.toBe('written');
    expect(existsSync(path.join(path.dirname(file), 'rebuild'))).toBe(true);
    rmdirSync(file);
    writeFileSync(file, JSON.stringify({ schema: 'od-worktree.registry/1', commonDir: common(), worktrees: [] }));
    // wt2 projects again; wt1's entry comes back with it.
    await applyLocalProjection(fx.wt2, projection('B', 2, { epoch: 1 }), { gitLock: true });
    expect(ownersByJq()).toEqual([`${realpathSync(fx.wt1)} session_A 1`, `${realpathSync(fx.wt2)} session_B 1`]);
    expect(existsSync(path.join(path.dirname(file), 'rebuild'))).toBe(false);
  });

  it('is never written through a symlink out of the common dir, and the projection still succeeds', async () => {
    const elsewhere = mkdtempSync(path.join(fx.root, 'elsewhere-'));
    symlinkSync(elsewhere, path.join(common(), 'od-worktree'));
    await expect(applyLocalProjection(fx.wt1, projection('A', 1), { gitLock: true })).resolves.toBe('written');
    expect(readdirSync(elsewhere)).toEqual([]);
    await expect(refreshRegistry(common())).rejects.toThrow(/not a directory of its own/);
  });

  it("docs/integrating.md's ten-line check refuses to delete an owned worktree and deletes a free one", async () => {
    await applyLocalProjection(fx.wt1, projection('A', 1), { gitLock: true });
    const check = docCheck();
    const refused = run('sh', [check, fx.wt1], fx.repo);
    expect({ status: refused.status, stderr: refused.stderr }).toEqual({ status: 1, stderr: expect.stringContaining('is owned (session session_A, epoch 1)') });
    expect(existsSync(fx.wt1)).toBe(true);
    const removed = run('sh', [check, fx.wt2], fx.repo);
    expect({ status: removed.status, stderr: removed.stderr }).toEqual({ status: 0, stderr: '' });
    expect(existsSync(fx.wt2)).toBe(false);
  });
});
