import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tenureSecret, tenureSecretHash } from '../../src/keys/tenure';
import { renderProjection } from '../../src/git/projection-format';
import { INCLUDE_ONLY } from '../../src/git/worktree-config';
import { cleanGitEnv } from '../../src/git/exec';
import { judgeToolCall } from '../../src/gate/pretooluse';
import { g, makeRepo, projection, run, type Fixture, type Run } from './git-fixture';

/**
 * hooks/pretooluse-git-gate.sh with the JSON that Claude Code and Codex send: every git command a
 * shell would run is judged by the gate in the directory and with the environment that git would
 * have (the agent's environment as the command changes it), and the command itself never runs.
 * Real git, real sh, both awks; the owned worktree's projection is written as od-worktree writes
 * it (renderProjection, included from config.worktree), with the hash of a tenure secret.
 */

const ROOT = path.resolve(__dirname, '../..');
const HOOK = path.join(ROOT, 'hooks/pretooluse-git-gate.sh');
const REAL_GIT = run('sh', ['-c', 'command -v git'], ROOT).stdout.trim();

// The agent's identity is whatever each test gives the hook, nothing inherited from the runner.
for (const name of Object.keys(process.env)) if (name.startsWith('OVERDECK_')) delete process.env[name];

const KEY = new Uint8Array(32).fill(7);
const SECRET_B = tenureSecret(KEY, { ownershipId: 'own_B', epoch: 2, executionSessionId: 'session_B' });
const SECRET_A = tenureSecret(KEY, { ownershipId: 'own_A', epoch: 1, executionSessionId: 'session_A' });

type Env = Record<string, string>;
/** The owner of wt1's current tenure, as `od-worktree exec` starts it. */
const OWNER: Env = { OVERDECK_EXECUTION_SESSION_ID: 'session_B', OVERDECK_EPOCH: '2', OVERDECK_TENURE_SECRET: SECRET_B };
/** The owner's session with an epoch of a tenure that is over. */
const OWNER_STALE: Env = { ...OWNER, OVERDECK_EPOCH: '1' };
/** Another agent, with its own (other) tenure's secret. */
const OTHER: Env = { OVERDECK_EXECUTION_SESSION_ID: 'session_A', OVERDECK_EPOCH: '1', OVERDECK_TENURE_SECRET: SECRET_A };
const OTHER_SESSION_ONLY: Env = { OVERDECK_EXECUTION_SESSION_ID: 'session_A' };
const NOBODY: Env = {};

const OWNER_MESSAGE = 'od-worktree: refused: this worktree is owned by session session_B';

let fx: Fixture;
let wt1GitDir: string;
let before: Record<string, string>;
let markers: string;

/** Every byte the owner could lose: files, index, HEAD, branch, stash. */
function state(wt: string): Record<string, string> {
  const file = (f: string) => (existsSync(path.join(wt, f)) ? readFileSync(path.join(wt, f), 'utf8') : '<missing>');
  return {
    a: file('a.txt'),
    staged: file('staged.txt'),
    untracked: file('new.txt'),
    ignored: file('build.ignored'),
    index: g(wt, 'ls-files', '--stage'),
    status: g(wt, 'status', '--porcelain=v1', '--untracked-files=all', '--ignored'),
    head: g(wt, 'rev-parse', 'HEAD'),
    branch: g(wt, 'symbolic-ref', 'HEAD'),
    stash: g(wt, 'stash', 'list', '--format=%H %gs'),
  };
}

/**
 * wt1 owned by session_B at epoch 2: the projection od-worktree writes (renderProjection, with the
 * hash of B's tenure secret), included from the private config.worktree with the extension on, as
 * src/git/worktree-config.ts does. wt1 carries uncommitted work and a stash entry.
 */
