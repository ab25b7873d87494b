import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tenureSecretHash } from '../../src/keys/tenure';
import { guardCheck, installHooks } from '../../src/git/guard';
import { writeProjection } from '../../src/git/projection';
import { g, preparedRepo, projection, run, type Fixture, type Run } from './git-fixture';

let fx: Fixture;
let marker: string;

/** Owner A (epoch 3) holds wt1; a hook that was there before us writes a marker and fails on demand. (Prepared once, copied for each test.) */
beforeEach(async () => {
  fx = await preparedRepo('owned by A, hooks installed', async (base) => {
    const previous = path.join(base.repo, '.git/hooks/pre-commit');
    writeFileSync(previous, `#!/bin/sh\necho "pre-commit $*" >> "${path.join(base.root, 'marker')}"\n[ ! -e "${base.root}/fail-pre-commit" ]\n`);
    chmodSync(previous, 0o755);
    await writeProjection(base.wt1, projection('A', 3, { epoch: 3 }));
    await installHooks(base.repo);
  });
  marker = path.join(fx.root, 'marker');
});
afterEach(() => fx.cleanup());

const as = (session: string | null, epoch?: number): Record<string, string> => ({
  ...(session === null ? {} : { OVERDECK_EXECUTION_SESSION_ID: session }),
  ...(epoch === undefined ? {} : { OVERDECK_EPOCH: String(epoch) }),
});

function commit(wt: string, env: Record<string, string>, ...extra: string[]): Run {
  writeFileSync(path.join(wt, 'a.txt'), `${Math.random()}\n`);
  return run('git', ['commit', '-q', '-am', 'change', ...extra], wt, env);
}

const head = (wt: string): string => g(wt, 'rev-parse', 'HEAD');
const ownerLine = 'owned by session session_A (worker worker-A, conversation conv-A, runtime runtime-A, ownership own_A, epoch 3)';
const nextStep = 'Next: ask worker worker-A to hand the worktree off';

