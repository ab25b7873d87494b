import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cleanGitEnv } from '../../src/git/exec';
import { tenureSecret, tenureSecretHash } from '../../src/keys/tenure';
import { g, GATE_DIR, refsOf, type OwnedFixture, ownedRepo } from './git-fixture';

/**
 * A second agent in the same repository tries every way around the gate it can think of, as a
 * refused agent does: unsetting or emptying its variables, copying what `git config` shows of
 * the owner, pointing git at the owned worktree from elsewhere, going through a symlink, a nested
 * repository, another worktree's stash or branch, a push. The gate is first on PATH (as
 * `od-worktree exec` puts it) and the hooks are installed. Whatever the attempt, not a byte of the
 * owner's files, index, HEAD, refs, stash, worktree registration or remote may change.
 */

const KEY = Buffer.alloc(32, 7);
const TENURE = { ownershipId: 'own_A', epoch: 2, executionSessionId: 'session_B' };
const SECRET = tenureSecret(KEY, TENURE);

let fx: OwnedFixture;
let origin: string;
let attacker: string;
let evilBin: string;

const privateDir = (): string => path.join(fx.repo, '.git/worktrees/wt1');

/** sh -c LINE in CWD with the gate first on PATH, as an agent's shell tool runs a command. */
function shell(line: string, cwd: string, env: Record<string, string> = {}): { status: number; stderr: string } {
  const res = spawnSync('sh', ['-c', line], { cwd, env: cleanGitEnv({ PATH: `${GATE_DIR}:${process.env.PATH ?? ''}`, ...env }), encoding: 'utf8' });
  return { status: res.status ?? -1, stderr: res.stderr };
}

function digestTree(dir: string, out: Record<string, string>, prefix = ''): void {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    const rel = `${prefix}${name}`;
    const st = lstatSync(p);
    if (st.isSymbolicLink()) out[rel] = `link:${readlinkSync(p)}`;
    else if (st.isDirectory()) digestTree(p, out, `${rel}/`);
    else out[rel] = `${st.mode.toString(8)}:${createHash('sha256').update(readFileSync(p)).digest('hex')}`;
  }
}

/** Every byte the owner could lose. */
function ownerState(): Record<string, unknown> {
  const files: Record<string, string> = {};
  digestTree(fx.wt1, files);
  const priv = (f: string) =>
    existsSync(path.join(privateDir(), f))
      ? createHash('sha256')
          .update(readFileSync(path.join(privateDir(), f)))
          .digest('hex')
      : '<missing>';
  const stashLog = path.join(fx.repo, '.git/logs/refs/stash');
  const [refs, remote] = refsOf(fx.root, fx.repo, origin);
  return {
    files,
    index: priv('index'),
    head: priv('HEAD'),
    projection: priv('overdeck.config'),
    worktreeConfig: priv('config.worktree'),
    sharedConfig: createHash('sha256')
      .update(readFileSync(path.join(fx.repo, '.git/config')))
      .digest('hex'),
    registered: existsSync(privateDir()) ? readFileSync(path.join(privateDir(), 'gitdir'), 'utf8') : '<gone>',
    refs,
    stash: existsSync(stashLog) ? readFileSync(stashLog, 'utf8') : '<none>',
    remote,
  };
}