beforeAll(() => {
  fx = makeRepo();
  wt1GitDir = path.join(fx.repo, '.git/worktrees/wt1');
  writeFileSync(path.join(fx.wt1, 'a.txt'), 'uncommitted edit\n');
  writeFileSync(path.join(fx.wt1, 'stashed.txt'), 'stashed work\n');
  g(fx.wt1, 'add', 'stashed.txt');
  g(fx.wt1, 'stash', 'push', '-q', '-m', 'owner work', '--', 'stashed.txt');
  writeFileSync(path.join(fx.wt1, 'staged.txt'), 'staged\n');
  g(fx.wt1, 'add', 'staged.txt');
  writeFileSync(path.join(fx.wt1, 'new.txt'), 'untracked\n');
  writeFileSync(path.join(fx.wt1, 'build.ignored'), 'ignored\n');
  mkdirSync(path.join(fx.wt1, 'dé'));
  writeFileSync(path.join(fx.wt1, 'dé/f.txt'), 'in a directory with a non-ASCII name\n');
  g(fx.repo, 'config', 'extensions.worktreeConfig', 'true');
  writeFileSync(path.join(wt1GitDir, 'config.worktree'), INCLUDE_ONLY);
  const p = projection('B', 2, { ownershipId: 'own_B', epoch: 2, tenureHash: tenureSecretHash(SECRET_B) });
  writeFileSync(path.join(wt1GitDir, 'overdeck.config'), renderProjection(p));
  expect(g(fx.wt1, 'config', '--worktree', '--includes', 'overdeck.owner.tenure-hash')).toBe(tenureSecretHash(SECRET_B));
  markers = path.join(fx.root, 'markers');
  mkdirSync(markers);
  before = state(fx.wt1);
});
afterAll(() => {
  // Nothing any test sent through the hook ran: the owner's work is as it was.
  expect(state(fx.wt1)).toEqual(before);
  fx.cleanup();
});

type Shape = 'claude' | 'codex' | 'codex-argv';
const SHAPES: readonly Shape[] = ['claude', 'codex', 'codex-argv'];

/** How Codex renders an argv for its hooks (codex_shell_command::parse_command::shlex_join). */
function shlexJoin(argv: readonly string[]): string {
  return argv.map((w) => (w !== '' && !/[|&;<>()$`\\"' \t\r\n*?[#~=%]/.test(w) ? w : `"${w.replace(/[$`"\\]/g, '\\$&')}"`)).join(' ');
}

/** The tool call each agent CLI sends for `command` run in `cwd`. */
function payload(shape: Shape, command: string, cwd: string): string {
  switch (shape) {
    case 'claude':
      // Claude Code's PreToolUse input for its Bash tool.
      return JSON.stringify({
        session_id: '8c35adc1-5d1e-4a57-9e0b-2f1a7b9b1c11',
        transcript_path: '/home/agent/.claude/projects/x/8c35adc1.jsonl',
        cwd,
        permission_mode: 'default',
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: { command, description: 'Run the command', timeout: 120000 },
        tool_use_id: 'toolu_01ABC123',
      });
    case 'codex':
      // Codex's PreToolUse input (codex-rs/hooks pre-tool-use.command.input): its shell tool's argv
      // `["bash", "-lc", command]` as one shell command string.
      return JSON.stringify({
        session_id: '0199a213-81c0-7800-8aa1-bbab2a035a53',
        turn_id: '3',
        transcript_path: null,
        cwd,
        hook_event_name: 'PreToolUse',
        model: 'gpt-5-codex',
        permission_mode: 'default',
        tool_name: 'Bash',
        tool_input: { command: shlexJoin(['bash', '-lc', command]) },
        tool_use_id: 'call_Qm1',
      });
    case 'codex-argv':
      // A host that forwards Codex's shell call as the model made it: argv and workdir.
      return JSON.stringify({ command: ['bash', '-lc', command], workdir: cwd, timeout_ms: 10000 });
  }
}

/**
 * The hook's judgement of one tool call, in this process: what hooks/pretooluse-git-gate.sh runs
 * (od-gate pretooluse) minus the Node start per call, which made this file take minutes. The
 * tests at the end of the file still run the hook itself, as an agent CLI does.
 */
function hookRaw(json: string, env: Env): Run {
  let stderr = '';
  const status = judgeToolCall(json, cleanGitEnv(env), (s) => {
    stderr += s;
  });
  return { status, stdout: '', stderr };
}
const hook = (shape: Shape, command: string, cwd: string, env: Env): Run => hookRaw(payload(shape, command, cwd), env);

const DESTRUCTIVE = ['git reset --hard', 'git clean -fdx', 'git checkout -- .', 'git stash drop', 'git push --force origin HEAD'] as const;

interface Call {
  command: string;
  env: Env;
  /** Default: the owned worktree. */
  cwd?: string;
  /** What the refusal must say besides naming the owner (the identity git would have had). */
  says?: string;
}
interface Form {
  name: string;
  /** The form around one destructive git command: as a session without the tenure runs it, and as the owner does. */
  make(git: string): { refused: Call; owner: Call };
}

const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
/** git's own word in G replaced (for `/usr/bin/git`, `\git`, ...). */
const asGit = (word: string) => (git: string) => `${word} ${git.slice('git '.length)}`;
/** A prefix form: refused for the other agent, passes for the owner. */
const prefixed =
  (wrap: (git: string) => string): Form['make'] =>
  (git) => ({ refused: { command: wrap(git), env: OTHER }, owner: { command: wrap(git), env: OWNER } });

