import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cleanGitEnv } from '../../src/git/exec';
import { guardCheck, installHooks } from '../../src/git/guard';
import { parseJournalLine } from '../../src/git/journal';
import { writeProjection } from '../../src/git/projection';
import { g, gMany, preparedRepo, projection, run, type Fixture, type Run } from './git-fixture';

/**
 * The agent-side git gate (bin/git-gate/git, docs/agent-gate.md) on real repositories and
 * worktrees: what git runs no hook for (reset --hard, checkout, clean, stash...) is refused before
 * git touches a file, for a session that is not the owner at the current epoch; everything else
 * is git itself. Also the PreToolUse hook that asks the gate, and `od-worktree snapshot`.
 */

const ROOT = path.resolve(__dirname, '../..');
const GATE_DIR = path.join(ROOT, 'bin/git-gate');
const GATE = path.join(GATE_DIR, 'git');
const PRETOOLUSE = path.join(ROOT, 'hooks/pretooluse-git-gate.sh');
const BIN = path.join(ROOT, 'bin/od-worktree.js');
const REAL_GIT = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
const gatedPath = `${GATE_DIR}:${process.env.PATH ?? ''}`;

let fx: Fixture;

/** A handoff from A (epoch 1) to B (epoch 2) as the host agent projects it; B then edits. (Prepared once, copied for each test.) */
beforeEach(async () => {
  fx = await preparedRepo('handoff', async (base) => {
    g(base.repo, 'branch', 'other', 'HEAD~1');
    await writeProjection(base.wt1, projection('A', 1, { epoch: 1 }));
    await writeProjection(base.wt1, projection('B', 2, { ownershipId: 'own_A', epoch: 2 }));
    writeFileSync(path.join(base.wt1, 'a.txt'), 'B edits a tracked file\n');
    writeFileSync(path.join(base.wt1, 'staged.txt'), 'B stages a new file\n');
    g(base.wt1, 'add', 'staged.txt');
    writeFileSync(path.join(base.wt1, 'new.txt'), 'B has an untracked file\n');
    mkdirSync(path.join(base.wt1, 'dir'));
    writeFileSync(path.join(base.wt1, 'dir/deep.txt'), 'and an untracked directory\n');
  });
});
afterEach(() => fx.cleanup());

const as = (session: string | null, epoch?: number): Record<string, string> => ({
  ...(session === null ? {} : { OVERDECK_EXECUTION_SESSION_ID: session }),
  ...(epoch === undefined ? {} : { OVERDECK_EPOCH: String(epoch) }),
});

/** git as an agent under `od-worktree exec` runs it: the gate first on PATH. */
function gated(args: readonly string[], cwd: string, env: Record<string, string> = {}, input?: string): Run {
  return run('git', args, cwd, { PATH: gatedPath, ...env }, input);
}

/** Every byte B could lose: files, index, HEAD, branch, stash, and what git status says. */
function state(wt: string): Record<string, string> {
  const file = (f: string) => (existsSync(path.join(wt, f)) ? readFileSync(path.join(wt, f), 'utf8') : '<missing>');
  const [index, status, head, branch, tip, stash, other] = gMany(
    wt,
    ['ls-files', '--stage'],
    ['status', '--porcelain=v1', '--untracked-files=all'],
    ['rev-parse', 'HEAD'],
    ['symbolic-ref', 'HEAD'],
    ['rev-parse', 'refs/heads/wt1'],
    ['stash', 'list'],
    ['rev-parse', 'refs/heads/other'],
  );
  return {
    a: file('a.txt'),
    staged: file('staged.txt'),
    untracked: file('new.txt'),
    deep: file('dir/deep.txt'),
    index,
    status,
    head,
    branch,
    tip,
    stash,
    other,
  };
}

const journal = (gitDir: string): string[] => {
  const f = path.join(gitDir, 'overdeck.journal');
  return existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter(Boolean) : [];
};
const wt1GitDir = (): string => path.join(fx.repo, '.git/worktrees/wt1');

/** Each of these destroys B's uncommitted work or moves B's history; git has no hook before it. */
const DESTRUCTIVE: readonly (readonly string[])[] = [
  ['reset', '--hard', 'HEAD~1'],
  ['reset', '--hard'],
  ['reset', '--merge', 'HEAD~1'],
  ['reset', '--keep', 'HEAD~1'],
  ['reset', '-q', 'HEAD~1'],
  ['checkout', 'other'],
  ['checkout', '-f', 'other'],
  ['checkout', '--', '.'],
  ['checkout', '.'],
  ['checkout', '-B', 'wt1', 'HEAD~1'],
  ['switch', 'other'],
  ['switch', '--discard-changes', 'other'],
  ['restore', '.'],
  ['restore', '--staged', '--worktree', '.'],
  ['clean', '-fd'],
  ['clean', '-xdf'],
  ['clean', '-f', '-d'],
  ['stash'],
  ['stash', '-u'],
  ['stash', 'push', '--include-untracked'],
  ['stash', 'pop'],
  ['stash', 'clear'],
  ['rebase', 'other'],
  ['merge', 'other'],
  ['cherry-pick', 'other'],
  ['revert', '--no-edit', 'HEAD'],
  ['commit', '--amend', '--no-edit'],
  ['commit', '-qam', 'by A'],
  ['rm', '-rf', '.'],
  ['read-tree', '-u', '--reset', 'HEAD~1'],
  ['checkout-index', '-a', '-f'],
  ['update-ref', 'refs/heads/wt1', 'HEAD~1'],
  ['update-ref', 'HEAD', 'HEAD~1'],
  ['symbolic-ref', 'HEAD', 'refs/heads/other'],
];