beforeAll(async () => {
  fx = await ownedRepo(SECRET);
  origin = fx.origin;
  // More of the owner's work: an untracked directory and an ignored file.
  mkdirSync(path.join(fx.wt1, 'dir'));
  writeFileSync(path.join(fx.wt1, 'dir/deep.txt'), 'untracked directory\n');
  writeFileSync(path.join(fx.wt1, 'build.ignored'), 'ignored\n');
  // A repository of the owner's own inside the worktree (a vendored checkout), with its own work.
  const nested = path.join(fx.wt1, 'nested');
  g(fx.wt1, 'init', '-q', nested);
  writeFileSync(path.join(nested, 'lib.txt'), 'vendored\n');
  g(nested, 'add', '.');
  g(nested, 'commit', '-q', '-m', 'vendored');
  writeFileSync(path.join(nested, 'lib.txt'), 'the owner patches the vendored copy\n');
  writeFileSync(path.join(nested, 'scratch.txt'), 'untracked in the nested repository\n');
  // The attacker's own repository, a symlink into the owned worktree, and a sha256sum that lies.
  attacker = path.join(fx.root, 'attacker');
  g(fx.root, 'init', '-q', attacker);
  g(attacker, 'commit', '-q', '--allow-empty', '-m', 'mine');
  symlinkSync(path.join(fx.wt1, 'dir'), path.join(fx.root, 'shortcut'));
  evilBin = path.join(fx.root, 'evil-bin');
  mkdirSync(evilBin);
  for (const tool of ['sha256sum', 'shasum', 'openssl']) {
    writeFileSync(
      path.join(evilBin, tool),
      `#!/bin/sh\ngit config --worktree --get overdeck.owner.tenure-hash 2>/dev/null || echo ${tenureSecretHash(SECRET)}\n`,
    );
    chmodSync(path.join(evilBin, tool), 0o755);
  }
});
afterAll(() => fx.cleanup());

/** Placeholders of an attempt's command line. */
function expand(line: string): string {
  return line
    .replaceAll('{wt}', fx.wt1)
    .replaceAll('{gd}', privateDir())
    .replaceAll('{common}', path.join(fx.repo, '.git'))
    .replaceAll('{attacker}', attacker)
    .replaceAll('{root}', fx.root)
    .replaceAll('{evil}', evilBin)
    .replaceAll('{hash}', tenureSecretHash(SECRET));
}

/**
 * The ways around: how the caller dresses itself (environment, proof) and where it points git.
 * `cwd` is where the shell starts: the owned worktree, the main worktree, or somewhere else.
 */
interface Way {
  name: string;
  cwd: 'wt' | 'main' | 'root' | 'attacker' | 'shortcut';
  prefix: string;
  env?: Record<string, string>;
}

const IDENTITY_WAYS: readonly Way[] = [
  { name: 'no variable at all (a person, an agent that unset it)', cwd: 'wt', prefix: '' },
  { name: 'an empty session id', cwd: 'wt', prefix: 'OVERDECK_EXECUTION_SESSION_ID= ' },
  {
    name: 'env -u of the session id',
    cwd: 'wt',
    prefix: 'env -u OVERDECK_EXECUTION_SESSION_ID -u OVERDECK_TENURE_SECRET ',
    env: { OVERDECK_EXECUTION_SESSION_ID: 'session_A' },
  },
  {
    name: 'unset in the shell',
    cwd: 'wt',
    prefix: 'unset OVERDECK_EXECUTION_SESSION_ID OVERDECK_EPOCH; ',
    env: { OVERDECK_EXECUTION_SESSION_ID: 'session_A' },
  },
  {
    name: "the owner's session id and epoch copied from git config",
    cwd: 'wt',
    prefix:
      'export OVERDECK_EXECUTION_SESSION_ID=$(git config --get overdeck.owner.execution-session-id) OVERDECK_EPOCH=$(git config --get overdeck.owner.epoch); ',
  },
  { name: 'the tenure hash itself as the secret', cwd: 'wt', prefix: 'OVERDECK_EXECUTION_SESSION_ID=session_B OVERDECK_TENURE_SECRET={hash} ' },
  { name: 'a secret of its own', cwd: 'wt', prefix: 'OVERDECK_TENURE_SECRET=odt1_guessedguessedguessedguessedguessedgues ' },
  { name: 'a sha256sum first on PATH that answers the hash', cwd: 'wt', prefix: 'PATH={evil}:$PATH OVERDECK_TENURE_SECRET=anything ' },
];

