/**
 * The host-side projection against hostile callers and layouts: one worktree identity, every
 * write under the allowed roots (including the git dirs a `.git` file leads to), never over
 * another live ownership, a gone worktree as a final answer, cancellation that kills git.
 * Real git in temp dirs throughout.
 */
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure, CancelledFailure } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import lockfile from 'proper-lockfile';
import { createHostActivities } from '../../src/activities';
import { noAuthority } from '../../src/activities/liveness';
import { emptyRecord, type OwnershipRecord } from '../../src/domain/projection';
import { writeInDir } from '../../src/git/confine';
import { guardCheck } from '../../src/git/guard';
import { readLock, worktreeLockReason } from '../../src/git/lock';
import { LOCK_FILE } from '../../src/git/lock-file';
import { applyLocalProjection, readProjection, readSupersededProvisional, writeProjection } from '../../src/git/projection';
import { offlineClaim } from '../../src/git/provisional';
import { applyRecord, NO_TENURE_HASHES } from '../../src/git/record';
import { parseKeyring } from '../../src/keys/message-seal';
import { identifyWorktree, worktreeDirs } from '../../src/git/repo';
import { preserveWip } from '../../src/git/wip';
import { WRITER_LOCK_DIR } from '../../src/git/writer-lock';
import { g, makeRepo, projection, run, type Fixture } from './git-fixture';

let fx: Fixture;
beforeEach(() => {
  fx = makeRepo();
});
afterEach(() => fx.cleanup());

/** A second temp tree, NOT under fx.root: stands for a repository outside the allowed roots. */
function outsideRepo(): { root: string; repo: string; wt: string; privateDir: string; cleanup(): void } {
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'od-outside-')));
  const repo = path.join(root, 'repo');
  g(root, 'init', '-q', '-b', 'main', repo);
  writeFileSync(path.join(repo, 'f.txt'), 'outside\n');
  g(repo, 'add', '.');
  g(repo, 'commit', '-q', '-m', 'outside');
  const wt = path.join(root, 'owt');
  g(repo, 'worktree', 'add', '-q', '-b', 'owt', wt);
  return { root, repo, wt, privateDir: path.join(repo, '.git/worktrees/owt'), cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** Every entry under `dir` with its content hash: equal snapshots mean nothing was written. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      const st = lstatSync(p);
      const rel = path.relative(dir, p);
      if (st.isSymbolicLink()) out[rel] = `link ${readlinkSync(p)}`;
      else if (st.isDirectory()) {
        out[rel] = 'dir';
        walk(p);
      } else out[rel] = `${(st.mode & 0o777).toString(8)} ${createHash('sha1').update(readFileSync(p)).digest('hex')}`;
    }
  };
  walk(dir);
  return out;
}

const configOf = (cwd: string): string => run('git', ['config', '--list', '--show-origin'], cwd).stdout;

function record(over: Partial<OwnershipRecord> = {}): OwnershipRecord {
  const base = emptyRecord({ ownershipId: 'own_A', repoRoot: fx.repo, worktreePath: fx.wt1, branch: 'wt1', hostId: 'h' });
  return {
    ...base,
    owner: {
      executionSessionId: 'session_A',
      runtime: 'codex-cli',
      parentExecutionSessionId: null,
      conversation: null,
      worker: { runId: null, workerId: 'w' },
      process: null,
    },
    worker: { runId: null, workerId: 'w' },
    state: 'active',
    epoch: 1,
    seq: 3,
    claimedAt: '2026-08-20T00:00:00.000Z',
    lastSeenAt: '2026-08-20T00:01:00.000Z',
    ...over,
  };
}

// A made-up service key: the projections written here carry the tenure hashes it derives.
const keyring = parseKeyring(Buffer.alloc(32, 7).toString('base64'), 'test key');
const host = (roots: string[] = [fx.root], projectionLockWaitMs?: number) =>
  createHostActivities({ allowedRoots: roots, authority: noAuthority, keyring, ...(projectionLockWaitMs === undefined ? {} : { projectionLockWaitMs }) });