/** 1. The environment git would run with, as the command changes the agent's. */
const ENV_FORMS: readonly Form[] = [
  {
    name: 'VAR= git: an emptied secret',
    make: (G) => ({
      refused: { command: `OVERDECK_TENURE_SECRET= ${G}`, env: OWNER },
      owner: { command: `OVERDECK_TENURE_SECRET=${SECRET_B} ${G}`, env: NOBODY },
    }),
  },
  {
    name: 'VAR= git: an emptied session is unidentified, not dropped',
    make: (G) => ({
      refused: { command: `OVERDECK_EXECUTION_SESSION_ID= ${G}`, env: OTHER_SESSION_ONLY, says: 'unidentified' },
      owner: { command: `OVERDECK_EXECUTION_SESSION_ID= OVERDECK_TENURE_SECRET=${SECRET_B} ${G}`, env: OTHER_SESSION_ONLY },
    }),
  },
  {
    name: 'VAR=value git: another session',
    make: (G) => ({
      refused: { command: `OVERDECK_EXECUTION_SESSION_ID=session_A ${G}`, env: OWNER, says: 'session_A' },
      owner: { command: `OVERDECK_EXECUTION_SESSION_ID=session_B OVERDECK_EPOCH=2 OVERDECK_TENURE_SECRET=${SECRET_B} ${G}`, env: OTHER },
    }),
  },
  {
    name: 'VAR=value git: a stale epoch',
    make: (G) => ({
      refused: { command: `OVERDECK_EPOCH=1 ${G}`, env: OWNER, says: 'stale epoch 1' },
      owner: { command: `OVERDECK_EPOCH=2 ${G}`, env: OWNER_STALE },
    }),
  },
  {
    name: 'env -u VAR git',
    make: (G) => ({
      refused: { command: `env -u OVERDECK_TENURE_SECRET ${G}`, env: OWNER },
      owner: { command: `env -u OVERDECK_EPOCH ${G}`, env: OWNER_STALE },
    }),
  },
  {
    name: 'env -uVAR --unset=VAR git',
    make: (G) => ({
      refused: { command: `env -uOVERDECK_EPOCH --unset=OVERDECK_TENURE_SECRET ${G}`, env: OWNER },
      owner: { command: `env -uOVERDECK_EPOCH ${G}`, env: OWNER_STALE },
    }),
  },
  {
    name: 'env -i git',
    make: (G) => ({ refused: { command: `env -i ${G}`, env: OWNER }, owner: { command: `env -i OVERDECK_TENURE_SECRET=${SECRET_B} ${G}`, env: OTHER } }),
  },
  {
    name: 'env -- VAR=value git',
    make: (G) => ({
      refused: { command: `env -- OVERDECK_TENURE_SECRET= ${G}`, env: OWNER },
      owner: { command: `env -- OVERDECK_TENURE_SECRET=${SECRET_B} ${G}`, env: NOBODY },
    }),
  },
  {
    name: 'env VAR=value git',
    make: (G) => ({
      refused: { command: `env OVERDECK_TENURE_SECRET=${SECRET_A} ${G}`, env: OWNER },
      owner: { command: `env OVERDECK_TENURE_SECRET=${SECRET_B} ${G}`, env: NOBODY },
    }),
  },
  {
    name: 'env -S',
    make: (G) => ({
      refused: { command: `env -S ${sq(`OVERDECK_TENURE_SECRET= ${G}`)}`, env: OWNER },
      owner: { command: `env -S ${sq(`OVERDECK_TENURE_SECRET=${SECRET_B} ${G}`)}`, env: NOBODY },
    }),
  },
  {
    name: 'unset VAR; git',
    make: (G) => ({
      refused: { command: `unset OVERDECK_TENURE_SECRET; ${G}`, env: OWNER },
      owner: { command: `unset OVERDECK_EPOCH && ${G}`, env: OWNER_STALE },
    }),
  },
  {
    name: 'export VAR=value; git',
    make: (G) => ({
      refused: { command: `export OVERDECK_TENURE_SECRET=${SECRET_A} && ${G}`, env: OWNER },
      owner: { command: `export OVERDECK_TENURE_SECRET=${SECRET_B}; ${G}`, env: NOBODY },
    }),
  },
  {
    name: 'export -n VAR; git',
    make: (G) => ({
      refused: { command: `export -n OVERDECK_TENURE_SECRET; ${G}`, env: OWNER },
      owner: { command: `export -n OVERDECK_EPOCH; ${G}`, env: OWNER_STALE },
    }),
  },
  {
    name: 'VAR=value alone: a new variable reaches git only once exported',
    make: (G) => ({
      refused: { command: `OVERDECK_TENURE_SECRET=${SECRET_B}; OVERDECK_EXECUTION_SESSION_ID=session_B; ${G}`, env: NOBODY },
      owner: { command: `OVERDECK_TENURE_SECRET=${SECRET_B}; export OVERDECK_TENURE_SECRET; ${G}`, env: NOBODY },
    }),
  },
  {
    name: 'VAR=value alone: an inherited variable stays exported',
    make: (G) => ({
      refused: { command: `OVERDECK_EPOCH=1; ${G}`, env: OWNER, says: 'stale epoch 1' },
      owner: { command: `OVERDECK_TENURE_SECRET=${SECRET_B}; ${G}`, env: { ...OWNER, OVERDECK_TENURE_SECRET: SECRET_A } },
    }),
  },
  {
    name: 'set -a; VAR=value',
    make: (G) => ({
      refused: { command: `set -a; set +a; OVERDECK_TENURE_SECRET=${SECRET_B}; ${G}`, env: NOBODY },
      owner: { command: `set -a; OVERDECK_TENURE_SECRET=${SECRET_B}; ${G}`, env: NOBODY },
    }),
  },
  {
    name: 'declare -x VAR=value',
    make: (G) => ({
      refused: { command: `declare -x OVERDECK_TENURE_SECRET=; ${G}`, env: OWNER },
      owner: { command: `declare -x OVERDECK_TENURE_SECRET=${SECRET_B}; ${G}`, env: NOBODY },
    }),
  },
  {
    name: '( ... ) does not leak',
    make: (G) => ({
      refused: { command: `(export OVERDECK_TENURE_SECRET=${SECRET_B}); ${G}`, env: NOBODY },
      owner: { command: `(unset OVERDECK_TENURE_SECRET); ${G}`, env: OWNER },
    }),
  },
  {
    name: '$( ... ) does not leak',
    make: (G) => ({
      refused: { command: `x=$(export OVERDECK_TENURE_SECRET=${SECRET_B}); ${G}`, env: NOBODY },
      owner: { command: `x=$(unset OVERDECK_TENURE_SECRET; echo); ${G}`, env: OWNER },
    }),
  },
  {
    name: 'a pipeline element does not leak',
    make: (G) => ({
      refused: { command: `export OVERDECK_TENURE_SECRET=${SECRET_B} | cat; ${G}`, env: NOBODY },
      owner: { command: `unset OVERDECK_TENURE_SECRET | cat; ${G}`, env: OWNER },
    }),
  },
  {
    name: 'across ;, &&, || and newlines',
    make: (G) => ({
      refused: { command: `unset OVERDECK_TENURE_SECRET\ngit status || ${G}`, env: OWNER },
      owner: { command: `export OVERDECK_TENURE_SECRET=${SECRET_B}\ntrue && git status; ${G}`, env: NOBODY },
    }),
  },
  {
    name: 'a child shell sees only the exported variables',
    make: (G) => ({
      refused: { command: `OVERDECK_TENURE_SECRET=${SECRET_B}; bash -c ${sq(G)}`, env: NOBODY },
      owner: { command: `OVERDECK_TENURE_SECRET=${SECRET_B} bash -c ${sq(G)}`, env: NOBODY },
    }),
  },
  {
    name: 'GIT_DIR and GIT_WORK_TREE (from the main worktree)',
    make: (G) => ({
      refused: { command: `GIT_DIR=${wt1GitDir} GIT_WORK_TREE=${fx.wt1} ${G}`, env: OTHER, cwd: fx.repo },
      owner: { command: `GIT_DIR=${wt1GitDir} GIT_WORK_TREE=${fx.wt1} ${G}`, env: OWNER, cwd: fx.repo },
    }),
  },
  {
    name: 'GIT_CONFIG_PARAMETERS (an alias of the command)',
    make: (G) => {
      const command = `GIT_CONFIG_PARAMETERS=${sq(`'alias.nuke'='${G.replace(/^git /, '')}'`)} git nuke`;
      return { refused: { command, env: OTHER }, owner: { command, env: OWNER } };
    },
  },
  {
    name: 'GIT_CONFIG_COUNT/KEY/VALUE (an alias of the command)',
    make: (G) => {
      const command = `export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.nuke; GIT_CONFIG_VALUE_0=${sq(G.replace(/^git /, ''))} git nuke`;
      return { refused: { command, env: OTHER }, owner: { command, env: OWNER } };
    },
  },
  {
    name: 'cd',
    make: (G) => ({
      refused: { command: `cd ${fx.repo} && cd ../wt1/dé && ${G}`, env: OTHER, cwd: fx.root },
      owner: { command: `cd ${fx.repo} && cd ../wt1/dé && ${G}`, env: OWNER, cwd: fx.root },
    }),
  },
  {
    name: 'pushd',
    make: (G) => ({
      refused: { command: `pushd ${fx.wt1} >/dev/null; ${G}`, env: OTHER, cwd: fx.root },
      owner: { command: `pushd ${fx.wt1} >/dev/null; ${G}`, env: OWNER, cwd: fx.root },
    }),
  },
  {
    name: 'pushd; popd',
    make: (G) => ({
      refused: { command: `cd wt1; pushd /tmp; popd; ${G}`, env: OTHER, cwd: fx.root },
      owner: { command: `cd wt1; pushd /tmp; popd; ${G}`, env: OWNER, cwd: fx.root },
    }),
  },
  {
    name: 'env -C, env --chdir=',
    make: (G) => ({
      refused: { command: `env -C wt1 ${G}`, env: OTHER, cwd: fx.root },
      owner: { command: `env --chdir=wt1/dé ${G}`, env: OWNER, cwd: fx.root },
    }),
  },
  {
    name: 'sudo -D',
    make: (G) => ({
      refused: { command: `sudo -E -D wt1 ${G}`, env: OTHER, cwd: fx.root },
      owner: { command: `sudo -E -D wt1 ${G}`, env: OWNER, cwd: fx.root },
    }),
  },
  {
    name: 'cd "$VAR"',
    make: (G) => ({
      refused: { command: `WT=${fx.wt1}; cd "$WT" && ${G}`, env: OTHER, cwd: fx.root },
      owner: { command: `WT=${fx.wt1}; cd "$WT" && ${G}`, env: OWNER, cwd: fx.root },
    }),
  },
];

