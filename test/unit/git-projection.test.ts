import { execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cleanGitEnv } from '../../src/git/exec';
import { GitSideError } from '../../src/git/errors';
import { readLock, writeLock } from '../../src/git/lock';
import type * as ProjectionModule from '../../src/git/projection';
import { PROJECTION_KEYS, readProjection, writeProjection } from '../../src/git/projection';
import { g, makeRepo, projection, run, type Fixture } from './git-fixture';

let fx: Fixture;
beforeEach(() => {
  fx = makeRepo();
});
afterEach(() => fx.cleanup());

const worktreeKeys = (cwd: string): string => run('git', ['config', '--worktree', '--includes', '--get-regexp', 'overdeck'], cwd).stdout;

describe('writeProjection / readProjection', () => {
  it('round-trips, and nulls are absent keys rather than empty values', async () => {
    const p = projection('A', 3, { conversationId: null, conversationUrl: null, lane: null, provisional: true, idempotencyKey: 'idem-1' });
    expect(await writeProjection(fx.wt1, p)).toBe('written');
    expect(await readProjection(fx.wt1)).toEqual(p);
    const keys = worktreeKeys(fx.wt1);
    expect(keys).not.toContain('overdeck.owner.conversation-id');
    expect(keys).not.toContain('overdeck.lane ');
    expect(keys).toContain('overdeck.owner.provisional true');
    expect(keys).toContain('overdeck.owner.idempotency-key idem-1');
  });

  it('carries the tenure hash as space-separated hex digests, and refuses anything else under that key', async () => {
    const words = `${'ab'.repeat(32)} ${'cd'.repeat(32)}`;
    const p = projection('A', 1, { tenureHash: words });
    await writeProjection(fx.wt1, p);
    expect(await readProjection(fx.wt1)).toEqual(p);
    expect(g(fx.wt1, 'config', 'overdeck.owner.tenure-hash')).toBe(words);
    // A secret (or anything but digests) is never written there.
    for (const bad of ['odt1_eV0offMLk8-o7-KufzLGa5tljUo3psbYisCt-xFq0dA', 'AB'.repeat(32), `${'ab'.repeat(32)}  ${'cd'.repeat(32)}`, '']) {
      await expect(writeProjection(fx.wt1, projection('A', 2, { tenureHash: bad }))).rejects.toThrow();
    }
    expect((await readProjection(fx.wt1))?.seq).toBe(1);
  });

  it('keeps values with quotes, backslashes, # and ; intact', async () => {
    const p = projection('A', 1, { planRef: 'docs/a "b" \\c #d ;e.md', lane: '  padded  ' });
    await writeProjection(fx.wt1, p);
    expect(await readProjection(fx.wt1)).toEqual(p);
  });

  it('is visible to git config in the owned worktree only, and never in git status', async () => {
    await writeProjection(fx.wt1, projection('A', 1, { tenureHash: `${'ab'.repeat(32)} ${'cd'.repeat(32)}` }));
    const keys = worktreeKeys(fx.wt1);
    for (const key of Object.values(PROJECTION_KEYS).filter((k) => !/provisional|idempotency/.test(k))) expect(keys).toContain(`${key} `);
    // The default (all scopes) lookup sees it too: that is what a plain `git config overdeck...` answers.
    expect(g(fx.wt1, 'config', 'overdeck.owner.execution-session-id')).toBe('session_A');

    for (const other of [fx.wt2, fx.repo]) {
      expect(worktreeKeys(other)).toBe('');
      expect(run('git', ['config', '--get-regexp', 'overdeck'], other).stdout).toBe('');
    }
    // Shared config holds only the extension switch.
    expect(run('git', ['config', '--file', path.join(fx.repo, '.git/config'), '--get-regexp', 'overdeck|include'], fx.repo).stdout).toBe('');
    expect(g(fx.repo, 'config', '--file', path.join(fx.repo, '.git/config'), 'extensions.worktreeConfig')).toBe('true');
    for (const wt of [fx.wt1, fx.wt2, fx.repo]) expect(g(wt, 'status', '--porcelain', '--untracked-files=all', '--ignored')).toBe('');
  });

  it('puts exactly one include in config.worktree however often it writes', async () => {
    for (let i = 1; i <= 3; i++) await writeProjection(fx.wt1, projection('A', i));
    expect(g(fx.wt1, 'config', '--worktree', '--get-all', 'include.path')).toBe('overdeck.config');
    expect(existsSync(path.join(fx.repo, '.git/worktrees/wt1/overdeck.config'))).toBe(true);
  });

  it("creates a fresh worktree's config.worktree as git would, and keeps an existing one's own keys", async () => {
    await writeProjection(fx.wt1, projection('A', 1));
    const made = path.join(fx.repo, '.git/worktrees/wt1/config.worktree');
    const byGit = path.join(fx.repo, 'by-git.worktree');
    run('git', ['config', '--file', byGit, '--add', 'include.path', 'overdeck.config'], fx.repo);
    expect(readFileSync(made, 'utf8')).toBe(readFileSync(byGit, 'utf8'));
    expect(existsSync(`${made}.lock`)).toBe(false);

    // A worktree whose config.worktree exists already (someone's own setting): kept, one include added.
    const own = path.join(fx.repo, '.git/worktrees/wt2/config.worktree');
    run('git', ['config', '--file', own, 'core.sparseCheckout', 'false'], fx.repo);
    await writeProjection(fx.wt2, projection('B', 1));
    expect(g(fx.wt2, 'config', '--worktree', 'core.sparseCheckout')).toBe('false');
    expect(g(fx.wt2, 'config', '--worktree', '--get-all', 'include.path')).toBe('overdeck.config');
    expect(await readProjection(fx.wt2)).toEqual(projection('B', 1));
  });

  it('leaves config.worktree to git while another writer holds its lock', async () => {
    const lock = path.join(fx.repo, '.git/worktrees/wt1/config.worktree.lock');
    writeFileSync(lock, '');
    try {
      await expect(writeProjection(fx.wt1, projection('A', 1))).rejects.toMatchObject({ code: 'git_failed' });
      expect(existsSync(path.join(fx.repo, '.git/worktrees/wt1/config.worktree'))).toBe(false);
    } finally {
      rmSync(lock, { force: true });
    }
    expect(await writeProjection(fx.wt1, projection('A', 1))).toBe('written');
  });

  it('works for the main worktree (git dir .git) without leaking into linked ones', async () => {
    const p = projection('M', 1);
    await writeProjection(fx.repo, p);
    expect(await readProjection(fx.repo)).toEqual(p);
    expect(existsSync(path.join(fx.repo, '.git/overdeck.config'))).toBe(true);
    expect(await readProjection(fx.wt1)).toBeNull();
    expect(g(fx.repo, 'status', '--porcelain')).toBe('');
  });

  it('works for a worktree nested inside the main worktree (.worktrees/<name>)', async () => {
    const nested = path.join(fx.repo, '.worktrees', 'feature-x');
    g(fx.repo, 'worktree', 'add', '-q', '-b', 'wt/feature-x', nested);
    writeFileSync(path.join(fx.repo, '.git/info/exclude'), '.worktrees/\n');
    const p = projection('N', 1);
    await writeProjection(nested, p);
    expect(await readProjection(nested)).toEqual(p);
    expect(await readProjection(fx.repo)).toBeNull();
    expect(g(nested, 'status', '--porcelain')).toBe('');
    expect(g(fx.repo, 'status', '--porcelain')).toBe('');
    // A subdirectory is not a second name for the worktree.
    await expect(writeProjection(path.join(fx.repo, '.worktrees'), p)).rejects.toMatchObject({ code: 'not_a_worktree' });
  });

  it('skips a lower-seq write, so a late retry cannot roll back a newer owner; equal seq rewrites', async () => {
    await writeProjection(fx.wt1, projection('B', 7));
    // Seqs order the writes of one ownership (a reclaim or handoff changes the session, not the ownership).
    expect(await writeProjection(fx.wt1, projection('A', 6, { ownershipId: 'own_B' }))).toBe('skipped');
    expect((await readProjection(fx.wt1))?.executionSessionId).toBe('session_B');
    const heartbeat = projection('B', 7, { lastSeenAt: '2026-08-20T00:09:00.000Z' });
    expect(await writeProjection(fx.wt1, heartbeat)).toBe('written');
    expect(await readProjection(fx.wt1)).toEqual(heartbeat);
  });

  it('clears keys and the lock file with null; a guarded clear does not erase a newer owner', async () => {
    await writeProjection(fx.wt1, projection('A', 4));
    await writeLock(fx.wt1, {
      schema_version: 2,
      ownership_id: 'own_A',
      execution_session_id: 'session_A',
      conversation_id: null,
      claimed_at: 1,
      last_seen_at: 2,
      epoch: 4,
    });
    expect(await writeProjection(fx.wt1, null, { clearIfSeqAtMost: 3 })).toBe('skipped');
    expect(await readProjection(fx.wt1)).not.toBeNull();
    expect(await writeProjection(fx.wt1, null)).toBe('written');
    expect(await readProjection(fx.wt1)).toBeNull();
    expect(await readLock(fx.wt1)).toBeNull();
    expect(worktreeKeys(fx.wt1)).toBe('');
    // After a clear any seq may claim again.
    expect(await writeProjection(fx.wt1, projection('C', 1))).toBe('written');
  });

  it('serialises concurrent writes per worktree: the highest seq wins whatever the arrival order', async () => {
    const seqs = [5, 2, 9, 1, 7, 3, 8, 4, 6];
    const results = await Promise.all(seqs.map((s) => writeProjection(fx.wt1, projection(`S${s}`, s, { ownershipId: 'own_S' }))));
    expect(results).toEqual(['written', 'skipped', 'written', 'skipped', 'skipped', 'skipped', 'skipped', 'skipped', 'skipped']);
    expect((await readProjection(fx.wt1))?.seq).toBe(9);
  });

  it('refuses invalid input before touching disk', async () => {
    await expect(writeProjection(fx.wt1, projection('A', 1, { lane: 'two\nlines' }))).rejects.toThrow();
    await expect(writeProjection(fx.wt1, projection('A', -1))).rejects.toThrow();
    expect(existsSync(path.join(fx.repo, '.git/worktrees/wt1/overdeck.config'))).toBe(false);
  });

  it('reports keys that are present but invalid as projection_corrupt', async () => {
    await writeProjection(fx.wt1, projection('A', 1));
    g(fx.wt1, 'config', '--file', path.join(fx.repo, '.git/worktrees/wt1/overdeck.config'), 'overdeck.owner.epoch', 'soon');
    await expect(readProjection(fx.wt1)).rejects.toMatchObject({ code: 'projection_corrupt' });
    g(fx.wt1, 'config', '--file', path.join(fx.repo, '.git/worktrees/wt1/overdeck.config'), '--unset', 'overdeck.owner.epoch');
    await expect(readProjection(fx.wt1)).rejects.toBeInstanceOf(GitSideError);
  });

  it('handles a worktree removed and re-added at the same path (new private git dir)', async () => {
    await writeProjection(fx.wt1, projection('A', 5));
    g(fx.repo, 'worktree', 'remove', '--force', fx.wt1);
    // Keep the old private dir name taken so the new worktree gets a different one.
    g(fx.repo, 'worktree', 'add', '-q', '-b', 'wt1-blocker', path.join(fx.root, 'x', 'wt1'));
    g(fx.repo, 'worktree', 'add', '-q', '-b', 'wt1-again', fx.wt1);
    expect(await readProjection(fx.wt1)).toBeNull();
    expect(await writeProjection(fx.wt1, projection('B', 1))).toBe('written');
    expect((await readProjection(fx.wt1))?.executionSessionId).toBe('session_B');
  });
});