const REDIRECT_WAYS: readonly Way[] = [
  { name: 'git -C <owned worktree> from elsewhere', cwd: 'root', prefix: 'git -C {wt} ' },
  { name: "--git-dir of its own repository, --work-tree the owner's", cwd: 'root', prefix: 'git --git-dir={attacker}/.git --work-tree={wt} ' },
  { name: 'GIT_DIR and GIT_WORK_TREE', cwd: 'root', prefix: 'GIT_DIR={attacker}/.git GIT_WORK_TREE={wt} git ' },
  { name: "the owner's git dir, from outside", cwd: 'root', prefix: 'GIT_DIR={gd} GIT_WORK_TREE={wt} git ' },
  { name: 'core.worktree of its own repository pointing at the owner', cwd: 'attacker', prefix: 'git config core.worktree {wt} && git ' },
  {
    name: 'core.worktree written into its config by hand, spelled otherwise, behind a worktreeConfig comment',
    cwd: 'attacker',
    prefix: "printf '[core]\\n\\tWorkTree = {wt} ; worktreeConfig = true\\n' >> .git/config && git ",
  },
  { name: 'a cd through a symlink into the worktree', cwd: 'shortcut', prefix: 'git ' },
  { name: 'a repository nested inside the worktree', cwd: 'wt', prefix: 'cd nested && git ' },
];

/** What each way tries (the rows of docs/agent-gate.md that destroy the owner's work). */
const HERE_COMMANDS = ['reset --hard', 'checkout -- .', 'clean -fdx', 'stash -u', 'stash pop', 'restore .', 'commit -qam intruder', 'add -A'];

interface Try {
  way: string;
  line: string;
  cwd: Way['cwd'];
  env?: Record<string, string>;
}

const tries: Try[] = [];
for (const way of IDENTITY_WAYS) {
  for (const cmd of HERE_COMMANDS) tries.push({ way: way.name, line: `${way.prefix}git ${cmd}`, cwd: way.cwd, ...(way.env ? { env: way.env } : {}) });
}
for (const way of REDIRECT_WAYS) {
  for (const cmd of ['reset --hard', 'checkout -- .', 'clean -fdx', 'restore .', 'stash -u'])
    tries.push({ way: way.name, line: `${way.prefix}${cmd}`, cwd: way.cwd });
}
// Through what the repository shares: branches, the stash, the worktree registry, the remote.
for (const [way, line, cwd] of [
  ['branch -f of the owned branch from the main worktree', 'git branch -f wt1 HEAD~1', 'main'],
  ['branch -D of the owned branch', 'git branch -D wt1', 'main'],
  ['branch -M onto the owned branch', 'git branch -M other wt1', 'main'],
  ['update-ref of the owned branch through the common git dir', 'git --git-dir={common} update-ref refs/heads/wt1 HEAD~1', 'root'],
  ['update-ref of the worktree HEAD', 'git update-ref worktrees/wt1/HEAD HEAD~1', 'main'],
  ['fetch into the owned branch (the gate lets fetch through; reference-transaction stops it)', 'git fetch -q --update-head-ok . +other:wt1', 'main'],
  ['fetch --force from the remote into the owned branch', 'git fetch -q --update-head-ok origin +other:wt1', 'main'],
  [
    'a second worktree of the owned branch (--force), then a commit there',
    'git worktree add -q --force {root}/twin wt1 && cd {root}/twin && git commit -q --allow-empty -m twin',
    'main',
  ],
  ['worktree add -B of the owned branch', 'git worktree add -q -B wt1 {root}/reset HEAD~1', 'main'],
  ['stash drop of the owner’s entry from another worktree', 'git stash drop', 'main'],
  ['stash pop of the owner’s entry from another worktree', 'git stash pop', 'main'],
  ['stash clear from another worktree', 'git stash clear', 'main'],
  ['reflog expire of every entry', 'git reflog expire --expire=now --all', 'main'],
  ['update-ref -d refs/stash', 'git update-ref -d refs/stash', 'main'],
  ['worktree remove --force', 'git worktree remove --force {wt}', 'main'],
  ['worktree remove --force --force (a locked worktree)', 'git worktree remove --force --force {wt}', 'main'],
  ['worktree move', 'git worktree move {wt} {root}/moved', 'main'],
  ['push --force of another branch onto the owned one', 'git push -q --force origin other:wt1', 'main'],
  ['push deleting the owned branch on the remote', 'git push -q origin :wt1', 'main'],
  ['push --force --no-verify from the owned worktree', 'git push -q --force --no-verify origin HEAD~1:wt1', 'wt'],
  ['commit --no-verify', 'git commit --no-verify -qam intruder', 'wt'],
  ['commit with the hooks switched off', 'git -c core.hooksPath=/dev/null commit -qam intruder', 'wt'],
  ['an alias of reset --hard', "git -c alias.tidy='reset --hard' tidy", 'wt'],
  ['a shell alias', "git -c alias.tidy='!git checkout -- .' tidy", 'wt'],
  ['config write to switch the hooks off, then a commit', 'git config core.hooksPath /dev/null; git commit -qam intruder', 'wt'],
  ['config write marking the worktree released', 'git config --worktree overdeck.owner.state released && git reset --hard', 'wt'],
  ["the owner's index through GIT_INDEX_FILE", 'GIT_INDEX_FILE={gd}/index git read-tree HEAD~1', 'attacker'],
  ['a stale epoch with the owner session', 'OVERDECK_EXECUTION_SESSION_ID=session_B OVERDECK_EPOCH=1 git reset --hard', 'wt'],
  ['xargs git', 'echo clean -fdx | xargs git', 'wt'],
  ['sh -c behind env -i', 'env -i PATH="$PATH" sh -c \'git reset --hard\'', 'wt'],
] as const) {
  tries.push({ way, line, cwd });
}