/** What a host activity threw, as the workflow sees it: ApplicationFailure type and retryability. */
async function failureOf(p: Promise<unknown>): Promise<{ type: string | null | undefined; nonRetryable: boolean }> {
  try {
    await p;
  } catch (err) {
    if (!(err instanceof ApplicationFailure)) throw err;
    return { type: err.type, nonRetryable: err.nonRetryable === true };
  }
  throw new Error('expected the activity to fail');
}

describe('identifyWorktree: one derivation of the repository root', () => {
  const porcelainFirst = (cwd: string): string => realpathSync(/^worktree (.+)$/m.exec(g(cwd, 'worktree', 'list', '--porcelain'))![1]!);

  it('ordinary repository: main worktree, linked worktrees and subdirectories agree on repoRoot', async () => {
    mkdirSync(path.join(fx.wt1, 'sub'));
    const main = await identifyWorktree(fx.repo);
    const linked = await identifyWorktree(fx.wt1);
    const sub = await identifyWorktree(path.join(fx.wt1, 'sub'));
    expect(main).toEqual({
      worktreePath: fx.repo,
      repoRoot: fx.repo,
      privateDir: path.join(fx.repo, '.git'),
      commonDir: path.join(fx.repo, '.git'),
      isMain: true,
      bare: false,
    });
    expect(linked).toEqual({
      worktreePath: fx.wt1,
      repoRoot: fx.repo,
      privateDir: path.join(fx.repo, '.git/worktrees/wt1'),
      commonDir: path.join(fx.repo, '.git'),
      isMain: false,
      bare: false,
    });
    expect(sub).toEqual(linked);
    expect(porcelainFirst(fx.wt2)).toBe(linked.repoRoot);
  });

  it('git init --separate-git-dir: the main worktree and a linked one agree with git worktree list', async () => {
    const store = path.join(fx.root, 'sgd', 'store.git');
    const main = path.join(fx.root, 'sgd', 'main');
    g(fx.root, 'init', '-q', '-b', 'main', `--separate-git-dir=${store}`, main);
    g(main, 'commit', '-q', '--allow-empty', '-m', 'x');
    const linked = path.join(fx.root, 'sgd', 'linked');
    g(main, 'worktree', 'add', '-q', '-b', 'l', linked);
    const a = await identifyWorktree(main);
    const b = await identifyWorktree(linked);
    expect(a).toMatchObject({ worktreePath: main, privateDir: store, commonDir: store, isMain: true, bare: false });
    expect(b).toMatchObject({ worktreePath: linked, privateDir: path.join(store, 'worktrees/linked'), commonDir: store, isMain: false, bare: false });
    expect(a.repoRoot).toBe(b.repoRoot);
    expect(a.repoRoot).toBe(porcelainFirst(main));
    expect(b.repoRoot).toBe(porcelainFirst(linked));
  });

  it('bare repository: the common dir itself, for the repository and its linked worktrees', async () => {
    const bare = path.join(fx.root, 'bare.git');
    g(fx.root, 'clone', '-q', '--bare', fx.repo, bare);
    const linked = path.join(fx.root, 'from-bare');
    g(bare, 'worktree', 'add', '-q', linked, 'main');
    expect(await identifyWorktree(bare)).toEqual({ worktreePath: bare, repoRoot: bare, privateDir: bare, commonDir: bare, isMain: true, bare: true });
    expect(await identifyWorktree(linked)).toMatchObject({ worktreePath: linked, repoRoot: bare, commonDir: bare, isMain: false, bare: true });
  });

  it('resolves symlinked spellings to real paths, and says what is not a worktree', async () => {
    const link = path.join(fx.root, 'link-to-wt1');
    symlinkSync(fx.wt1, link);
    expect((await identifyWorktree(link)).worktreePath).toBe(fx.wt1);
    const plain = mkdtempSync(path.join(os.tmpdir(), 'od-plain-'));
    try {
      await expect(identifyWorktree(plain)).rejects.toMatchObject({ code: 'not_a_worktree' });
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
    await expect(identifyWorktree(path.join(fx.root, 'nope'))).rejects.toMatchObject({ code: 'worktree_missing' });
  });
});

describe('host activity inspectWorktree', () => {
  it('returns the canonical top, the repository root and the branch', async () => {
    mkdirSync(path.join(fx.wt1, 'deep'));
    expect(await host().inspectWorktree(path.join(fx.wt1, 'deep'))).toEqual({ worktreePath: fx.wt1, repoRoot: fx.repo, branch: 'wt1' });
    g(fx.wt2, 'checkout', '-q', '--detach');
    expect(await host().inspectWorktree(fx.wt2)).toEqual({ worktreePath: fx.wt2, repoRoot: fx.repo, branch: null });
  });

  it('refuses, non-retryably, outside the roots, a missing path and a directory that is no worktree', async () => {
    expect(await failureOf(host(['/nonexistent-root']).inspectWorktree(fx.wt1))).toEqual({ type: 'path_outside_allowed_roots', nonRetryable: true });
    expect(await failureOf(host().inspectWorktree(path.join(fx.root, 'missing')))).toEqual({ type: 'path_not_found', nonRetryable: true });
    mkdirSync(path.join(fx.root, 'plain'));
    // fx.root itself is not inside any repository: a plain directory under it is no worktree.
    expect(await failureOf(host().inspectWorktree(path.join(fx.root, 'plain')))).toEqual({ type: 'not_a_worktree', nonRetryable: true });
    rmSync(path.join(fx.repo, '.git/worktrees/wt2'), { recursive: true, force: true });
    expect(await failureOf(host().inspectWorktree(fx.wt2))).toEqual({ type: 'not_a_worktree', nonRetryable: true });
  });
});

describe('writes stay under the allowed roots, git dirs included', () => {
  let out: ReturnType<typeof outsideRepo>;
  beforeEach(() => {
    out = outsideRepo();
  });
  afterEach(() => out.cleanup());

  /** A directory under the roots whose `.git` file points at the outside repository's worktree git dir. */
  function hostileWorktree(): string {
    const evil = path.join(fx.root, 'evil');
    mkdirSync(evil);
    writeFileSync(path.join(evil, '.git'), `gitdir: ${out.privateDir}\n`);
    return evil;
  }

  function expectUntouched(before: { tree: Record<string, string>; cfg: string; wtCfg: string }, evil: string, evilBefore: Record<string, string>): void {
    expect(snapshot(out.root)).toEqual(before.tree);
    expect(configOf(out.repo)).toBe(before.cfg);
    expect(configOf(out.wt)).toBe(before.wtCfg);
    expect(run('git', ['config', '--file', path.join(out.repo, '.git/config'), '--get', 'extensions.worktreeConfig'], out.repo).status).toBe(1);
    expect(snapshot(evil)).toEqual(evilBefore);
  }

  it('a linked worktree whose .git points at a git dir outside: nothing is written anywhere', async () => {
    const evil = hostileWorktree();
    // git itself takes it for a worktree of the outside repository.
    expect(g(evil, 'rev-parse', '--git-common-dir')).toBe(path.join(out.repo, '.git'));
    const before = { tree: snapshot(out.root), cfg: configOf(out.repo), wtCfg: configOf(out.wt) };
    const evilBefore = snapshot(evil);

    const h = host();
    const rec = record({ worktreePath: evil });
    expect(await failureOf(h.applyLocalProjection(rec))).toEqual({ type: 'path_outside_allowed_roots', nonRetryable: true });
    expect(await failureOf(h.preserveWip(evil, 'own_A', 4))).toEqual({ type: 'path_outside_allowed_roots', nonRetryable: true });
    expect(await failureOf(h.inspectWorktree(evil))).toEqual({ type: 'path_outside_allowed_roots', nonRetryable: true });
    await expect(offlineClaim(evil, { executionSessionId: 'session_P', runtime: 'codex-cli', allowedRoots: [fx.root] })).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringContaining('path_outside_allowed_roots'),
    });
    await expect(applyRecord(evil, rec, NO_TENURE_HASHES, { allowedRoots: [fx.root] })).rejects.toMatchObject({ code: 'path_outside_allowed_roots' });
    expectUntouched(before, evil, evilBefore);
  });

  it('a private git dir under the roots whose commondir points outside: refused as well', async () => {
    // Hand-made worktree git dir inside the roots, sharing the outside repository's objects and config.
    const fake = path.join(fx.root, 'fake-gitdir');
    mkdirSync(fake);
    writeFileSync(path.join(fake, 'commondir'), `${path.join(out.repo, '.git')}\n`);
    writeFileSync(path.join(fake, 'HEAD'), 'ref: refs/heads/main\n');
    const evil = path.join(fx.root, 'evil');
    mkdirSync(evil);
    writeFileSync(path.join(evil, '.git'), `gitdir: ${fake}\n`);
    writeFileSync(path.join(fake, 'gitdir'), `${path.join(evil, '.git')}\n`);
    expect(g(evil, 'rev-parse', '--git-common-dir')).toBe(path.join(out.repo, '.git'));
    const before = { tree: snapshot(out.root), cfg: configOf(out.repo), wtCfg: configOf(out.wt) };
    const evilBefore = snapshot(evil);
    const fakeBefore = snapshot(fake);

    expect(await failureOf(host().applyLocalProjection(record({ worktreePath: evil })))).toEqual({ type: 'path_outside_allowed_roots', nonRetryable: true });
    expect(await failureOf(host().preserveWip(evil, 'own_A', 4))).toEqual({ type: 'path_outside_allowed_roots', nonRetryable: true });
    expectUntouched(before, evil, evilBefore);
    expect(snapshot(fake)).toEqual(fakeBefore);
  });

  it('a --separate-git-dir repository whose git dir is outside the roots', async () => {
    const main = path.join(fx.root, 'sgd-main');
    g(fx.root, 'init', '-q', '-b', 'main', `--separate-git-dir=${path.join(out.root, 'store.git')}`, main);
    g(main, 'commit', '-q', '--allow-empty', '-m', 'x');
    const before = snapshot(path.join(out.root, 'store.git'));
    expect(await failureOf(host().applyLocalProjection(record({ worktreePath: main })))).toEqual({ type: 'path_outside_allowed_roots', nonRetryable: true });
    expect(snapshot(path.join(out.root, 'store.git'))).toEqual(before);
  });

  it('a .git repointed outside after an earlier write: the cached dirs are not trusted', async () => {
    const h = host();
    expect((await h.applyLocalProjection(record())).result).toBe('written');
    writeFileSync(path.join(fx.wt1, '.git'), `gitdir: ${out.privateDir}\n`);
    const before = { tree: snapshot(out.root), cfg: configOf(out.repo), wtCfg: configOf(out.wt) };
    expect(await failureOf(h.applyLocalProjection(record({ seq: 4 })))).toEqual({ type: 'path_outside_allowed_roots', nonRetryable: true });
    expect(snapshot(out.root)).toEqual(before.tree);
    expect(configOf(out.repo)).toBe(before.cfg);
  });

  it('a write re-verifies its directory: one swapped for a symlink is not written through', async () => {
    const dir = path.join(fx.root, 'real-dir');
    mkdirSync(dir);
    await writeInDir(dir, 'f', 'one');
    renameSync(dir, path.join(fx.root, 'moved'));
    symlinkSync(out.root, dir);
    const before = snapshot(out.root);
    await expect(writeInDir(dir, 'f', 'two')).rejects.toMatchObject({ code: 'git_failed' });
    expect(snapshot(out.root)).toEqual(before);
  });

  it('the same layout fully under the roots is written normally', async () => {
    const h = host([fx.root, out.root]);
    const evil = hostileWorktree();
    // Allowed now (both repositories are under a root): written into the outside repo's git dir, as git would.
    expect((await h.applyLocalProjection(record({ worktreePath: evil }))).result).toBe('written');
    expect(existsSync(path.join(out.privateDir, 'overdeck.config'))).toBe(true);
  });
});

