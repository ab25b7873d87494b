import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { withTenureSecret } from './tenure-env';

/**
 * A repository whose every agent-writable place names a program (docs/guarantees.md#out-of-reach):
 * every hook git knows, in .git/hooks and in a core.hooksPath directory; core.fsmonitor (shared
 * config, an include and each worktree's config.worktree); clean, smudge and process filters and
 * textconv / external diff drivers picked by .gitattributes, .git/info/attributes and
 * core.attributesFile; diff.external; gpg.program behind commit.gpgSign and log.showSignature;
 * pager, editor, ssh, askpass and credential helpers; the same again from a global and a system
 * config file and from the environment (GIT_EXTERNAL_DIFF, GIT_PAGER, GIT_SSH_COMMAND...).
 *
 * Each program is a marker writer: run by anyone but the test's own agent (HOSTILE_AGENT=1), it
 * appends its kind, its arguments and its whole environment to the marker file, so a test sees
 * both that repository code ran and what it could read (DATABASE_URL, tokens). For the agent it
 * does what the real thing would (filters pass content through, gpg signs), so the test can work
 * in the repository as an agent would: commit, merge, land.
 */

export const HOOK_NAMES = [
  'applypatch-msg',
  'pre-applypatch',
  'post-applypatch',
  'pre-commit',
  'pre-merge-commit',
  'prepare-commit-msg',
  'commit-msg',
  'post-commit',
  'pre-rebase',
  'post-checkout',
  'post-merge',
  'pre-push',
  'pre-receive',
  'update',
  'proc-receive',
  'post-receive',
  'post-update',
  'reference-transaction',
  'push-to-checkout',
  'pre-auto-gc',
  'post-rewrite',
  'sendemail-validate',
  'fsmonitor-watchman',
  'p4-changelist',
  'p4-prepare-changelist',
  'p4-post-changelist',
  'p4-pre-submit',
  'post-index-change',
] as const;

/** The author and committer of the agent's commits. */
const IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' };

/** What each kind of program does for the agent once it has (not) recorded itself. */
const BEHAVIOUR = {
  hook: 'cat >/dev/null 2>&1; exit 0',
  passThrough: 'exec cat',
  textconv: 'exec cat "$1"',
  // Not reading stdin: git may hand over its own, which nobody closes.
  fail: 'exit 1',
  silent: 'exit 0',
  /** a long-running filter process: ends at once (git then stores the content unfiltered) */
  process: 'exit 1',
  gpg: `case " $* " in
  *" -bsau "*) cat >/dev/null; printf '\\n[GNUPG:] SIG_CREATED D 1 8 00 1700000000 0000\\n' >&2; printf -- '-----BEGIN PGP SIGNATURE-----\\n\\nZmFrZQ==\\n-----END PGP SIGNATURE-----\\n' ;;
  *) cat >/dev/null; exit 1 ;;
esac`,
} as const;

export interface HostileRepo {
  dir: string;
  repoRoot: string;
  worktrees: { path: string; branch: string }[];
  markerFile: string;
  /**
   * Variables a service process could carry that name programs (and the global and system config
   * files above): a test puts them into process.env to check the service does not pass them on.
   */
  hostileEnv: Record<string, string>;
  /** One line per program run since the last clear: its kind, then whether it saw our secrets. */
  marks(): string[];
  /** The marker file as written (arguments and environments), for a failure message. */
  raw(): string;
  clear(): void;
  /** git as the agent runs it (hooks, filters and all), quietly: its trimmed stdout; throws on failure. */
  agentGit(cwd: string, session: string | null, ...args: string[]): string;
  /** The same, its exit status instead of a throw. */
  agentGitStatus(cwd: string, session: string | null, ...args: string[]): number;
}