/** 2. Where the command puts git. */
const COMMAND_FORMS: readonly Form[] = [
  { name: 'plain', make: prefixed((G) => G) },
  { name: 'sh -c', make: prefixed((G) => `sh -c "${G}"`) },
  { name: 'bash -c', make: prefixed((G) => `bash -c ${sq(G)}`) },
  { name: 'bash -lc', make: prefixed((G) => `bash -lc ${sq(G)}`) },
  { name: 'bash -c --', make: prefixed((G) => `bash -c -- ${sq(G)}`) },
  { name: 'bash -o pipefail -ec', make: prefixed((G) => `bash -o pipefail -ec ${sq(G)}`) },
  { name: 'zsh -c', make: prefixed((G) => `zsh -c ${sq(G)}`) },
  { name: 'env sh -c', make: prefixed((G) => `env sh -c ${sq(G)}`) },
  { name: 'bash -c with positional parameters', make: prefixed((G) => `bash -c 'git "$@"' bash ${G.replace(/^git /, '')}`) },
  {
    name: 'sudo -u x (sudo resets the environment)',
    make: (G) => ({ refused: { command: `sudo -u builder ${G}`, env: OWNER }, owner: { command: `sudo -E -u builder ${G}`, env: OWNER } }),
  },
  {
    name: 'sudo --preserve-env=',
    make: (G) => ({ refused: { command: `sudo -n ${G}`, env: OWNER }, owner: { command: `sudo --preserve-env=OVERDECK_TENURE_SECRET -n ${G}`, env: OWNER } }),
  },
  { name: 'nohup', make: prefixed((G) => `nohup ${G} &`) },
  { name: 'time', make: prefixed((G) => `time ${G}`) },
  { name: 'timeout', make: prefixed((G) => `timeout 5 ${G}`) },
  { name: 'timeout -s', make: prefixed((G) => `timeout -s KILL 5s ${G}`) },
  { name: 'nice -n', make: prefixed((G) => `nice -n 5 ${G}`) },
  { name: 'command', make: prefixed((G) => `command ${G}`) },
  { name: 'builtin', make: prefixed((G) => `builtin ${G}`) },
  { name: 'exec', make: prefixed((G) => `exec ${G}`) },
  { name: 'xargs git (what is given)', make: prefixed((G) => `xargs ${G} </dev/null`) },
  { name: 'xargs -0 -n1 git', make: prefixed((G) => `printf 'x\\0' | xargs -0 -n1 ${G}`) },
  { name: 'echo args | xargs git', make: prefixed((G) => `echo ${G.replace(/^git \S+ ?/, '')} | xargs ${G.split(' ').slice(0, 2).join(' ')}`) },
  { name: 'find -exec git ;', make: prefixed((G) => `find . -maxdepth 0 -exec ${G} \\;`) },
  { name: 'flock -c', make: prefixed((G) => `flock /tmp/od.lock -c ${sq(G)}`) },
  { name: '&& chain', make: prefixed((G) => `git status && ${G}`) },
  { name: '|| chain', make: prefixed((G) => `false || ${G}`) },
  { name: '; chain', make: prefixed((G) => `git log -1 --oneline; ${G}`) },
  { name: '| pipeline', make: prefixed((G) => `git status --short | ${G} 2>&1 | tail -n 3`) },
  { name: 'newline', make: prefixed((G) => `git status\n${G}`) },
  { name: '( subshell )', make: prefixed((G) => `(cd dé && ${G})`) },
  { name: '{ group; }', make: prefixed((G) => `{ git status; ${G}; }`) },
  { name: '$( ... )', make: prefixed((G) => `out=$(${G})`) },
  { name: 'backquotes', make: prefixed((G) => `echo \`${G}\``) },
  { name: 'eval', make: prefixed((G) => `eval ${sq(G)}`) },
  { name: 'here-string', make: prefixed((G) => `bash <<< ${sq(G)}`) },
  { name: 'here-doc into sh', make: prefixed((G) => `sh <<'EOF'\n${G}\nEOF`) },
  { name: 'echo | sh', make: prefixed((G) => `echo ${sq(G)} | sh`) },
  { name: 'if; then; fi', make: prefixed((G) => `if git diff --quiet; then echo clean; else ${G}; fi`) },
  { name: 'for; do; done', make: prefixed((G) => `for i in 1; do ${G}; done`) },
  { name: '/usr/bin/git', make: prefixed((G) => asGit(REAL_GIT)(G)) },
  { name: './git', make: prefixed(asGit('./git')) },
  { name: '\\git', make: prefixed(asGit('\\git')) },
  { name: '"git"', make: prefixed(asGit('"git"')) },
  { name: "'g'it", make: prefixed(asGit("'g'it")) },
  { name: "$'git'", make: prefixed(asGit("$'\\x67it'")) },
  { name: '$VAR as the command', make: prefixed((G) => `g=git; $g ${G.replace(/^git /, '')}`) },
  {
    name: 'git -C "$VAR"',
    make: (G) => ({
      refused: { command: `W=${fx.wt1}; ${G.replace(/^git /, 'git -C "$W" ')}`, env: OTHER, cwd: fx.root },
      owner: { command: `W=${fx.wt1}; ${G.replace(/^git /, 'git -C "$W" ')}`, env: OWNER, cwd: fx.root },
    }),
  },
  { name: 'cd "$(git rev-parse --show-toplevel)"', make: prefixed((G) => `cd dé && cd "$(git rev-parse --show-toplevel)" && ${G}`) },
  { name: 'git -C "$(git rev-parse --show-toplevel)"', make: prefixed((G) => `cd dé && git -C "$(git rev-parse --show-toplevel)" ${G.slice('git '.length)}`) },
];

