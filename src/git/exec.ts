import { execFile } from 'node:child_process';
import { GitSideError } from './errors';
import { realGit } from './real-git';
import { safeDirectoryFor } from './safe-directory';
import { type GitEnvExtras, serviceGitArgs, serviceGitEnv } from './safe-env';
import { gitSpawner, type SpawnedResult } from './spawner';

export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
}

export interface GitOptions {
  cwd: string;
  /** Per-call variables (e.g. GIT_INDEX_FILE for a private index); only the names safe-env.ts allows. */
  env?: GitEnvExtras;
  /** Exit codes that are answers rather than failures (e.g. 1 = "no such key" for git config). */
  okCodes?: readonly number[];
  /** Aborting kills the git process (SIGTERM) and rejects with the signal's reason, e.g. an activity's cancellation. */
  signal?: AbortSignal;
  /** Written to git's stdin, which is then closed (without it stdin stays open and unwritten). */
  input?: string;
}

/**
 * Variables that would silently point git at another repository, index or config. The worker may
 * itself run under a git hook or inside another repository, so none of them may leak into our calls.
 */
const REDIRECTING_VARS = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_COMMON_DIR',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
  'GIT_CONFIG',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
];

const MAX_BUFFER = 64 * 1024 * 1024;

/**
 * The user's own environment minus what would redirect git, for what runs in the user's (agent's)
 * own shell on purpose and must behave as their own git does: userGit below, the guard rule of
 * `od-worktree guard` and `snapshot` (guard.ts guardCheck: the hooks read the user's config, so
 * must the check), and tests driving git as an agent. Never for service git: see git() below.
 * (`od-worktree exec` / `shell-init` hand the user's environment to the user's own command, not to git.)
 */
export function cleanGitEnv(extra: Readonly<Record<string, string | undefined>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of REDIRECTING_VARS) delete env[name];
  for (const name of Object.keys(env)) if (name.startsWith('GIT_CONFIG_KEY_') || name.startsWith('GIT_CONFIG_VALUE_')) delete env[name];
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

/**
 * git as every service process runs it (worker, host agent, API, the CLI's service-side commands):
 * the allow-listed environment and the overrides of safe-env.ts, so nothing the repository or an
 * agent controls is executed and none of our secrets reach git.
 */
export async function git(args: readonly string[], opts: GitOptions): Promise<GitResult> {
  const argv = serviceGitArgs(args, await safeDirectoryFor(opts.cwd, opts.env));
  return answerOf(args, opts, await spawnGit(argv, serviceGitEnv(opts.env), opts));
}

/**
 * git as the user's own shell would run it (their environment and config, their hooks path), for
 * the few reads of agent-side CLI commands that must see exactly what the user's git sees: the
 * guard's strict flag and the hooks directory in effect (install-hooks). Reads only: nothing here
 * may write, or run anything git could hand to a hook, filter or diff driver.
 */
export async function userGit(args: readonly string[], opts: Omit<GitOptions, 'env'>): Promise<GitResult> {
  return answerOf(args, opts, await spawnGit([...args], cleanGitEnv(), opts));
}

async function spawnGit(argv: string[], env: NodeJS.ProcessEnv, opts: GitOptions): Promise<SpawnedResult> {
  const spawner = gitSpawner();
  if (spawner !== null) {
    // Through the workers' helper process (src/git/spawner.ts), answered exactly as a direct run.
    try {
      return await spawner.run(argv, {
        cwd: opts.cwd,
        env,
        maxBuffer: MAX_BUFFER,
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.input !== undefined ? { input: opts.input } : {}),
      });
    } catch (err) {
      throw new GitSideError('git_failed', `could not run git (${(err as Error).message})`);
    }
  }
  return new Promise<SpawnedResult>((resolve) => {
    const child = execFile(
      realGit(env.PATH),
      argv,
      { cwd: opts.cwd, env, maxBuffer: MAX_BUFFER, encoding: 'utf8', ...(opts.signal ? { signal: opts.signal } : {}) },
      (err, stdout, stderr) =>
        resolve({
          stdout,
          stderr,
          exit: err === null ? 0 : typeof err.code === 'number' ? err.code : null,
          errno: err !== null && typeof err.code === 'string' ? err.code : null,
        }),
    );
    if (opts.input !== undefined) {
      // git may exit before reading all of it (an error): the answer comes from its exit status.
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(opts.input);
    }
  });
}