describe('never over another live ownership (projection_conflict)', () => {
  it('refuses a different live ownership whatever its seq, and leaves config, lock JSON and git lock as they were', async () => {
    await applyLocalProjection(fx.wt1, projection('A', 3), { gitLock: true });
    const lockBefore = await readLock(fx.wt1);
    const reasonBefore = await worktreeLockReason(fx.wt1);
    await expect(applyLocalProjection(fx.wt1, projection('B', 99), { gitLock: true })).rejects.toMatchObject({ code: 'projection_conflict' });
    expect((await readProjection(fx.wt1))?.ownershipId).toBe('own_A');
    expect(await readLock(fx.wt1)).toEqual(lockBefore);
    expect(await worktreeLockReason(fx.wt1)).toBe(reasonBefore);
    // Through the host activity: a non-retryable failure of that type.
    expect(await failureOf(host().applyLocalProjection(record({ ownershipId: 'own_B', seq: 50 })))).toEqual({
      type: 'projection_conflict',
      nonRetryable: true,
    });
  });

  it('replaces another ownership once its lifecycle no longer holds the worktree, whatever the seqs', async () => {
    await writeProjection(fx.wt1, projection('A', 40, { state: 'released' }));
    expect(await writeProjection(fx.wt1, projection('B', 1))).toBe('written');
    await writeProjection(fx.wt2, projection('A', 40, { state: 'landed' }));
    expect(await writeProjection(fx.wt2, projection('B', 1))).toBe('written');
  });

  it('a provisional claim keeps being replaced, with its stash', async () => {
    await offlineClaim(fx.wt1, { executionSessionId: 'session_P', runtime: 'codex-cli', allowedRoots: [fx.root] });
    expect((await host().applyLocalProjection(record({ seq: 1 }))).result).toBe('written');
    expect(await readSupersededProvisional(fx.wt1)).toMatchObject({ executionSessionId: 'session_P', provisional: true });
  });

  it('only force (reconcile --repair) or a compare-and-swap on what was read replaces it', async () => {
    await writeProjection(fx.wt1, projection('A', 3));
    expect(await writeProjection(fx.wt1, projection('B', 1), { force: true })).toBe('written');
    expect(await writeProjection(fx.wt1, projection('C', 1), { expectSeq: 1 })).toBe('written');
    expect((await readProjection(fx.wt1))?.ownershipId).toBe('own_C');
  });

  it('a late clear of an ended ownership leaves another ownership’s projection alone', async () => {
    await applyLocalProjection(fx.wt1, projection('NEW', 2), { gitLock: true });
    expect(await applyRecord(fx.wt1, record({ ownershipId: 'own_OLD', state: 'closed', seq: 9 }), NO_TENURE_HASHES)).toBe('skipped');
    expect((await readProjection(fx.wt1))?.ownershipId).toBe('own_NEW');
    expect(await readLock(fx.wt1)).toMatchObject({ ownership_id: 'own_NEW' });
    expect(await worktreeLockReason(fx.wt1)).toContain('own_NEW');
    // Its own ownership's projection is cleared.
    expect(await applyRecord(fx.wt1, record({ ownershipId: 'own_NEW', state: 'closed', seq: 3 }), NO_TENURE_HASHES)).toBe('cleared');
    expect(await readProjection(fx.wt1)).toBeNull();
  });
});