describe('the gate refuses a session that is not the owner at the current epoch, before git runs', () => {
  it.each(DESTRUCTIVE.map((args) => [args.join(' '), args] as const))('git %s: refused with the hooks message and status, B untouched', async (_name, args) => {
    const before = state(fx.wt1);
    const lines = journal(wt1GitDir()).length;
    const expected = (await guardCheck(fx.wt1, as('session_A'))).message;
    const r = gated(args, fx.wt1, as('session_A'));
    expect({ status: r.status, stderr: r.stderr, stdout: r.stdout }).toEqual({ status: 1, stderr: `${expected}\n`, stdout: '' });
    expect(state(fx.wt1)).toEqual(before);
    // The refusal is in the worktree's journal, for the host agent to ship (docs/git-projection.md).
    const added = journal(wt1GitDir()).slice(lines);
    expect(added).toEqual([
      [
        'od1',
        'kind=wrapper_refused',
        'session=session_A',
        'env_epoch=',
        'ownership=own_A',
        'epoch=2',
        'owner=session_B',
        'state=active',
        'code=not_owner',
        `command=${args[0]}`,
        'ref=refs/heads/wt1',
        `old=${before.tip}`,
      ].join('\t'),
    ]);
  });

  it('refuses the owner session at a stale epoch, and says so as the hooks do', async () => {
    const before = state(fx.wt1);
    for (const args of [['reset', '--hard', 'HEAD~1'], ['checkout', 'other'], ['stash'], ['clean', '-fd'], ['restore', '.']]) {
      const r = gated(args, fx.wt1, as('session_B', 1));
      expect(r.status).toBe(1);
      expect(r.stderr).toBe(`${(await guardCheck(fx.wt1, as('session_B', 1))).message}\n`);
      expect(r.stderr).toContain('you are session session_B with stale epoch 1');
    }
    expect(state(fx.wt1)).toEqual(before);
    // The host agent's parser (src/git/journal.ts) reads these lines as written.
    expect(journal(wt1GitDir()).map((l) => parseJournalLine(l, 0))).toEqual(
      ['reset', 'checkout', 'stash', 'clean', 'restore'].map((command) =>
        expect.objectContaining({
          kind: 'wrapper_refused',
          code: 'stale_epoch',
          command,
          session: 'session_B',
          env_epoch: '1',
          epoch: '2',
          owner: 'session_B',
          ownership: 'own_A',
          ref: 'refs/heads/wt1',
          old: before.tip,
        }),
      ),
    );
  });

  it('journals the head it saw also when the branch is packed, and a detached HEAD as itself', () => {
    const tip = g(fx.wt1, 'rev-parse', 'HEAD');
    g(fx.repo, 'pack-refs', '--all');
    expect(existsSync(path.join(fx.repo, '.git/refs/heads/wt1'))).toBe(false);
    expect(gated(['reset', '--hard'], fx.wt1, as('session_A')).status).toBe(1);
    expect(parseJournalLine(journal(wt1GitDir()).at(-1)!, 0)).toMatchObject({ ref: 'refs/heads/wt1', old: tip });
    g(fx.wt1, 'checkout', '-q', '--detach');
    expect(gated(['clean', '-fd'], fx.wt1, as('session_A')).status).toBe(1);
    expect(parseJournalLine(journal(wt1GitDir()).at(-1)!, 0)).toMatchObject({ ref: tip, old: tip, command: 'clean' });
  });

  it('the same hooks: a commit refused by the gate and by reference-transaction names the owner alike', async () => {
    await installHooks(fx.repo);
    const viaHook = run('git', ['commit', '-qm', 'by A'], fx.wt1, as('session_A'));
    const viaGate = gated(['commit', '-qm', 'by A'], fx.wt1, as('session_A'));
    expect(viaHook.status).not.toBe(0);
    expect(viaHook.stderr.split('\n')[0]).toBe(viaGate.stderr.trim());
    expect(viaGate.status).toBe(1);
  });

  it('parses global options: -C, -c aliases, --git-dir, GIT_DIR; -C picks the worktree that is judged', () => {
    const before = state(fx.wt1);
    const refused = (args: string[], cwd: string, env: Record<string, string> = {}) => {
      const r = gated(args, cwd, { ...as('session_A'), ...env });
      expect([args.join(' '), r.status, r.stderr]).toEqual([args.join(' '), 1, expect.stringContaining('owned by session session_B')]);
    };
    refused(['-C', fx.wt1, 'reset', '--hard', 'HEAD~1'], fx.root);
    refused(['-C', 'wt1', 'clean', '-fd'], fx.root);
    refused(['-C', 'wt1/dir', '-C', '..', 'stash'], fx.root);
    refused(['-C', '../wt1', 'checkout', '--', '.'], fx.repo);
    refused(['-c', 'core.hooksPath=/dev/null', '--no-pager', 'reset', '--hard'], fx.wt1);
    refused(['-c', 'alias.nuke=reset --hard', 'nuke'], fx.wt1);
    refused(['--git-dir', wt1GitDir(), '--work-tree', fx.wt1, 'reset', '--hard'], fx.root);
    refused([`--git-dir=${wt1GitDir()}`, `--work-tree=${fx.wt1}`, 'checkout', '--', '.'], fx.root);
    refused(['reset', '--hard'], fx.root, { GIT_DIR: wt1GitDir(), GIT_WORK_TREE: fx.wt1 });
    g(fx.repo, 'config', 'alias.wipe', 'clean -fdx');
    g(fx.repo, 'config', 'alias.wipe2', 'wipe');
    g(fx.repo, 'config', 'alias.shwipe', '!git reset --hard');
    refused(['wipe'], fx.wt1);
    refused(['wipe2'], fx.wt1);
    refused(['shwipe'], fx.wt1);
    // From another worktree of the repository: what names wt1 or its branch is judged as wt1.
    refused(['worktree', 'remove', '--force', '--force', fx.wt1], fx.repo);
    refused(['worktree', 'unlock', fx.wt1], fx.repo);
    refused(['branch', '-f', 'wt1', 'HEAD~1'], fx.repo);
    refused(['branch', '-D', 'wt1'], fx.repo);
    refused(['branch', '-M', 'wt1', 'renamed'], fx.repo);
    refused(['update-ref', 'refs/heads/wt1', 'HEAD~1'], fx.repo);
    refused(['update-ref', 'worktrees/wt1/HEAD', 'HEAD~1'], fx.repo);
    expect(state(fx.wt1)).toEqual(before);
    expect(existsSync(fx.wt1)).toBe(true);
  });

  it('judges the worktree a command names, not the one it runs in', () => {
    const before = state(fx.wt1);
    // From the owned wt1, A may act on the unowned wt2 and its branch.
    expect(gated(['branch', '-f', 'other', 'wt2'], fx.wt1, as('session_A')).status).toBe(0);
    expect(gated(['update-ref', 'refs/tags/t1', 'HEAD'], fx.wt1, as('session_A')).status).toBe(0);
    expect(gated(['-C', fx.wt2, 'reset', '-q', '--hard'], fx.wt1, as('session_A')).status).toBe(0);
    const removed = gated(['worktree', 'remove', '--force', fx.wt2], fx.wt1, as('session_A'));
    expect(removed).toMatchObject({ status: 0, stderr: '' });
    expect(existsSync(fx.wt2)).toBe(false);
    // ... but not on wt1 from anywhere, nor on its branch by its short or full name.
    for (const args of [
      ['worktree', 'move', fx.wt1, `${fx.wt1}-moved`],
      ['worktree', 'add', '-f', '-B', 'wt1', `${fx.root}/wt3`],
      ['update-ref', '-d', 'refs/heads/wt1'],
      ['branch', '-m', 'wt1', 'elsewhere'],
    ]) {
      const r = gated(args, fx.repo, as('session_A'));
      expect([args.join(' '), r.status, r.stderr]).toEqual([args.join(' '), 1, expect.stringContaining('owned by session session_B')]);
    }
    const { other: _o, ...rest } = state(fx.wt1);
    const { other: _b, ...restBefore } = before;
    expect(rest).toEqual(restBefore);
  });

  it('judges on its own, without the hooks, what a review found them missing (docs/agent-gate.md#the-forms-a-review-found)', () => {
    const check = (args: readonly string[], cwd: string, env: Record<string, string>): number =>
      run('sh', [GATE, '--od-git-gate-check', ...args], cwd, env).status;
    // Refused for A from the unowned main worktree: names as git resolves them, resets of the owned
    // branch git allows elsewhere, pushes into this repository by every spelling, programs git runs.
    for (const [env, args] of [
      [{}, ['worktree', 'lock', 'wt1']],
      [{}, ['worktree', 'remove', '--force', '--force', 'wt1/']],
      [{}, ['checkout', '--ignore-other-worktrees', '-B', 'wt1', 'HEAD~1']],
      [{}, ['checkout', '--ignore-other-worktrees', '-qfBwt1', 'HEAD~1']],
      [{}, ['switch', '--ignore-other-worktrees', '--force-create=wt1', 'HEAD~1']],
      [{}, ['push', '--force', '--no-verify', '.', 'other:heads/wt1']],
      [{}, ['push', '--force', '--no-verify', '.', 'refs/heads/*:refs/heads/*']],
      [{}, ['push', '--no-verify', '--receive-pack=git-receive-pack', '.', 'other:other']],
      [{}, ['-c', 'core.hooksPath=', 'status']],
      [{}, ['-c', 'Core.HooksPath=/dev/null', 'status']],
      [{}, ['-c', 'includeIf.onbranch:main.path=/tmp/x', 'status']],
      [{}, ['--exec-path=/tmp', 'status']],
      [{}, ['-c', 'core.pager=/tmp/x', 'log']],
      [{}, ['-c', 'filter.x.smudge=/tmp/x', 'status']],
      [{}, ['config', '--global', 'core.fsmonitor', '/tmp/x']],
      [{}, ['config', '--file', `${fx.repo}/.git/config`, 'alias.x', '!true']],
      [{}, ['replace', '-d', 'HEAD']],
      [{ GIT_PAGER: '/tmp/x' }, ['log']],
      [{ GIT_EDITOR: 'vim -c "!git reset --hard"' }, ['status']],
      [{ GIT_EXEC_PATH: '/tmp' }, ['status']],
      [{ GIT_SSH: '/tmp/x' }, ['fetch', 'origin']],
      [{ GIT_PROXY_COMMAND: '/tmp/x' }, ['fetch', 'origin']],
      [{ GIT_CONFIG_PARAMETERS: "'core.editor=/tmp/it'\\''s'" }, ['status']],
      [
        { GIT_CONFIG_COUNT: '2', GIT_CONFIG_KEY_0: 'user.name', GIT_CONFIG_VALUE_0: 'x', GIT_CONFIG_KEY_1: 'diff.x.textconv', GIT_CONFIG_VALUE_1: '/tmp/x' },
        ['log'],
      ],
    ] as const) {
      expect([args.join(' '), env, check(args, fx.repo, { ...as('session_A'), ...env })]).toEqual([args.join(' '), env, 1]);
    }
    // Left to everyone: harmless settings and values, a free worktree's own configuration, listing.
    for (const [env, args, cwd] of [
      [{}, ['-c', 'user.name=x', '-c', 'core.quotePath=off', 'status'], fx.repo],
      [{}, ['-c', 'core.pager=cat', '-c', 'pager.log=false', '-c', 'core.editor=true', 'log'], fx.repo],
      [{}, ['-c', 'alias.st=status', 'st'], fx.repo],
      [{ GIT_PAGER: 'less -R', GIT_EDITOR: 'true', GIT_SEQUENCE_EDITOR: ':' }, ['status'], fx.repo],
      [{ GIT_CONFIG_PARAMETERS: "'color.ui'='always' 'user.name'='it'\\''s'" }, ['log'], fx.repo],
      [{}, ['config', '--worktree', 'user.name', 'x'], fx.wt2],
      [{}, ['replace', '-l'], fx.repo],
      [{}, ['worktree', 'lock', 'wt2'], fx.repo],
    ] as const) {
      expect([args.join(' '), env, check(args, cwd, { ...as('session_A'), ...env })]).toEqual([args.join(' '), env, 0]);
    }
    // The owner, the only one in this repository, may use any of them.
    for (const [env, args] of [
      [{}, ['-c', 'core.hooksPath=/dev/null', 'commit', '--allow-empty', '-m', 'x']],
      [{ GIT_EXTERNAL_DIFF: '/tmp/x', GIT_PAGER: '/tmp/x' }, ['log']],
      [{}, ['config', 'core.fsmonitor', 'false']],
    ] as const) {
      expect([args.join(' '), env, check(args, fx.wt1, { ...as('session_B', 2), ...env })]).toEqual([args.join(' '), env, 0]);
    }
  });

  it('lets through what cannot destroy anything, in the owned worktree, for the same session', () => {
    const before = state(fx.wt1);
    for (const args of [
      ['status', '--short'],
      ['log', '-1', '--format=%H'],
      ['diff'],
      ['stash', 'list'],
      ['clean', '-n', '-d'],
      ['branch', 'side-branch'],
      ['branch', '-f', 'other', 'HEAD'],
      ['update-ref', 'refs/overdeck/wip/own_A/9', 'HEAD'],
      ['tag', 'a-tag'],
      ['reset', '-h'],
      ['checkout'],
      ['push', '--dry-run', fx.repo, 'HEAD:refs/heads/nowhere'],
    ]) {
      const r = gated(args, fx.wt1, as('session_A'));
      expect([args.join(' '), r.stderr.includes('refused')]).toEqual([args.join(' '), false]);
    }
    const { other: _moved, ...rest } = state(fx.wt1);
    const { other: _was, ...restBefore } = before;
    expect(rest).toEqual(restBefore);
    expect(journal(wt1GitDir())).toEqual([]);
  });
});