/** Each form meets each destructive command in turn (and each shape sends every form). */
const cases = (forms: readonly Form[]) => forms.map((f, i) => [f.name, f, i] as const);

function expectRefused(shape: Shape, c: Call): void {
  const r = hook(shape, c.command, c.cwd ?? fx.wt1, c.env);
  const label = `${shape}: ${c.command}`;
  expect([label, r.status, r.stdout]).toEqual([label, 2, '']);
  expect([label, r.stderr]).toEqual([label, expect.stringContaining(OWNER_MESSAGE)]);
  if (c.says !== undefined) expect([label, r.stderr]).toEqual([label, expect.stringContaining(c.says)]);
}
function expectPasses(shape: Shape, c: Call): void {
  const r = hook(shape, c.command, c.cwd ?? fx.wt1, c.env);
  const label = `${shape}: ${c.command}`;
  expect([label, r]).toEqual([label, { status: 0, stdout: '', stderr: '' }]);
}

describe('the judgement of a tool call', () => {
  describe('1. the environment git would have: refused without the tenure, passes with it', () => {
    it.each(cases(ENV_FORMS))('%s', (_name, form, i) => {
      SHAPES.forEach((shape, s) => {
        const { refused, owner } = form.make(DESTRUCTIVE[(i + s) % DESTRUCTIVE.length]!);
        expectRefused(shape, refused);
        expectPasses(shape, owner);
      });
    });
  });

  describe('2. every git a shell would run: refused for another agent, passes for the owner', () => {
    it.each(cases(COMMAND_FORMS))('%s', (_name, form, i) => {
      SHAPES.forEach((shape, s) => {
        const { refused, owner } = form.make(DESTRUCTIVE[(i + s) % DESTRUCTIVE.length]!);
        expectRefused(shape, refused);
        expectPasses(shape, owner);
      });
    });

    it.each(DESTRUCTIVE.map((d) => [d]))('%s, in every shape', (git) => {
      for (const shape of SHAPES) {
        expectRefused(shape, { command: git, env: OTHER });
        expectRefused(shape, { command: git, env: NOBODY, says: 'unidentified' });
        expectRefused(shape, { command: git, env: { ...OWNER, OVERDECK_TENURE_SECRET: SECRET_A } });
        expectPasses(shape, { command: git, env: OWNER });
        expectPasses(shape, { command: git, env: { OVERDECK_TENURE_SECRET: SECRET_B } });
      }
    });
  });

  it('lets harmless commands through: read-only git, git only quoted or in data, other worktrees', () => {
    for (const command of [
      'git status && git log -1 --oneline && git diff --stat',
      'git stash list; git clean -n -d; git branch --list',
      'echo "git reset --hard" && printf %s \'git clean -fdx\'',
      'grep -rn "git stash drop" . || true',
      "cat <<'EOF' > /dev/null\ngit reset --hard\nEOF\ngit status",
      `cd ${fx.wt2} && git reset --hard && git clean -fdx`,
      `git -C ${fx.wt2} checkout -- .`,
      '# git reset --hard\ngit status # git clean -fdx',
      'git status #; git reset --hard',
      'command -v git; type git',
    ]) {
      for (const shape of SHAPES) expectPasses(shape, { command, env: OTHER });
    }
  });

  it('never runs the command: no file any part of it would create appears', () => {
    const m = (n: number) => path.join(markers, `m${n}`);
    const commands = [
      `touch ${m(1)}; git reset --hard`,
      `git reset --hard $(touch ${m(2)})`,
      `echo \`touch ${m(3)}\` && git status > ${m(4)}`,
      `bash -c 'touch ${m(5)}; git clean -fdx'`,
      `x=$(touch ${m(6)}; echo git) && $x stash drop`,
      `cat <<EOF\n$(touch ${m(7)})\nEOF`,
      `eval 'touch ${m(8)}'; sh <<< 'touch ${m(9)}'`,
      `diff <(touch ${m(10)}) /dev/null; git checkout -- .`,
    ];
    for (const command of commands) for (const shape of SHAPES) hook(shape, command, fx.wt1, OTHER);
    for (let n = 1; n <= 10; n++) expect([n, existsSync(m(n))]).toEqual([n, false]);
    expect(hook('claude', commands[0]!, fx.wt1, OTHER).status).toBe(2);
  });
});

