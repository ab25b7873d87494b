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
  // A program git runs for the caller (a diff driver, an editor, ssh, an ext:: helper, a shell
  // alias): git puts its own exec-path first on the child's PATH, so `git` in it is the real git,
  // never the gate. It resets the owner's files.
  writeFileSync(
    path.join(evilBin, 'reset-owner'),
    `#!/bin/sh\nunset GIT_DIR GIT_INDEX_FILE GIT_WORK_TREE GIT_PREFIX\ngit -C '${fx.wt1}' reset -q --hard\ngit -C '${fx.wt1}' clean -fdxq\nexit 0\n`,
  );
  chmodSync(path.join(evilBin, 'reset-owner'), 0o755);
  // A config file that switches the hooks off, for an include.
  writeFileSync(path.join(fx.root, 'hooks-off.cfg'), '[core]\n\thooksPath = /dev/null\n');
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
    .replaceAll('{repo}', fx.repo)
    .replaceAll('{reset}', path.join(evilBin, 'reset-owner'))
    .replaceAll('{evil}', evilBin)
    .replaceAll('{hash}', tenureSecretHash(SECRET));
}

/**
 * The ways around: how the caller dresses itself (environment, proof) and where it points git.
 * `cwd` is where the shell starts: the owned worktree, the main worktree, or somewhere else.
 */
interface Way {
  name: string;
  cwd: 'wt' | 'main' | 'wt2' | 'root' | 'attacker' | 'shortcut';
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
  // The security review's forms (docs/agent-gate.md#the-forms-a-review-found).
  // 1. A worktree named as git resolves it: the end of its path, not only the path itself.
  ["worktree remove --force --force by the worktree's name", 'git worktree remove --force --force wt1', 'main'],
  ["worktree move by the worktree's name", 'git worktree move wt1 {root}/moved-by-name', 'main'],
  // 2. The hooks switched off for one command, then a ref write the hooks would have refused.
  ['-c core.hooksPath=/dev/null on a fetch into the owned branch', 'git -c core.hooksPath=/dev/null fetch -q --update-head-ok . +other:wt1', 'main'],
  [
    '--config-env core.hooksPath on a fetch into the owned branch',
    'OFF=/dev/null git --config-env=core.hooksPath=OFF fetch -q --update-head-ok . +other:wt1',
    'main',
  ],
  ['GIT_CONFIG_PARAMETERS switching the hooks off', `GIT_CONFIG_PARAMETERS="'core.hookspath'='/dev/null'" git fetch -q --update-head-ok . +other:wt1`, 'main'],
  [
    'GIT_CONFIG_COUNT/KEY/VALUE switching the hooks off',
    'GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null git fetch -q --update-head-ok . +other:wt1',
    'main',
  ],
  ['-c include.path of a file that switches the hooks off', 'git -c include.path={root}/hooks-off.cfg fetch -q --update-head-ok . +other:wt1', 'main'],
  // 3. Shared configuration written from a free worktree.
  ['config core.hooksPath from a free worktree, then a fetch', 'git config core.hooksPath /dev/null && git fetch -q --update-head-ok . +other:wt1', 'wt2'],
  [
    'config --local include.path from a free worktree, then a fetch',
    'git config --local include.path {root}/hooks-off.cfg && git fetch -q --update-head-ok . +other:wt1',
    'wt2',
  ],
  [
    'config --worktree core.hooksPath in a free worktree, then a fetch',
    'git config --worktree core.hooksPath /dev/null && git fetch -q --update-head-ok . +other:wt1',
    'wt2',
  ],
  ['config core.fsmonitor from a free worktree, then a status there', 'git config core.fsmonitor {reset} && git status -s', 'wt2'],
  // 4. fast-import writes any ref it is told to.
  [
    'fast-import of a replace ref for the owned HEAD',
    'printf "reset refs/replace/$(git rev-parse wt1)\\nfrom refs/heads/other\\n\\n" | git fast-import --quiet',
    'main',
  ],
  // 5. checkout -B / switch -C of the owned branch from another worktree, hooks off.
  [
    'checkout --ignore-other-worktrees -B of the owned branch, hooks off',
    'git -c core.hooksPath=/dev/null checkout -q --ignore-other-worktrees -B wt1 HEAD~1',
    'main',
  ],
  [
    'switch --ignore-other-worktrees -C of the owned branch, hooks off',
    'git -c core.hooksPath=/dev/null switch -q --ignore-other-worktrees -C wt1 HEAD~1',
    'main',
  ],
  // 6. A push into a repository with owned worktrees, its receive-pack told to skip the hooks.
  ...(['HEAD:heads/wt1', 'HEAD:refs/heads/wt1', ':heads/wt1', "'refs/heads/*:refs/heads/*'"] as const).map(
    (spec) =>
      [
        `push --force --no-verify of ${spec} into the owner's repository`,
        `git branch -f wt1 HEAD && git push -q --force --no-verify --receive-pack='git -c core.hooksPath=/dev/null -c receive.denyCurrentBranch=ignore -c receive.denyDeleteCurrent=ignore receive-pack' {repo} ${spec}`,
        'attacker',
      ] as const,
  ),
  [
    "push --force --no-verify through a configured remote.<name>.push into the owner's repository",
    "git -c remote.victim.url={repo} -c remote.victim.push=+HEAD:refs/heads/wt1 -c remote.victim.receivepack='git -c core.hooksPath=/dev/null -c receive.denyCurrentBranch=ignore -c receive.denyDeleteCurrent=ignore receive-pack' push -q --force --no-verify victim",
    'attacker',
  ],
  // 7. Programs git runs, which find the real git first on their PATH.
  ['GIT_EXTERNAL_DIFF', 'GIT_EXTERNAL_DIFF={reset} git diff HEAD~1', 'main'],
  ['-c diff.external', 'git -c diff.external={reset} diff HEAD~1', 'main'],
  ['GIT_SSH_COMMAND', 'GIT_SSH_COMMAND={reset} git fetch -q ssh://nohost/x', 'main'],
  ['-c core.sshCommand', 'git -c core.sshCommand={reset} fetch -q ssh://nohost/x', 'main'],
  ['-c protocol.ext.allow=always with an ext:: URL', 'git -c protocol.ext.allow=always fetch -q ext::{reset}', 'main'],
  ['GIT_EDITOR', 'GIT_EDITOR={reset} git commit -q --allow-empty', 'main'],
  ['-c core.editor', 'git -c core.editor={reset} commit -q --allow-empty', 'main'],
  ['GIT_SEQUENCE_EDITOR', 'GIT_SEQUENCE_EDITOR={reset} git rebase -q -i HEAD', 'main'],
  ['a shell alias run from a free worktree', "git -c alias.x='!{reset}' x", 'main'],
  // 8. A replace ref makes every git read other content for the owner's HEAD.
  ['replace of the owned HEAD', 'git replace $(git rev-parse wt1) other', 'main'],
  ['update-ref of a replace ref for the owned HEAD', 'git update-ref refs/replace/$(git rev-parse wt1) other', 'main'],
  ['fetch into a replace ref for the owned HEAD', 'git fetch -q . other:refs/replace/$(git rev-parse wt1)', 'main'],
] as const) {
  tries.push({ way, line, cwd });
}

const cwdOf = (c: Way['cwd']): string => ({ wt: fx.wt1, main: fx.repo, wt2: fx.wt2, root: fx.root, attacker, shortcut: path.join(fx.root, 'shortcut') })[c];

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
