import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { clearLock, type LockJson, lockWorktree, readLock, unlockWorktree, worktreeLockReason, writeLock } from '../../src/git/lock';
import { applyLocalProjection, readProjection } from '../../src/git/projection';
import { g, makeRepo, projection, run, type Fixture } from './git-fixture';

let fx: Fixture;
beforeEach(() => {
  fx = makeRepo();
});
afterEach(() => fx.cleanup());

const lockFile = (fx: Fixture): string => path.join(fx.repo, '.git/worktrees/wt1/overdeck.lock.json');
const lock = (epoch: number): LockJson => ({
  schema_version: 2,
  ownership_id: 'own_A',
  execution_session_id: 'session_A',
  conversation_id: null,
  claimed_at: 1787190000,
  last_seen_at: 1787190060,
  epoch,
});

describe('lock JSON', () => {
  it('is written to the private git dir by rename, with schema_version 2 and the epoch', async () => {
    await writeLock(fx.wt1, lock(1));
    const firstInode = statSync(lockFile(fx)).ino;
    await writeLock(fx.wt1, lock(2));
    // A new inode means the file was replaced by rename, not rewritten in place.
    expect(statSync(lockFile(fx)).ino).not.toBe(firstInode);
    expect(JSON.parse(readFileSync(lockFile(fx), 'utf8'))).toEqual(lock(2));
    expect(await readLock(fx.wt1)).toEqual(lock(2));
    expect(readdirSync(path.dirname(lockFile(fx))).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(g(fx.wt1, 'status', '--porcelain')).toBe('');
    expect(await readLock(fx.wt2)).toBeNull();
  });

  it('clears, and refuses to read a file of another schema', async () => {
    await writeLock(fx.wt1, lock(1));
    await clearLock(fx.wt1);
    expect(existsSync(lockFile(fx))).toBe(false);
    await clearLock(fx.wt1);
    writeFileSync(lockFile(fx), JSON.stringify({ ...lock(1), schema_version: 1 }));
    await expect(readLock(fx.wt1)).rejects.toMatchObject({ code: 'lock_corrupt' });
  });
});

describe('git worktree lock', () => {
  const remove = (wt: string) => run('git', ['worktree', 'remove', wt], fx.repo);

  it('makes git worktree remove fail until unlocked', async () => {
    await lockWorktree(fx.wt1, 'owned by session_A');
    const refused = remove(fx.wt1);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('locked');
    expect(existsSync(fx.wt1)).toBe(true);
    await unlockWorktree(fx.wt1);
    expect(remove(fx.wt1).status).toBe(0);
    expect(existsSync(fx.wt1)).toBe(false);
  });

  it('is idempotent: re-locking replaces the reason, unlocking twice is fine', async () => {
    await lockWorktree(fx.wt1, 'first');
    const lockedFile = path.join(fx.repo, '.git/worktrees/wt1/locked');
    const inode = statSync(lockedFile).ino;
    await lockWorktree(fx.wt1, 'first');
    expect(statSync(lockedFile).ino).toBe(inode); // same reason: left as git wrote it
    await lockWorktree(fx.wt1, 'second\nline');
    expect(g(fx.repo, 'worktree', 'list', '--porcelain')).toContain('locked second line');
    expect(await worktreeLockReason(fx.wt1)).toBe('second line');
    await unlockWorktree(fx.wt1);
    await unlockWorktree(fx.wt1);
    expect(await worktreeLockReason(fx.wt1)).toBeNull();
  });

  it('is a no-op for the main worktree, which git cannot lock', async () => {
    await lockWorktree(fx.repo, 'x');
    await unlockWorktree(fx.repo);
    expect(g(fx.repo, 'worktree', 'list', '--porcelain')).not.toContain('locked');
  });
});

describe('applyLocalProjection', () => {
  it('writes config, lock JSON and git lock together, and drops the locks on release', async () => {
    const p = projection('A', 3, { epoch: 2, claimedAt: '2026-08-20T00:00:00.000Z', lastSeenAt: '2026-08-20T00:01:00.000Z' });
    expect(await applyLocalProjection(fx.wt1, p, { gitLock: true })).toBe('written');
    expect(await readProjection(fx.wt1)).toEqual(p);
    expect(await readLock(fx.wt1)).toEqual({
      schema_version: 2,
      ownership_id: 'own_A',
      execution_session_id: 'session_A',
      conversation_id: 'conv-A',
      claimed_at: Date.parse(p.claimedAt) / 1000,
      last_seen_at: Date.parse(p.lastSeenAt) / 1000,
      epoch: 2,
    });
    expect(await worktreeLockReason(fx.wt1)).toBe('overdeck: owned by session session_A (ownership own_A, epoch 2)');
    expect(run('git', ['worktree', 'remove', fx.wt1], fx.repo).status).not.toBe(0);

    // A late, older write changes nothing: projection, lock and git lock still name the same owner.
    expect(await applyLocalProjection(fx.wt1, projection('Z', 2, { ownershipId: 'own_A' }), { gitLock: true })).toBe('skipped');
    expect((await readLock(fx.wt1))?.execution_session_id).toBe('session_A');

    expect(await applyLocalProjection(fx.wt1, { ...p, seq: 4, state: 'released' }, { gitLock: true })).toBe('written');
    expect((await readProjection(fx.wt1))?.state).toBe('released');
    expect(await readLock(fx.wt1)).toBeNull();
    expect(await worktreeLockReason(fx.wt1)).toBeNull();
    expect(run('git', ['worktree', 'remove', fx.wt1], fx.repo).status).toBe(0);
  });

  it('leaves a lock someone else placed when asked not to hold one', async () => {
    g(fx.repo, 'worktree', 'lock', '--reason', 'on a USB disk', fx.wt1);
    await applyLocalProjection(fx.wt1, projection('A', 1), { gitLock: false });
    expect(await worktreeLockReason(fx.wt1)).toBe('on a USB disk');
    await applyLocalProjection(fx.wt1, null, { gitLock: true });
    expect(await worktreeLockReason(fx.wt1)).toBe('on a USB disk');
    expect(await readProjection(fx.wt1)).toBeNull();
  });

  it('clears everything with null', async () => {
    await applyLocalProjection(fx.wt1, projection('A', 1), { gitLock: true, lockReason: 'custom' });
    expect(await worktreeLockReason(fx.wt1)).toBe('overdeck: custom');
    await applyLocalProjection(fx.wt1, null, { gitLock: true });
    expect(await readProjection(fx.wt1)).toBeNull();
    expect(await readLock(fx.wt1)).toBeNull();
    expect(await worktreeLockReason(fx.wt1)).toBeNull();
  });
});