/** Plain git for building the repository, before anything hostile exists (no config of the host's either). */
function setupGit(cwd: string, ...args: string[]): string {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', ...IDENTITY };
  return execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

const ATTRIBUTES = [
  '* filter=evil diff=evil',
  '*.proc filter=evilproc',
  '*.inc filter=evilinc',
  '*.glob filter=evilglobal diff=evilglobal',
  '*.sys filter=evilsystem',
  '',
].join('\n');

/** A repository with one commit on main and `count` linked worktrees, then made hostile. */
export function makeHostileRepo(count = 2, base = process.env.OD_TEST_TMP ?? os.tmpdir()): HostileRepo {
  const dir = mkdtempSync(path.join(base, 'hostile-'));
  const repoRoot = path.join(dir, 'product');
  const bin = path.join(dir, 'bin');
  const hooks = path.join(dir, 'hooks');
  const markerFile = path.join(dir, 'MARKER');
  mkdirSync(bin);
  mkdirSync(hooks);

  setupGit(dir, 'init', '-q', '-b', 'main', repoRoot);
  writeFileSync(path.join(repoRoot, 'README.md'), '# product\n');
  // In the tree: every worktree checks it out, and git reads it from there.
  writeFileSync(path.join(repoRoot, '.gitattributes'), ATTRIBUTES);
  setupGit(repoRoot, 'add', '.');
  // A root commit of its own, as makeRepo's (git-fixture.ts).
  setupGit(repoRoot, 'commit', '-q', '-m', `initial (${path.basename(dir)})`);
  const worktrees: { path: string; branch: string }[] = [];
  for (let i = 0; i < count; i++) {
    const wt = path.join(dir, `wt-${i}`);
    setupGit(repoRoot, 'worktree', 'add', '-q', '-b', `wt/${i}`, wt);
    worktrees.push({ path: wt, branch: `wt/${i}` });
  }

  const program = (kind: string, behaviour: string): string => {
    const file = path.join(bin, kind);
    writeFileSync(
      file,
      `#!/bin/sh\n# ${kind}: planted by test/support/hostile-repo.ts\nif [ "\${HOSTILE_AGENT-}" != 1 ]; then\n  { printf '=== %s %s\\n' '${kind}' "$*"; env | sort; printf '=== end\\n'; } >> '${markerFile}'\nfi\n${behaviour}\n`,
    );
    chmodSync(file, 0o755);
    return file;
  };
  const hook = (into: string, name: string, tag: string) => {
    const from = program(`${tag}-${name}`, BEHAVIOUR.hook);
    writeFileSync(path.join(into, name), readFileSync(from));
    chmodSync(path.join(into, name), 0o755);
  };
  const common = path.join(repoRoot, '.git');
  for (const name of HOOK_NAMES) {
    hook(hooks, name, 'hooksPath');
    hook(path.join(common, 'hooks'), name, 'dotgit-hook');
  }

  const config = (file: string, key: string, value: string) => setupGit(repoRoot, 'config', '--file', file, '--add', key, value);
  const shared = path.join(common, 'config');
  const drivers = (file: string, tag: string, names: string[]) => {
    for (const n of names) {
      config(file, `filter.${n}.clean`, program(`${tag}-filter-${n}-clean`, BEHAVIOUR.passThrough));
      config(file, `filter.${n}.smudge`, program(`${tag}-filter-${n}-smudge`, BEHAVIOUR.passThrough));
      config(file, `diff.${n}.textconv`, program(`${tag}-diff-${n}-textconv`, BEHAVIOUR.textconv));
      config(file, `diff.${n}.command`, program(`${tag}-diff-${n}-command`, BEHAVIOUR.silent));
    }
  };
  const programs = (file: string, tag: string) => {
    config(file, 'core.fsmonitor', program(`${tag}-core.fsmonitor`, BEHAVIOUR.fail));
    config(file, 'core.pager', program(`${tag}-core.pager`, BEHAVIOUR.passThrough));
    config(file, 'core.editor', program(`${tag}-core.editor`, BEHAVIOUR.silent));
    config(file, 'sequence.editor', program(`${tag}-sequence.editor`, BEHAVIOUR.silent));
    config(file, 'core.sshCommand', program(`${tag}-core.sshCommand`, BEHAVIOUR.fail));
    config(file, 'core.askPass', program(`${tag}-core.askPass`, BEHAVIOUR.fail));
    config(file, 'credential.helper', program(`${tag}-credential.helper`, BEHAVIOUR.fail));
    config(file, 'diff.external', program(`${tag}-diff.external`, BEHAVIOUR.silent));
    config(file, 'gpg.program', program(`${tag}-gpg.program`, BEHAVIOUR.gpg));
    config(file, 'commit.gpgSign', 'true');
    config(file, 'log.showSignature', 'true');
  };

  // Shared config, an include of it, and each worktree's own config.
  config(shared, 'extensions.worktreeConfig', 'true');
  config(shared, 'core.hooksPath', hooks);
  programs(shared, 'config');
  drivers(shared, 'config', ['evil']);
  config(shared, 'filter.evilproc.process', program('config-filter-evilproc-process', BEHAVIOUR.process));
  const included = path.join(dir, 'included.gitconfig');
  writeFileSync(included, '');
  programs(included, 'include');
  drivers(included, 'include', ['evilinc']);
  config(shared, 'include.path', included);
  for (let i = 0; i < count; i++) {
    const worktreeConfig = path.join(common, 'worktrees', `wt-${i}`, 'config.worktree');
    config(worktreeConfig, 'core.fsmonitor', program(`worktree-${i}-core.fsmonitor`, BEHAVIOUR.fail));
    config(worktreeConfig, 'diff.external', program(`worktree-${i}-diff.external`, BEHAVIOUR.silent));
  }
  // Attributes from every place git reads them.
  writeFileSync(path.join(common, 'info', 'attributes'), ATTRIBUTES);
  const attributesFile = path.join(dir, 'attributes');
  writeFileSync(attributesFile, ATTRIBUTES);
  config(shared, 'core.attributesFile', attributesFile);

  // A ~/.gitconfig-style global file (through an include) and a system file, for GIT_CONFIG_GLOBAL / GIT_CONFIG_SYSTEM.
  const globalFile = path.join(dir, 'global.gitconfig');
  const globalInclude = path.join(dir, 'global-included.gitconfig');
  writeFileSync(globalInclude, '');
  programs(globalInclude, 'global');
  drivers(globalInclude, 'global', ['evilglobal']);
  writeFileSync(globalFile, '');
  config(globalFile, 'include.path', globalInclude);
  const systemFile = path.join(dir, 'system.gitconfig');
  writeFileSync(systemFile, '');
  programs(systemFile, 'system');
  drivers(systemFile, 'system', ['evilsystem']);

  const hostileEnv: Record<string, string> = {
    GIT_CONFIG_GLOBAL: globalFile,
    GIT_CONFIG_SYSTEM: systemFile,
    GIT_EXTERNAL_DIFF: program('env-GIT_EXTERNAL_DIFF', BEHAVIOUR.silent),
    GIT_PAGER: program('env-GIT_PAGER', BEHAVIOUR.passThrough),
    PAGER: program('env-PAGER', BEHAVIOUR.passThrough),
    GIT_EDITOR: program('env-GIT_EDITOR', BEHAVIOUR.silent),
    GIT_SEQUENCE_EDITOR: program('env-GIT_SEQUENCE_EDITOR', BEHAVIOUR.silent),
    GIT_SSH_COMMAND: program('env-GIT_SSH_COMMAND', BEHAVIOUR.fail),
    GIT_SSH: program('env-GIT_SSH', BEHAVIOUR.fail),
    GIT_ASKPASS: program('env-GIT_ASKPASS', BEHAVIOUR.fail),
    SSH_ASKPASS: program('env-SSH_ASKPASS', BEHAVIOUR.fail),
    // Secrets the service process holds: a program that ran must not have seen them.
    OD_HOSTILE_CANARY: 'od-hostile-canary-secret',
  };

  const agentEnv = (session: string | null): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = { ...process.env, ...hostileEnv, ...IDENTITY, HOSTILE_AGENT: '1' };
    delete env.GIT_CONFIG_NOSYSTEM;
    delete env.OVERDECK_EPOCH;
    if (session === null) delete env.OVERDECK_EXECUTION_SESSION_ID;
    else env.OVERDECK_EXECUTION_SESSION_ID = session;
    return env;
  };
  // An agent's git carries its tenure secret in the worktree it runs in (test/support/tenure-env.ts).
  const agentEnvIn = (cwd: string, session: string | null): NodeJS.ProcessEnv => withTenureSecret(cwd, agentEnv(session));

  const raw = () => (existsSync(markerFile) ? readFileSync(markerFile, 'utf8') : '');
  return {
    dir,
    repoRoot,
    worktrees,
    markerFile,
    hostileEnv,
    raw,
    marks() {
      const out: string[] = [];
      for (const block of raw().split('=== end\n')) {
        const head = /^=== (\S+)/.exec(block);
        if (!head) continue;
        const secrets = ['DATABASE_URL', 'OD_TEST_DATABASE_URL', 'OD_HOSTILE_CANARY', 'OD_TOKEN'].filter((k) => new RegExp(`^${k}=`, 'm').test(block));
        out.push(`${head[1]}${secrets.length > 0 ? ` (saw ${secrets.join(', ')})` : ''}`);
      }
      return out;
    },
    clear: () => rmSync(markerFile, { force: true }),
    agentGit: (cwd, session, ...args) =>
      execFileSync('git', args, { cwd, env: agentEnvIn(cwd, session), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim(),
    agentGitStatus(cwd, session, ...args) {
      try {
        execFileSync('git', args, { cwd, env: agentEnvIn(cwd, session), stdio: ['ignore', 'pipe', 'pipe'] });
        return 0;
      } catch (err) {
        return (err as { status?: number }).status ?? -1;
      }
    },
  };
}