describe('the owner and everyone outside owned worktrees get git itself', () => {
  it("the owner's same commands run", () => {
    const tip = g(fx.wt1, 'rev-parse', 'HEAD');
    expect(gated(['stash', '-u'], fx.wt1, as('session_B', 2)).status).toBe(0);
    expect(g(fx.wt1, 'stash', 'list')).toContain('WIP on wt1');
    expect(existsSync(path.join(fx.wt1, 'new.txt'))).toBe(false);
    expect(gated(['stash', 'pop'], fx.wt1, as('session_B', 2)).status).toBe(0);
    expect(readFileSync(path.join(fx.wt1, 'new.txt'), 'utf8')).toBe('B has an untracked file\n');
    expect(gated(['restore', 'a.txt'], fx.wt1, as('session_B', 2)).status).toBe(0);
    expect(readFileSync(path.join(fx.wt1, 'a.txt'), 'utf8')).toBe('two\n');
    expect(gated(['clean', '-fd'], fx.wt1, as('session_B', 2)).status).toBe(0);
    expect(existsSync(path.join(fx.wt1, 'dir'))).toBe(false);
    expect(gated(['reset', '-q', '--hard', 'HEAD~1'], fx.wt1, as('session_B')).status).toBe(0);
    expect(g(fx.wt1, 'rev-parse', 'HEAD')).toBe(g(fx.wt1, 'rev-parse', `${tip}~1`));
    expect(gated(['switch', '-q', 'other'], fx.wt1, as('session_B', 2)).status).toBe(0);
    expect(gated(['checkout', '-q', 'wt1'], fx.wt1, as('session_B', 2)).status).toBe(0);
    expect(journal(wt1GitDir())).toEqual([]);
  });

  it('a person without a session id is refused like any other caller (an override is the way in)', () => {
    const before = state(fx.wt1);
    for (const args of [
      ['stash', '-u'],
      ['reset', '--hard'],
      ['clean', '-fd'],
    ]) {
      const r = gated(args, fx.wt1, as(null));
      expect([args, r.status, r.stderr]).toEqual([args, 1, expect.stringContaining('you are unidentified')]);
      expect(r.stderr).toContain('od-worktree override --reason');
    }
    expect(state(fx.wt1)).toEqual(before);
  });

  it('unowned worktrees, released ones and directories outside any repository: unchanged behaviour', async () => {
    writeFileSync(path.join(fx.wt2, 'a.txt'), 'dirty\n');
    expect(gated(['reset', '-q', '--hard'], fx.wt2, as('session_A')).status).toBe(0);
    expect(readFileSync(path.join(fx.wt2, 'a.txt'), 'utf8')).toBe('two\n');
    await writeProjection(fx.wt1, projection('B', 3, { ownershipId: 'own_A', epoch: 2, state: 'released' }));
    expect(gated(['stash', '-u'], fx.wt1, as('session_A')).status).toBe(0);
    const outside = path.join(fx.root, 'outside');
    mkdirSync(outside);
    for (const args of [['status'], ['reset', '--hard'], ['--version'], ['rev-parse', '--git-dir']]) {
      const bare = run(REAL_GIT, args, outside, {}, '');
      const viaGate = gated(args, outside, as('session_A'), '');
      expect(viaGate).toEqual(bare);
    }
  });
});