describe('the config projection is the one authority; the lock JSON is derived', () => {
  it('a lock JSON naming someone else changes no decision, and the next write derives it again', async () => {
    await applyLocalProjection(fx.wt1, projection('A', 3), { gitLock: true });
    const privateDir = (await worktreeDirs(fx.wt1)).privateDir;
    const forged = {
      schema_version: 2,
      ownership_id: 'own_B',
      execution_session_id: 'session_B',
      conversation_id: null,
      claimed_at: 1,
      last_seen_at: 2,
      epoch: 9,
    };
    writeFileSync(path.join(privateDir, LOCK_FILE), JSON.stringify(forged));
    expect(await guardCheck(fx.wt1, { OVERDECK_EXECUTION_SESSION_ID: 'session_A' })).toEqual({ allowed: true });
    expect(await guardCheck(fx.wt1, { OVERDECK_EXECUTION_SESSION_ID: 'session_B' })).toMatchObject({ allowed: false, reason: 'not_owner' });
    expect((await offlineClaim(fx.wt1, { executionSessionId: 'session_B', runtime: 'codex-cli', allowedRoots: [fx.root] })).status).toBe('refused');
    await expect(applyLocalProjection(fx.wt1, projection('B', 10), { gitLock: true })).rejects.toMatchObject({ code: 'projection_conflict' });
    expect(await applyLocalProjection(fx.wt1, projection('A', 4), { gitLock: true })).toBe('written');
    expect(await readLock(fx.wt1)).toMatchObject({ ownership_id: 'own_A', execution_session_id: 'session_A', epoch: 4 });
  });
});