/** What a finished git run means to the caller: its output, an answer among okCodes, or a refusal. */
function answerOf(args: readonly string[], opts: GitOptions, r: SpawnedResult): GitResult {
  if (r.exit !== 0 && opts.signal?.aborted === true) {
    const reason: unknown = opts.signal.reason;
    throw reason instanceof Error ? reason : new GitSideError('git_failed', 'git was cancelled');
  }
  const code = r.exit ?? -1;
  if (code === 0 || (opts.okCodes ?? []).includes(code)) return { stdout: r.stdout, stderr: r.stderr, code };
  if (r.errno !== null) throw new GitSideError('git_failed', `could not run git (${r.errno})`);
  // The first stderr line says what failed; git's messages may quote paths, which is fine for
  // local diagnostics but callers exporting errors should use the code.
  const first = r.stderr.split('\n').find((l) => l.trim() !== '') ?? 'no message';
  throw new GitSideError('git_failed', `git ${args[0] ?? ''} exited ${code}: ${first.slice(0, 200)}`);
}

/** What gitBytes answers: stdout as bytes (blob contents, `-z` listings of any path). */
export interface GitBytesResult {
  stdout: Buffer;
  stderr: string;
  code: number;
}

/**
 * git() for output that is bytes rather than text: blob contents and path listings that must not
 * go through UTF-8 (restore.ts). The same arguments, environment and refusals as git(); always
 * spawned directly (the workers' helper answers text), so only for the CLI and short-lived callers.
 */
export async function gitBytes(args: readonly string[], opts: GitOptions & { maxBuffer?: number }): Promise<GitBytesResult> {
  const argv = serviceGitArgs(args, await safeDirectoryFor(opts.cwd, opts.env));
  const env = serviceGitEnv(opts.env);
  const r = await new Promise<{ stdout: Buffer; stderr: string; exit: number | null; errno: string | null }>((resolve) => {
    const child = execFile(
      realGit(env.PATH),
      argv,
      { cwd: opts.cwd, env, maxBuffer: opts.maxBuffer ?? MAX_BUFFER, encoding: 'buffer', ...(opts.signal ? { signal: opts.signal } : {}) },
      (err, stdout, stderr) =>
        resolve({
          stdout,
          stderr: stderr.toString('utf8'),
          exit: err === null ? 0 : typeof err.code === 'number' ? err.code : null,
          errno: err !== null && typeof err.code === 'string' ? err.code : null,
        }),
    );
    if (opts.input !== undefined) {
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(opts.input);
    }
  });
  const text = answerOf(args, opts, { stdout: '', stderr: r.stderr, exit: r.exit, errno: r.errno });
  return { stdout: r.stdout, stderr: text.stderr, code: text.code };
}

let versionCheck: Promise<void> | undefined;

/** worktreeConfig (per-worktree config) arrived in git 2.20; without it the projection would leak into shared config. */
export function requireWorktreeConfigSupport(cwd: string): Promise<void> {
  versionCheck ??= git(['version'], { cwd }).then(({ stdout }) => {
    const m = /(\d+)\.(\d+)/.exec(stdout);
    if (m === null) return; // unknown vendor format: the extension probe below still fails loudly
    const major = Number(m[1]);
    const minor = Number(m[2]);
    if (major < 2 || (major === 2 && minor < 20)) {
      throw new GitSideError('git_too_old', `git ${major}.${minor} lacks extensions.worktreeConfig (need >= 2.20)`);
    }
  });
  versionCheck.catch(() => {
    versionCheck = undefined;
  });
  return versionCheck;
}