const cwdOf = (c: Way['cwd']): string => ({ wt: fx.wt1, main: fx.repo, root: fx.root, attacker, shortcut: path.join(fx.root, 'shortcut') })[c];

describe('a second agent tries its way around the gate', () => {
  test('there are at least 40 ways, each one distinct', () => {
    expect(tries.length).toBeGreaterThanOrEqual(40);
    expect(new Set(tries.map((t) => `${t.cwd} ${t.line}`)).size).toBe(tries.length);
  });

  /**
   * The owner's state as the last attempt left it, when that was as it found it: the next attempt
   * starts from there without reading it again (null: read it afresh).
   */
  let unchanged: Record<string, unknown> | null = null;

  it.each(tries.map((t) => [`${t.way}: ${t.line}`, t] as const))('%s', (_name, t) => {
    const before = unchanged ?? ownerState();
    unchanged = null;
    const r = shell(expand(t.line), cwdOf(t.cwd), t.env ?? {});
    // Whatever the caller did around it, the owner's bytes are as they were.
    const after = ownerState();
    expect(after).toEqual(before);
    unchanged = after;
    expect(r.stderr).toContain('od-worktree: refused');
    // Undo what an attempt from the attacker's repository may have changed of its own (its config).
    if (t.cwd === 'attacker' || t.line.includes('{attacker}'))
      spawnSync('git', ['config', '--unset-all', 'core.worktree'], { cwd: attacker, env: cleanGitEnv({}) });
  });

  test('the owner, with its secret, still does all of it', () => {
    const owner = { OVERDECK_TENURE_SECRET: SECRET };
    expect(shell('git stash drop -q && git add -A && git commit -qm "the owner commits"', fx.wt1, owner)).toMatchObject({ status: 0 });
    expect(shell('git push -q origin wt1 && git reset -q --hard HEAD~1 && git clean -fdxq', fx.wt1, owner)).toMatchObject({ status: 0 });
    expect(g(origin, 'log', '-1', '--format=%s', 'wt1')).toBe('the owner commits');
    expect(existsSync(path.join(fx.wt1, 'new.txt'))).toBe(false);
  });
});