describe('hooks', () => {
  it('refuse a commit by another session and name the owner', () => {
    const before = head(fx.wt1);
    const r = commit(fx.wt1, as('session_B'));
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`od-worktree: refused: this worktree is ${ownerLine}; you are session session_B. ${nextStep}`);
    expect(head(fx.wt1)).toBe(before);
  });

  it('refuse it with --no-verify too (reference-transaction)', () => {
    const before = head(fx.wt1);
    const r = commit(fx.wt1, as('session_B'), '--no-verify');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('you are session session_B');
    expect(head(fx.wt1)).toBe(before);
  });

  it('let the owner commit, and the previous pre-commit hook still runs', () => {
    const before = head(fx.wt1);
    expect(commit(fx.wt1, as('session_A', 3)).status).toBe(0);
    expect(head(fx.wt1)).not.toBe(before);
    expect(readFileSync(marker, 'utf8')).toContain('pre-commit');
  });

  it('let a failing previous pre-commit hook still fail the commit', () => {
    writeFileSync(path.join(fx.root, 'fail-pre-commit'), '');
    const before = head(fx.wt1);
    expect(commit(fx.wt1, as('session_A')).status).not.toBe(0);
    expect(head(fx.wt1)).toBe(before);
  });

  it('start no git process of their own on the common paths (they run inside every commit)', () => {
    const trace = path.join(fx.root, 'trace');
    const traced = (wt: string, env: Record<string, string>): string[] => {
      writeFileSync(trace, '');
      commit(wt, { ...env, GIT_TRACE: trace });
      return readFileSync(trace, 'utf8').split('\n');
    };
    for (const [wt, env] of [
      [fx.wt1, as('session_A', 3)],
      [fx.wt1, as('session_B')],
      [fx.wt2, as(null)],
      [fx.wt2, as('session_B')],
    ] as const) {
      const lines = traced(wt, env);
      expect(lines.filter((l) => l.includes('run_command:') && l.includes('overdeck-hooks/')).length).toBeGreaterThan(0);
      expect(lines.filter((l) => /built-in: git (config|rev-parse|symbolic-ref)/.test(l))).toEqual([]);
    }
  });

  // Limitation of git itself (2.39): reset --hard and checkout rewrite the index and the files
  // before the ref update that reference-transaction can refuse. The hook keeps the branch (history)
  // where the owner left it; it cannot keep a non-owner from clobbering uncommitted files.
  it('refuse git reset --hard by another session: the branch does not move', () => {
    const before = head(fx.wt1);
    const r = run('git', ['reset', '-q', '--hard', 'HEAD~1'], fx.wt1, as('session_B'));
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(ownerLine);
    expect(head(fx.wt1)).toBe(before);
    expect(g(fx.wt1, 'rev-parse', 'refs/heads/wt1')).toBe(before);
  });

  it('refuse git checkout -B of the checked-out branch by another session', () => {
    const before = head(fx.wt1);
    const r = run('git', ['checkout', '-q', '-B', 'wt1', 'HEAD~1'], fx.wt1, as('session_B'));
    expect(r.status).not.toBe(0);
    expect(g(fx.wt1, 'rev-parse', 'refs/heads/wt1')).toBe(before);
  });

  it('let another session create other refs (tags, wip refs) from the owned worktree', () => {
    expect(run('git', ['tag', 'by-b'], fx.wt1, as('session_B')).status).toBe(0);
    expect(run('git', ['update-ref', 'refs/overdeck/wip/own_A/1', 'HEAD'], fx.wt1, as('session_B')).status).toBe(0);
  });

  it('refuse the owner with a stale epoch', () => {
    const r = commit(fx.wt1, as('session_A', 2));
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('you are session session_A with stale epoch 2');
  });

  it('refuse a caller without a session id (an empty one too): strict in every owned worktree, whatever an old flag says', async () => {
    g(fx.repo, 'config', 'overdeck.guard.strict', 'false');
    const before = head(fx.wt1);
    for (const env of [as(null), { OVERDECK_EXECUTION_SESSION_ID: '' }]) {
      const r = commit(fx.wt1, env);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain('you are unidentified');
      expect(r.stderr).toContain('od-worktree override --reason');
    }
    expect(head(fx.wt1)).toBe(before);
    // Re-installing drops the meaningless flag.
    await installHooks(fx.repo);
    expect(run('git', ['config', '--get', 'overdeck.guard.strict'], fx.repo).status).toBe(1);
  });

  it('with a tenure hash in the projection, only its secret proves the tenure; the session id is no proof', async () => {
    const secret = 'odt1_the-owner-secret-the-owner-secret-0000000';
    await writeProjection(fx.wt1, projection('A', 4, { epoch: 3, tenureHash: `${'0'.repeat(64)} ${tenureSecretHash(secret)}` }));
    const before = head(fx.wt1);
    const copied = commit(fx.wt1, as('session_A', 3));
    expect(copied.status).not.toBe(0);
    expect(copied.stderr).toContain("you are session session_A without this tenure's secret");
    expect(commit(fx.wt1, { ...as('session_A', 3), OVERDECK_TENURE_SECRET: 'odt1_wrong' }).stderr).toContain('not this tenure');
    // A sha256sum of the caller's own first on PATH answers nothing: the tools are looked up at fixed paths.
    const shim = path.join(fx.root, 'shim');
    mkdirSync(shim);
    writeFileSync(
      path.join(shim, 'sha256sum'),
      `#!/bin/sh
echo ${tenureSecretHash(secret)} -
`,
    );
    chmodSync(path.join(shim, 'sha256sum'), 0o755);
    expect(commit(fx.wt1, { OVERDECK_TENURE_SECRET: 'odt1_wrong', PATH: `${shim}:${process.env.PATH ?? ''}` }).status).not.toBe(0);
    expect(head(fx.wt1)).toBe(before);
    // Either word matches (a rotated service key keeps the old one valid): here the second.
    expect(commit(fx.wt1, { OVERDECK_TENURE_SECRET: secret }).status).toBe(0);
    expect(head(fx.wt1)).not.toBe(before);
  });

  it('refuse a move of the owned branch from another worktree that has it checked out too', () => {
    const before = head(fx.wt1);
    g(fx.repo, 'worktree', 'add', '-q', '--force', path.join(fx.root, 'twin'), 'wt1');
    const r = run('git', ['commit', '-q', '--allow-empty', '-m', 'from the twin'], path.join(fx.root, 'twin'), as('session_B'));
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(ownerLine);
    expect(head(fx.wt1)).toBe(before);
  });

  it('let anyone commit in an unowned worktree or after release', async () => {
    expect(commit(fx.wt2, as('session_B')).status).toBe(0);
    await writeProjection(fx.wt1, projection('A', 4, { state: 'released' }));
    expect(commit(fx.wt1, as('session_B')).status).toBe(0);
  });

  it('refuse pre-rebase and pre-push for another session', () => {
    expect(commit(fx.wt1, as('session_A')).status).toBe(0);
    writeFileSync(path.join(fx.repo, 'b.txt'), 'on main\n');
    g(fx.repo, 'add', 'b.txt');
    g(fx.repo, 'commit', '-q', '-m', 'main moves on');
    const before = head(fx.wt1);
    const rebase = run('git', ['rebase', 'main'], fx.wt1, as('session_B'));
    expect(rebase.status).not.toBe(0);
    expect(rebase.stderr).toContain(ownerLine);
    expect(head(fx.wt1)).toBe(before);
    expect(existsSync(path.join(fx.wt1, 'b.txt'))).toBe(false);
    const remote = path.join(fx.root, 'remote.git');
    g(fx.root, 'init', '-q', '--bare', remote);
    const push = run('git', ['push', '-q', remote, 'HEAD:refs/heads/x'], fx.wt1, as('session_B'));
    expect(push.status).not.toBe(0);
    expect(push.stderr).toContain(ownerLine);
    expect(run('git', ['push', '-q', remote, 'HEAD:refs/heads/x', 'wt1'], fx.wt1, as('session_A')).status).toBe(0);
    // From another worktree: a force-push onto the owned branch's name, or its deletion, is the owner's to make.
    for (const spec of ['+main:wt1', ':wt1', 'main:refs/heads/wt1']) {
      const other = run('git', ['push', '-q', '--force', remote, spec], fx.wt2, as('session_B'));
      expect([spec, other.status, other.stderr]).toEqual([spec, 1, expect.stringContaining(ownerLine)]);
    }
    expect(g(remote, 'rev-parse', 'refs/heads/wt1')).toBe(head(fx.wt1));
    expect(run('git', ['push', '-q', remote, 'main:refs/heads/not-owned'], fx.wt2, as('session_B')).status).toBe(0);
  });

  it('chain reference-transaction with the same arguments and stdin to a previous hook', () => {
    const prev = path.join(fx.repo, '.git/hooks/reference-transaction');
    writeFileSync(prev, `#!/bin/sh\nwhile read -r o n r; do echo "$1 $r" >> "${marker}"; done\n`);
    chmodSync(prev, 0o755);
    return installHooks(fx.repo).then(() => {
      expect(run('git', ['tag', 'chained'], fx.wt1, as('session_A')).status).toBe(0);
      const lines = readFileSync(marker, 'utf8');
      expect(lines).toContain('prepared refs/tags/chained');
      expect(lines).toContain('committed refs/tags/chained');
    });
  });

  it('chain to a previous core.hooksPath directory, and re-installing does not chain to itself', async () => {
    const custom = path.join(fx.root, 'custom-hooks');
    mkdirSync(custom);
    writeFileSync(path.join(custom, 'commit-msg'), `#!/bin/sh\necho "commit-msg $(cat "$1")" >> "${marker}"\n`);
    chmodSync(path.join(custom, 'commit-msg'), 0o755);
    g(fx.repo, 'config', 'core.hooksPath', custom);
    const first = await installHooks(fx.repo);
    const again = await installHooks(fx.wt1);
    expect(again.previousHooksPath).toBe(custom);
    expect(first.hooks).toContain('commit-msg');
    expect(g(fx.repo, 'config', 'core.hooksPath')).toBe(path.join(fx.repo, '.git/overdeck-hooks'));
    expect(commit(fx.wt1, as('session_A')).status).toBe(0);
    expect(readFileSync(marker, 'utf8')).toContain('commit-msg change');
    // The hook that was in .git/hooks before core.hooksPath pointed elsewhere is left where it was.
    expect(existsSync(path.join(fx.repo, '.git/hooks/pre-commit'))).toBe(true);
  });

  it('install a pre-commit check only when asked or when a previous pre-commit exists', async () => {
    expect(existsSync(path.join(fx.repo, '.git/overdeck-hooks/pre-commit'))).toBe(true);
    g(fx.repo, 'config', 'core.hooksPath', path.join(fx.root, 'empty-hooks'));
    await installHooks(fx.repo);
    expect(existsSync(path.join(fx.repo, '.git/overdeck-hooks/pre-commit'))).toBe(false);
    await installHooks(fx.repo, { earlyCommitCheck: true });
    expect(existsSync(path.join(fx.repo, '.git/overdeck-hooks/pre-commit'))).toBe(true);
    expect(g(fx.repo, 'status', '--porcelain')).toBe('');
  });
});