describe('the cross-process writer lock: bounded wait, stale takeover', () => {
  it('a held lock makes a write fail after the bounded wait with retryable projection_busy', async () => {
    const lockDir = path.join((await worktreeDirs(fx.wt1)).privateDir, WRITER_LOCK_DIR);
    const release = await lockfile.lock(lockDir, { lockfilePath: lockDir, realpath: false, stale: 5_000, onCompromised: () => undefined });
    try {
      const started = Date.now();
      await expect(applyLocalProjection(fx.wt1, projection('A', 1), { gitLock: true, lockWaitMs: 300 })).rejects.toMatchObject({ code: 'projection_busy' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      expect(await readProjection(fx.wt1)).toBeNull();
    } finally {
      await release();
    }
    expect(await applyLocalProjection(fx.wt1, projection('A', 1), { gitLock: true, lockWaitMs: 300 })).toBe('written');
    expect(existsSync(lockDir)).toBe(false);
  });

  it('a lock left by a crashed holder (not refreshed for longer than the stale bound) is taken over', async () => {
    const lockDir = path.join((await worktreeDirs(fx.wt1)).privateDir, WRITER_LOCK_DIR);
    mkdirSync(lockDir);
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockDir, old, old);
    expect(await applyLocalProjection(fx.wt1, projection('A', 1), { gitLock: true, lockWaitMs: 1_000 })).toBe('written');
  });

  it('the host activity reports projection_busy as retryable', async () => {
    const lockDir = path.join((await worktreeDirs(fx.wt1)).privateDir, WRITER_LOCK_DIR);
    const release = await lockfile.lock(lockDir, { lockfilePath: lockDir, realpath: false, stale: 5_000, onCompromised: () => undefined });
    try {
      expect(await failureOf(host([fx.root], 300).applyLocalProjection(record()))).toEqual({ type: 'projection_busy', nonRetryable: false });
    } finally {
      await release();
    }
  });
});

describe('a worktree that is gone: worktree_missing, never retried', () => {
  it('preserveWip on a deleted worktree directory', async () => {
    rmSync(fx.wt1, { recursive: true, force: true });
    await expect(preserveWip(fx.wt1, 'own_A', 4)).rejects.toMatchObject({ code: 'worktree_missing' });
    expect(await failureOf(host().preserveWip(fx.wt1, 'own_A', 4))).toEqual({ type: 'worktree_missing', nonRetryable: true });
  });

  it('preserveWip on a worktree whose private git dir is gone', async () => {
    writeFileSync(path.join(fx.wt1, 'dirty.txt'), 'x\n');
    rmSync(path.join(fx.repo, '.git/worktrees/wt1'), { recursive: true, force: true });
    expect(await failureOf(host().preserveWip(fx.wt1, 'own_A', 4))).toEqual({ type: 'worktree_missing', nonRetryable: true });
  });

  it('projecting a live record into it fails the same way; clearing an ended one is done', async () => {
    rmSync(path.join(fx.repo, '.git/worktrees/wt1'), { recursive: true, force: true });
    expect(await failureOf(host().applyLocalProjection(record()))).toEqual({ type: 'worktree_missing', nonRetryable: true });
    expect((await host().applyLocalProjection(record({ state: 'closed' }))).result).toBe('cleared');
    rmSync(fx.wt2, { recursive: true, force: true });
    expect((await host().applyLocalProjection(record({ worktreePath: fx.wt2, state: 'closed' }))).result).toBe('cleared');
  });
});

describe('preserveWip heartbeats while git runs and kills git when cancelled', () => {
  let shim: string;
  let oldPath: string | undefined;
  const pidFile = () => path.join(shim, 'add.pid');
  beforeEach(() => {
    shim = mkdtempSync(path.join(os.tmpdir(), 'od-git-slow-'));
    const realGit = run('sh', ['-c', 'command -v git'], os.tmpdir()).stdout.trim();
    // Hashing the files (`git hash-object`, after the service's `-c` overrides) stands for a huge tree: it never finishes on its own.
    writeFileSync(
      path.join(shim, 'git'),
      `#!/bin/sh\nfor a in "$@"; do if [ "$a" = hash-object ]; then echo $$ > "${pidFile()}"; exec sleep 60; fi; done\nexec "${realGit}" "$@"\n`,
    );
    chmodSync(path.join(shim, 'git'), 0o755);
    oldPath = process.env.PATH;
    process.env.PATH = `${shim}:${oldPath ?? ''}`;
    writeFileSync(path.join(fx.wt1, 'dirty.txt'), 'x\n');
  });
  afterEach(() => {
    process.env.PATH = oldPath;
    rmSync(shim, { recursive: true, force: true });
  });

  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const waitFor = async (cond: () => boolean, ms = 10_000): Promise<void> => {
    const end = Date.now() + ms;
    while (!cond()) {
      if (Date.now() > end) throw new Error('condition not met in time');
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  // The shim creates the file before it writes its pid: an empty file reads as pid 0, which
  // kill(0, 0) finds "alive" (our own process group).
  const shimPid = (): number => (existsSync(pidFile()) ? Number(readFileSync(pidFile(), 'utf8').trim()) || 0 : 0);
  const leftovers = () => readdirSync(path.join(fx.repo, '.git/worktrees/wt1')).filter((f) => f.startsWith('overdeck-wip-'));

  it('with an AbortSignal: heartbeats on a timer while files are hashed, abort kills git and cleans up', async () => {
    const ctl = new AbortController();
    let beats = 0;
    const running = preserveWip(fx.wt1, 'own_A', 4, { signal: ctl.signal, heartbeat: () => beats++, heartbeatEveryMs: 50 });
    const settled = running.catch((err: unknown) => err);
    await waitFor(() => shimPid() > 0);
    const atAdd = beats;
    await new Promise((r) => setTimeout(r, 400));
    expect(beats).toBeGreaterThanOrEqual(atAdd + 4); // the timer, not only the steps
    const pid = shimPid();
    expect(alive(pid)).toBe(true);
    const reason = new Error('cancelled by test');
    ctl.abort(reason);
    expect(await settled).toBe(reason);
    await waitFor(() => !alive(pid), 5_000);
    expect(leftovers()).toEqual([]);
    const after = beats;
    await new Promise((r) => setTimeout(r, 150));
    expect(beats).toBe(after); // timer stopped
  });

  it('as a host activity: heartbeats reach the activity context, cancellation kills git and reports CancelledFailure', async () => {
    const env = new MockActivityEnvironment();
    let beats = 0;
    env.on('heartbeat', () => beats++);
    const settled = env.run(host().preserveWip, fx.wt1, 'own_A', 4).catch((err: unknown) => err);
    await waitFor(() => shimPid() > 0);
    expect(beats).toBeGreaterThan(0);
    const pid = shimPid();
    env.cancel();
    expect(await settled).toBeInstanceOf(CancelledFailure);
    await waitFor(() => !alive(pid), 5_000);
    expect(leftovers()).toEqual([]);
  });
});