describe('the JSON the agent CLIs send', () => {
  it('decodes JSON escapes (\\u0022, \\", \\\\, \\n, \\t, \\/, non-ASCII) before it reads the command', () => {
    // `cd dé`, then `git checkout -- "."`, then a newline and `git clean -fdx`: each escape matters.
    const raw = `{"tool_name":"Bash","tool_input":{"command":"cd d\\u00e9 &&\\tgit \\u0063heckout -- \\u0022.\\u0022 \\"x\\\\y\\" || echo a\\/b\\ngit clean -fdx"},"cwd":${JSON.stringify(fx.wt1)}}`;
    expect(JSON.parse(raw).tool_input.command).toBe('cd dé &&\tgit checkout -- "." "x\\y" || echo a/b\ngit clean -fdx');
    const r = hookRaw(raw, OTHER);
    expect(r.status).toBe(2);
    expect(r.stderr.split('\n').filter((l) => l.includes(OWNER_MESSAGE))).toHaveLength(2);
    // A surrogate pair decodes to one character (UTF-8), and the command stays one command.
    const emoji = `{"tool_name":"Bash","tool_input":{"command":"git commit -m \\"\\ud83d\\ude00\\""},"cwd":${JSON.stringify(fx.wt1)}}`;
    expect(hookRaw(emoji, OTHER).status).toBe(2);
    expect(hookRaw(emoji, OWNER)).toEqual({ status: 0, stdout: '', stderr: '' });
  });

  it('reads cwd and workdir, at the top level and inside tool_input (a relative workdir from cwd)', () => {
    const calls = [
      { tool_name: 'Bash', tool_input: { command: 'git clean -fdx' }, cwd: fx.wt1 },
      { tool_name: 'shell', tool_input: { command: ['git', 'stash', 'drop'], workdir: fx.wt1 }, cwd: fx.root },
      { tool_name: 'shell', tool_input: { command: ['git', 'reset', '--hard'], workdir: 'wt1/dé' }, cwd: fx.root },
      { tool_name: 'exec_command', tool_input: { cmd: 'git checkout -- .', workdir: 'wt1' }, cwd: fx.root },
      { command: ['bash', '-lc', 'git reset --hard'], workdir: fx.wt1, timeout_ms: 1000 },
      { command: ['bash', '-lc', 'cd wt1 && git reset --hard'], workdir: fx.root },
    ];
    for (const call of calls) {
      expect([call, hookRaw(JSON.stringify(call), OTHER).status]).toEqual([call, 2]);
      expect([call, hookRaw(JSON.stringify(call), OWNER)]).toEqual([call, { status: 0, stdout: '', stderr: '' }]);
    }
    // The same command in another worktree passes: the directory is the one given.
    expect(hookRaw(JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'git reset --hard', workdir: fx.wt2 }, cwd: fx.wt1 }), OTHER).status).toBe(0);
  });

  it('an argv array is exec-ed as it is: a NAME=value first word is a program, not an assignment', () => {
    const call = (command: string[]) => hookRaw(JSON.stringify({ tool_name: 'shell', tool_input: { command, workdir: fx.wt1 } }), OWNER);
    expect(call(['env', 'OVERDECK_TENURE_SECRET=', 'git', 'reset', '--hard']).status).toBe(2);
    expect(call(['OVERDECK_TENURE_SECRET=', 'git', 'reset', '--hard'])).toEqual({ status: 0, stdout: '', stderr: '' });
  });

  it('exits 0 at once for tools that are not a shell, whatever their input says', () => {
    for (const call of [
      { tool_name: 'Read', tool_input: { file_path: 'a.txt' }, cwd: fx.wt1 },
      { tool_name: 'Edit', tool_input: { file_path: 'a.txt', old_string: 'git reset --hard', new_string: 'x' }, cwd: fx.wt1 },
      { tool_name: 'Write', tool_input: { file_path: 'x.sh', content: 'git reset --hard\n' }, cwd: fx.wt1 },
      { tool_name: 'mcp__overdeck__bind', tool_input: { command: 'git reset --hard' }, cwd: fx.wt1 },
      { tool_name: 'apply_patch', tool_input: { command: 'git clean -fdx' }, cwd: fx.wt1 },
    ]) {
      expect([call.tool_name, hookRaw(JSON.stringify(call), OTHER)]).toEqual([call.tool_name, { status: 0, stdout: '', stderr: '' }]);
    }
  });

  it('a malformed JSON exits 1 with a report (not a veto), in the process and through the hook', () => {
    for (const through of ['judge', 'hook'] as const) {
      for (const bad of [
        '',
        '{"tool_name":"Bash","tool_input":{"command":"git reset --hard"',
        '{"tool_input":{"command":"git reset --hard"}} trailing',
        '["git reset --hard"]',
        '{"tool_input":{"command":"git \\x"}}',
        '{"tool_input":{"command":"\\u12"}}',
      ]) {
        const r = through === 'judge' ? hookRaw(bad, OTHER) : run('sh', [HOOK], fx.root, OTHER, bad);
        expect([through, bad, r.status, r.stdout]).toEqual([through, bad, 1, '']);
        expect(r.stderr).toMatch(/^od-worktree: pretooluse: the tool call is not valid JSON \(.*\); its git commands are not checked\n$/);
      }
    }
  });

  it('a broken install (no gate beside the hook) exits 1: reported, not a veto', () => {
    const alone = path.join(fx.root, 'alone');
    mkdirSync(alone);
    writeFileSync(path.join(alone, 'hook.sh'), readFileSync(HOOK));
    const r = run('sh', [path.join(alone, 'hook.sh')], fx.root, OTHER, payload('claude', 'git reset --hard', fx.wt1));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('the git gate (bin/git-gate/git) is not beside');
  });

  it('works when run by a relative path (the checks change directory)', () => {
    const r = run('sh', [path.relative(fx.root, HOOK)], fx.root, OTHER, payload('claude', 'git reset --hard', fx.wt1));
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(OWNER_MESSAGE);
  });
});