describe('guardCheck (the same rule the hooks hand refusals to, for od-worktree guard)', () => {
  it('gives each outcome its reason', async () => {
    expect(await guardCheck(fx.wt1, as('session_A'))).toEqual({ allowed: true });
    expect(await guardCheck(fx.wt1, as('session_A', 3))).toEqual({ allowed: true });
    expect(await guardCheck(fx.wt1, as(null))).toMatchObject({ allowed: false, reason: 'unidentified' });
    const notOwner = await guardCheck(fx.wt1, as('session_B'));
    expect(notOwner).toMatchObject({ allowed: false, reason: 'not_owner' });
    expect(notOwner.message).toContain(ownerLine);
    expect(await guardCheck(fx.wt1, as('session_A', 9))).toMatchObject({ allowed: false, reason: 'stale_epoch' });
    expect(await guardCheck(fx.wt2, as('session_B'))).toEqual({ allowed: true });
    await writeProjection(fx.wt1, projection('A', 4, { epoch: 3, tenureHash: tenureSecretHash('odt1_s') }));
    expect(await guardCheck(fx.wt1, as('session_A'))).toMatchObject({ allowed: false, reason: 'tenure_unproven' });
    expect(await guardCheck(fx.wt1, { OVERDECK_TENURE_SECRET: 'odt1_s' })).toEqual({ allowed: true });
  });

  it('refuses every identified session on a conflicting provisional projection, until reconcile --repair', async () => {
    await writeProjection(fx.wt1, projection('A', 4, { state: 'provisional-conflict', provisional: true }));
    expect(await guardCheck(fx.wt1, as('session_A'))).toMatchObject({ allowed: false, reason: 'provisional_conflict' });
    const other = await guardCheck(fx.wt1, as('session_B'));
    expect(other).toMatchObject({ allowed: false, reason: 'provisional_conflict' });
    expect(other.message).toContain('the provisional claim of session session_A (runtime runtime-A, ownership own_A) conflicts with the durable record');
    expect(other.message).toContain('you are session_B');
    const r = commit(fx.wt1, as('session_A'));
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('run od-worktree reconcile --repair; you are session_A');
    expect(await guardCheck(fx.wt1, as(null))).toMatchObject({ allowed: false, reason: 'provisional_conflict' });
  });

  it('falls back to git config for values the shell reader does not parse itself', async () => {
    await writeProjection(fx.wt1, projection('A', 4, { executionSessionId: 'session "quoted" \\A', epoch: 3 }));
    expect(await guardCheck(fx.wt1, as('session "quoted" \\A'))).toEqual({ allowed: true });
    expect((await guardCheck(fx.wt1, as('session_A'))).message).toContain('owned by session session "quoted" \\A');
  });

  it('ignores overdeck.owner.* outside the worktree scope', async () => {
    g(fx.repo, 'config', 'overdeck.owner.execution-session-id', 'session_G');
    g(fx.repo, 'config', 'overdeck.owner.state', 'active');
    expect(await guardCheck(fx.wt2, as('session_B'))).toEqual({ allowed: true });
  });
});