/** A second copy of the module, as in a new process: nothing cached about git or the repository. */
function freshProjectionModule(): typeof ProjectionModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('../../src/git/projection') as typeof ProjectionModule;
}

describe('git process budget', () => {
  let shim: string;
  beforeAll(() => {
    shim = mkdtempSync(path.join(os.tmpdir(), 'od-git-shim-'));
    const realGit = run('sh', ['-c', 'command -v git'], os.tmpdir()).stdout.trim();
    writeFileSync(path.join(shim, 'git'), `#!/bin/sh\necho "$*" >> "${shim}/calls"\nexec "${realGit}" "$@"\n`);
    chmodSync(path.join(shim, 'git'), 0o755);
  });
  afterAll(() => rmSync(shim, { recursive: true, force: true }));

  it('uses one git process per write once a worktree is known, one for a new worktree', async () => {
    const oldPath = process.env.PATH;
    process.env.PATH = `${shim}:${oldPath ?? ''}`;
    // Each call as its subcommand and arguments, without the overrides every service git run starts with (safe-env.ts).
    const calls = (): string[] =>
      existsSync(path.join(shim, 'calls'))
        ? readFileSync(path.join(shim, 'calls'), 'utf8')
            .trim()
            .split('\n')
            .map((l) => l.replace(/^--no-pager (-c \S*=\S* )*/, ''))
        : [];
    try {
      await jest.isolateModulesAsync(async () => {
        const fresh = freshProjectionModule();
        // First write of the process: + git version (once per process) + repository setup (once per repo).
        await fresh.writeProjection(fx.wt1, projection('A', 1));
        const cold = calls().length;
        expect(cold).toBeLessThanOrEqual(6);
        // New worktree of a known repository: rev-parse only (its config.worktree is created without git).
        await fresh.writeProjection(fx.wt2, projection('B', 1));
        const second = calls().length;
        expect(calls().slice(cold)).toEqual([expect.stringMatching(/^rev-parse /)]);
        await fresh.writeProjection(fx.wt1, projection('A', 2));
        await fresh.writeProjection(fx.wt1, projection('A', 3));
        await fresh.writeProjection(fx.wt2, projection('B', 2));
        expect(calls().slice(second)).toEqual([expect.stringMatching(/^config -z --file \S+config.worktree --includes/), expect.anything(), expect.anything()]);
      });
    } finally {
      process.env.PATH = oldPath;
    }
  });

  it('refuses to run on git older than 2.20 and writes no config at all', async () => {
    const old = mkdtempSync(path.join(os.tmpdir(), 'od-git-old-'));
    const realGit = run('sh', ['-c', 'command -v git'], os.tmpdir()).stdout.trim();
    // The subcommand comes after the service's `-c` overrides (safe-env.ts).
    writeFileSync(
      path.join(old, 'git'),
      `#!/bin/sh\nfor a in "$@"; do case $a in version | --version) echo "git version 2.19.2"; exit 0 ;; esac; done\nexec "${realGit}" "$@"\n`,
    );
    chmodSync(path.join(old, 'git'), 0o755);
    const before = readFileSync(path.join(fx.repo, '.git/config'), 'utf8');
    const oldPath = process.env.PATH;
    process.env.PATH = `${old}:${oldPath ?? ''}`;
    try {
      await jest.isolateModulesAsync(async () => {
        const fresh = freshProjectionModule();
        await expect(fresh.writeProjection(fx.wt1, projection('A', 1))).rejects.toMatchObject({ code: 'git_too_old' });
      });
    } finally {
      process.env.PATH = oldPath;
      rmSync(old, { recursive: true, force: true });
    }
    expect(readFileSync(path.join(fx.repo, '.git/config'), 'utf8')).toBe(before);
    expect(existsSync(path.join(fx.repo, '.git/worktrees/wt1/config.worktree'))).toBe(false);
  });
});