describe('passthrough: the gate becomes git', () => {
  it('stdin, stdout and exit codes are git’s own', () => {
    const input = 'some bytes\n\0with a NUL and no end';
    for (const args of [
      ['hash-object', '--stdin'],
      ['hash-object', '-w', '--stdin'],
    ]) {
      const bare = run(REAL_GIT, args, fx.wt1, {}, input);
      expect(gated(args, fx.wt1, as('session_A'), input)).toEqual(bare);
      expect(bare.stdout).toMatch(/^[0-9a-f]{40}\n$/);
    }
    for (const args of [
      ['rev-parse', '--verify', 'no-such-ref'],
      ['frobnicate'],
      ['log', '--bogus-option'],
      ['cat-file', '-p', 'HEAD'],
      ['diff', '--exit-code'],
      ['show', 'HEAD:a.txt'],
    ]) {
      const bare = run(REAL_GIT, args, fx.wt1);
      expect([args, gated(args, fx.wt1, as('session_A'))]).toEqual([args, bare]);
    }
    expect(run(REAL_GIT, ['diff', '--exit-code'], fx.wt1).status).toBe(1);
    expect(run(REAL_GIT, ['rev-parse', '--verify', 'no-such-ref'], fx.wt1).status).toBe(128);
    // Arguments with spaces, quotes, globs and empty strings arrive as they were given.
    const odd = ['log', '-1', '--format=%s [*] "q" \'s\'  two  spaces', '--grep=', 'HEAD'];
    expect(gated(odd, fx.wt1).stdout).toBe(run(REAL_GIT, odd, fx.wt1).stdout);
  });

  it('the process is git itself (exec), so a SIGTERM reaches git and git dies of it', async () => {
    const child = spawn('git', ['hash-object', '--stdin'], { cwd: fx.wt1, env: cleanGitEnv({ PATH: gatedPath }), stdio: ['pipe', 'pipe', 'pipe'] });
    const procExe = `/proc/${child.pid}/exe`;
    if (existsSync('/proc/self/exe')) {
      // Until exec happens the pid runs sh; afterwards it is git, waiting on the open stdin.
      let exe = '';
      for (let i = 0; i < 5_000 && !exe.endsWith('/git'); i++) {
        await new Promise((r) => setTimeout(r, 2));
        try {
          exe = readlinkSync(procExe);
        } catch {
          exe = '';
        }
      }
      expect(exe).toBe(realpathSync(REAL_GIT));
    }
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    child.kill('SIGTERM');
    expect(await ended).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('runs under bash as sh too (the /bin/sh of macOS) with the same answers', () => {
    const before = state(fx.wt1);
    const viaBash = (args: string[], env: Record<string, string>, input?: string) =>
      run('bash', ['--posix', GATE, ...args], fx.wt1, { PATH: gatedPath, ...env }, input);
    for (const args of [
      ['reset', '--hard', 'HEAD~1'],
      ['-C', fx.wt1, 'clean', '-fd'],
      ['-c', 'alias.x=stash', 'x'],
      ['branch', '-D', 'wt1'],
    ]) {
      const r = viaBash(args, as('session_A'));
      expect([args.join(' '), r.status, r.stderr]).toEqual([args.join(' '), 1, expect.stringContaining('owned by session session_B')]);
    }
    expect(state(fx.wt1)).toEqual(before);
    expect(viaBash(['hash-object', '--stdin'], as('session_A'), 'x\n')).toEqual(run(REAL_GIT, ['hash-object', '--stdin'], fx.wt1, {}, 'x\n'));
    expect(viaBash(['stash', 'list'], as('session_A')).status).toBe(0);
  });

  it('finds the real git without recursion: the gate twice on PATH, a copy or a link of it elsewhere', () => {
    const copyDir = path.join(fx.root, 'copy');
    const linkDir = path.join(fx.root, 'link');
    mkdirSync(copyDir);
    mkdirSync(linkDir);
    copyFileSync(GATE, path.join(copyDir, 'git'));
    chmodSync(path.join(copyDir, 'git'), 0o755);
    writeFileSync(path.join(copyDir, '.od-git-gate'), '');
    symlinkSync(GATE, path.join(linkDir, 'git'));
    const bare = run(REAL_GIT, ['rev-parse', 'HEAD'], fx.wt1);
    for (const p of [
      `${GATE_DIR}:${GATE_DIR}:${process.env.PATH}`,
      `${copyDir}:${GATE_DIR}:${process.env.PATH}`,
      `${GATE_DIR}:${linkDir}:${GATE_DIR}:${process.env.PATH}`,
      `${linkDir}:${GATE_DIR}:${process.env.PATH}`,
    ]) {
      expect(run('git', ['rev-parse', 'HEAD'], fx.wt1, { PATH: p })).toEqual(bare);
    }
    // Refusals still work through a link (the guard is found beside the file it names).
    expect(run('git', ['reset', '--hard'], fx.wt1, { PATH: `${linkDir}:${process.env.PATH}`, ...as('session_A') }).status).toBe(1);
  });

  it('refuses to loop when the git after it calls the PATH git again (a shim), instead of hanging', () => {
    const shimDir = path.join(fx.root, 'shim');
    mkdirSync(shimDir);
    writeFileSync(path.join(shimDir, 'git'), '#!/bin/sh\nexec git "$@"\n');
    chmodSync(path.join(shimDir, 'git'), 0o755);
    const r = run('git', ['status'], fx.wt1, { PATH: `${GATE_DIR}:${shimDir}:${process.env.PATH}` });
    expect(r.status).toBe(127);
    expect(r.stderr).toContain('refusing to loop');
  });
});

describe('hooks/pretooluse-git-gate.sh (PreToolUse: exit 2 and the reason on stderr block the call)', () => {
  const hook = (command: string, cwd: string, env: Record<string, string> = {}, extra: Record<string, unknown> = {}, awk?: string): Run => {
    const payload = JSON.stringify({
      session_id: 'x',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command, description: 'git reset --hard' },
      cwd,
      ...extra,
    });
    const pathEnv: Record<string, string> = awk === undefined ? {} : { PATH: `${awk}:${process.env.PATH}` };
    return run('sh', [PRETOOLUSE], fx.root, { ...env, ...pathEnv }, payload);
  };

  it('vetoes what the gate would refuse, wherever the command puts it', () => {
    const before = state(fx.wt1);
    const vetoed = [
      'git reset --hard HEAD~1',
      'git status && git checkout other',
      `cd ${fx.repo} && git status; cd ../wt1 && git stash`,
      `git -C ${fx.wt1} restore . 2>&1 | tail -n 3`,
      'sh -c "git clean -fd"',
      "bash -lc 'cd dir && git checkout -- .'",
      'out=$(git switch other)',
      'echo `git stash pop`',
      'FOO=1 /usr/bin/git reset --keep HEAD~1',
      'env GIT_PAGER=cat git -c color.ui=never reset --merge',
      '(cd /tmp && git status) && git rebase other',
      'git commit -m "it\'s \\"done\\"" --amend',
    ];
    for (const command of vetoed) {
      const r = hook(command, fx.wt1, as('session_A'));
      expect([command, r.status, r.stderr]).toEqual([command, 2, expect.stringContaining('od-worktree: refused: this worktree is owned by session session_B')]);
    }
    expect(state(fx.wt1)).toEqual(before);
  });

  it('allows everything else: harmless git, the owner, other tools, git only quoted', () => {
    const allowed: [string, Record<string, string>][] = [
      ['git status && git log -1 && git diff --stat', as('session_A')],
      ['echo "git reset --hard" && printf %s \'git clean -fd\'', as('session_A')],
      ['grep -r "git stash" .', as('session_A')],
      ['git reset --hard HEAD~1', as('session_B', 2)],
      [`cd ${fx.wt2} && git reset --hard`, as('session_A')],
      ['(cd /tmp && git stash)', as('session_A')],
      ['OVERDECK_EXECUTION_SESSION_ID=session_B git stash', as('session_A')],
    ];
    for (const [command, env] of allowed) {
      const r = hook(command, fx.wt1, env);
      expect([command, r.status, r.stderr]).toEqual([command, 0, '']);
    }
    const read = run('sh', [PRETOOLUSE], fx.root, as('session_A'), JSON.stringify({ tool_name: 'Read', tool_input: { file_path: 'a.txt' }, cwd: fx.wt1 }));
    expect(read).toEqual({ status: 0, stdout: '', stderr: '' });
  });

  it('reads a command given as an argv array too (["bash", "-lc", "..."])', () => {
    const call = (command: string[], env: Record<string, string>) =>
      run('sh', [PRETOOLUSE], fx.root, env, JSON.stringify({ tool_name: 'shell', tool_input: { command }, cwd: fx.wt1 }));
    expect(call(['bash', '-lc', 'cd dir && git restore ..'], as('session_A')).status).toBe(2);
    expect(call(['git', 'stash', 'pop'], as('session_A')).status).toBe(2);
    expect(call(['git', 'stash', 'list'], as('session_A'))).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(call(['git', 'stash', 'pop'], as('session_B', 2))).toEqual({ status: 0, stdout: '', stderr: '' });
  });

  it('works with another awk than the default (mawk, when installed)', () => {
    const mawk = ['/usr/bin/mawk', '/usr/bin/original-awk', '/usr/bin/nawk'].find((a) => existsSync(a));
    if (mawk === undefined) return;
    const dir = path.join(fx.root, 'awk');
    mkdirSync(dir);
    symlinkSync(mawk, path.join(dir, 'awk'));
    expect(hook('cd dir; git clean -fd', fx.wt1, as('session_A'), {}, dir).status).toBe(2);
    expect(hook('git status', fx.wt1, as('session_A'), {}, dir).status).toBe(0);
  });
});

describe('od-worktree snapshot, shell-init and exec', () => {
  const cli = (cwd: string, args: string[], env: Record<string, string> = {}) => {
    const base = cleanGitEnv({ OD_ALLOWED_ROOTS: fx.root });
    delete base.OVERDECK_EXECUTION_SESSION_ID;
    delete base.OVERDECK_EPOCH;
    const res = spawnSync(process.execPath, [BIN, ...args], { cwd, env: { ...base, ...env }, encoding: 'utf8' });
    return { status: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
  };

  it('snapshot: the owner gets one ref per tree under the ownership WIP namespace; others are refused; nothing in the worktree moves', () => {
    const before = state(fx.wt1);
    const first = cli(fx.wt1, ['snapshot', '--json'], as('session_B', 2));
    expect(first.status).toBe(0);
    const body = JSON.parse(first.stdout);
    expect(body).toMatchObject({ ok: true, status: 'saved', ownershipId: 'own_A', snapshot: { deduplicated: false } });
    expect(body.snapshot.ref).toBe(`refs/overdeck/wip/own_A/tree-${body.snapshot.tree}`);
    expect(g(fx.wt1, 'rev-parse', `${body.snapshot.ref}^{tree}`)).toBe(body.snapshot.tree);
    expect(g(fx.wt1, 'show', `${body.snapshot.ref}:new.txt`)).toBe('B has an untracked file');
    expect(g(fx.wt1, 'show', `${body.snapshot.ref}:dir/deep.txt`)).toBe('and an untracked directory');
    expect(state(fx.wt1)).toEqual(before);

    const again = JSON.parse(cli(fx.wt1, ['snapshot', '--json'], as('session_B', 2)).stdout);
    expect(again.snapshot).toEqual({ ...body.snapshot, deduplicated: true });
    expect(g(fx.repo, 'for-each-ref', '--format=%(refname)', 'refs/overdeck/wip/').split('\n')).toEqual([body.snapshot.ref]);

    writeFileSync(path.join(fx.wt1, 'new.txt'), 'changed\n');
    const changed = JSON.parse(cli(fx.wt1, ['snapshot', '--json'], as('session_B', 2)).stdout);
    expect(changed.snapshot.ref).not.toBe(body.snapshot.ref);
    expect(g(fx.repo, 'for-each-ref', '--format=%(refname)', 'refs/overdeck/wip/').split('\n').sort()).toEqual(
      [body.snapshot.ref, changed.snapshot.ref].sort(),
    );

    const refused = cli(fx.wt1, ['snapshot', '--json'], as('session_A'));
    expect(refused.status).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ ok: false, status: 'refused', reason: 'not_owner' });
    expect(cli(fx.wt1, ['snapshot'], as('session_B', 1)).status).toBe(1);
    expect(cli(fx.wt2, ['snapshot'], as('session_B', 2)).status).toBe(3);
    expect(g(fx.repo, 'for-each-ref', '--format=%(refname)', 'refs/overdeck/wip/').split('\n')).toHaveLength(2);
  });

  it('snapshot --ignored keeps the ignored files within its bound, none over it (the trailer says so); a bad size is a usage error', () => {
    const exclude = path.resolve(fx.repo, g(fx.repo, 'rev-parse', '--git-common-dir'), 'info', 'exclude');
    const excluded = existsSync(exclude) ? readFileSync(exclude, 'utf8') : '';
    writeFileSync(exclude, `${excluded}\nprovisioned/\n`);
    try {
      mkdirSync(path.join(fx.wt1, 'provisioned'), { recursive: true });
      writeFileSync(path.join(fx.wt1, 'provisioned', 'local.env'), 'LOCAL=1\n');
      const kept = JSON.parse(cli(fx.wt1, ['snapshot', '--ignored', '--json'], as('session_B', 2)).stdout);
      const trailer = (ref: string) => /^Overdeck-Ignored: (.*)$/m.exec(g(fx.repo, 'log', '-1', '--format=%B', ref))![1]!;
      const [tree, , bytes] = trailer(kept.snapshot.ref).split(' ');
      expect(g(fx.repo, 'show', `${tree}:provisioned/local.env`)).toBe('LOCAL=1');
      expect(Number(bytes)).toBe(8);
      writeFileSync(path.join(fx.wt1, 'provisioned', 'local.env'), 'LOCAL=2, longer than the bound\n');
      const over = JSON.parse(cli(fx.wt1, ['snapshot', '--ignored', '16', '--json'], as('session_B', 2)).stdout);
      expect(trailer(over.snapshot.ref)).toMatch(/^over-bound \d+ 16$/);
      const bad = cli(fx.wt1, ['snapshot', '--ignored', 'lots', '--json'], as('session_B', 2));
      expect(bad.status).toBe(2);
    } finally {
      writeFileSync(exclude, excluded);
      rmSync(path.join(fx.wt1, 'provisioned'), { recursive: true, force: true });
    }
  });

  it('snapshot works through the gate with the owner session (its own git calls pass)', () => {
    const r = cli(fx.wt1, ['snapshot', '--json'], { ...as('session_B', 2), PATH: gatedPath });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).status).toBe('saved');
  });

  it('shell-init prints an idempotent PATH setup for sh and fish; exec runs the command under the gate with its status', () => {
    const init = cli(fx.root, ['shell-init', '--shell', 'sh', '--session', 'session_A', '--epoch', '1']);
    expect(init.status).toBe(0);
    const shown = run(
      'sh',
      ['-c', `eval "$1"; eval "$1"; printf '%s\\n' "$PATH" "$OVERDECK_EXECUTION_SESSION_ID" "$OVERDECK_EPOCH"; command -v git`, 'sh', init.stdout],
      fx.root,
      { PATH: process.env.PATH ?? '' },
    );
    const [p, session, epoch, git] = shown.stdout.trim().split('\n');
    expect(p!.split(':').filter((d) => d === GATE_DIR)).toHaveLength(1);
    expect(p!.startsWith(`${GATE_DIR}:`)).toBe(true);
    expect([session, epoch, git]).toEqual(['session_A', '1', GATE]);
    expect(cli(fx.root, ['shell-init', '--shell', 'fish']).stdout).toContain(`set -gx PATH '${GATE_DIR}' $PATH`);
    expect(cli(fx.root, ['shell-init', '--shell', 'tcsh']).status).toBe(2);

    const before = state(fx.wt1);
    const inside = cli(fx.wt1, ['exec', '--session', 'session_A', '--', 'sh', '-c', 'command -v git; git reset --hard; echo "git said $?"; exit 7']);
    expect(inside.status).toBe(7);
    expect(inside.stdout).toBe(`${GATE}\ngit said 1\n`);
    expect(inside.stderr).toContain('owned by session session_B');
    expect(state(fx.wt1)).toEqual(before);
    expect(cli(fx.wt1, ['exec', '--', 'no-such-command-here']).status).toBe(127);
  });

  it('exec passes a SIGTERM sent to it on to the command, and dies of it as the command did', async () => {
    const ready = path.join(fx.root, 'ready');
    const base = cleanGitEnv({ OD_ALLOWED_ROOTS: fx.root });
    const child = spawn(process.execPath, [BIN, 'exec', '--', 'sh', '-c', `sleep 600 & echo $$ $! > "${ready}.tmp"; mv "${ready}.tmp" "${ready}"; wait`], {
      cwd: fx.wt1,
      env: base,
      stdio: 'ignore',
    });
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    while (!existsSync(ready)) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGTERM');
    expect(await ended).toEqual({ code: null, signal: 'SIGTERM' });
    const [sh, sleep] = readFileSync(ready, 'utf8').trim().split(' ').map(Number);
    process.kill(sleep!, 'SIGKILL'); // the command's own background job, orphaned when the command died
    // exec ended only after the command had died of the signal it passed on.
    expect(() => process.kill(sh!, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  });
});