describe('atomicity under a concurrent reader', () => {
  /** Every key of owner i carries i; the key set depends on i so a half-written set is detectable too. */
  const owner = (i: number) =>
    projection(`N${i}`, i, {
      ownershipId: 'own_N',
      epoch: 1000 + i,
      conversationId: i % 2 === 0 ? `conv-N${i}` : null,
      conversationUrl: i % 2 === 0 ? `https://chatgpt.com/c/conv-N${i}` : null,
    });

  const READ = ['config', '--worktree', '--includes', '--get-regexp', '^overdeck\\.owner\\.'];
  const readOnce = (cwd: string): Promise<string> =>
    new Promise((resolve, reject) => {
      execFile('git', READ, { cwd, env: cleanGitEnv() }, (err, stdout) => {
        if (err !== null && err.code !== 1) reject(err);
        else resolve(stdout);
      });
    });
  /** What a read answered, then its exit status: never a line of git's own (those are `overdeck.owner.<key> <value>`). */
  const END = '--od-read-end';

  /**
   * Reads in a loop until `stop` exists, from a shell of its own: a read forked from this (large)
   * test process costs several times more, and reads as many more as the writer leaves room for.
   * Each read's output ends with a line `END <git's exit status>`, for checking once the writer is done.
   */
  function startReader(cwd: string, stop: string, out: string): Promise<number | null> {
    const loop = `while [ ! -e "$1" ]; do git ${READ.map((a) => `'${a}'`).join(' ')}; echo "${END} $?"; done > "$2"`;
    const child = spawn('sh', ['-c', loop, 'reader', stop, out], { cwd, env: cleanGitEnv(), stdio: 'ignore' });
    return new Promise((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', (code) => resolve(code));
    });
  }

  function checkConsistent(out: string): number | null {
    if (out === '') return null;
    const entries = new Map(
      out
        .trim()
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf(' ')), l.slice(l.indexOf(' ') + 1)] as const),
    );
    const sid = entries.get('overdeck.owner.execution-session-id');
    const m = /^session_N(\d+)$/.exec(sid ?? '');
    if (m === null) throw new Error(`read without a session id:\n${out}`);
    const i = Number(m[1]);
    const want = owner(i);
    const expected: Record<string, string> = {
      'overdeck.owner.ownership-id': want.ownershipId,
      'overdeck.owner.execution-session-id': want.executionSessionId,
      'overdeck.owner.runtime': want.runtime,
      'overdeck.owner.worker-id': String(want.workerId),
      'overdeck.owner.run-id': String(want.runId),
      'overdeck.owner.epoch': String(want.epoch),
      'overdeck.owner.seq': String(want.seq),
      'overdeck.owner.state': want.state,
      'overdeck.owner.claimed-at': want.claimedAt,
      'overdeck.owner.last-seen-at': want.lastSeenAt,
      ...(want.conversationId === null
        ? {}
        : { 'overdeck.owner.conversation-id': want.conversationId, 'overdeck.owner.conversation-url': String(want.conversationUrl) }),
    };
    expect(Object.fromEntries(entries)).toEqual(expected);
    return i;
  }

  const CHANGES = 150;
  it(`never shows keys of two owners mixed while ${CHANGES} owner changes are written`, async () => {
    await writeProjection(fx.wt1, owner(0));
    const stop = path.join(fx.root, 'stop-reading');
    const reads = path.join(fx.root, 'reads');
    const reader = startReader(fx.wt1, stop, reads);
    try {
      for (let i = 1; i <= CHANGES; i++) expect(await writeProjection(fx.wt1, owner(i))).toBe('written');
    } finally {
      writeFileSync(stop, '');
      expect(await reader).toBe(0);
    }
    const seen: number[] = [];
    let read: string[] = [];
    for (const line of readFileSync(reads, 'utf8').split('\n').slice(0, -1)) {
      if (!line.startsWith(`${END} `)) {
        read.push(line);
        continue;
      }
      // 1: no keys at all (checkConsistent takes '' for that); anything else is a failed read.
      expect(['0', '1']).toContain(line.slice(END.length + 1));
      const i = checkConsistent(read.length === 0 ? '' : `${read.join('\n')}\n`);
      if (i !== null) seen.push(i);
      read = [];
    }
    expect(read).toEqual([]);
    // The reader really ran alongside the writer.
    expect(seen.length).toBeGreaterThan(20);
    expect(new Set(seen).size).toBeGreaterThan(10);
    expect(checkConsistent(await readOnce(fx.wt1))).toBe(CHANGES);
  }, 120000);
});
