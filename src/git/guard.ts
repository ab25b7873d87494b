import { execFile } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeFileAtomic } from './atomic';
import { GitSideError } from './errors';
import { cleanGitEnv, git, userGit } from './exec';
import { identifyWorktree } from './repo';
import { guardReasonOf, type GuardReason } from '../domain/git-rules';

/**
 * Hooks always installed with the ownership check. reference-transaction ("prepared") refuses any
 * move of the worktree's HEAD or branch: commits (also --no-verify), reset, checkout -B, merge,
 * cherry-pick. pre-rebase refuses before rebase touches any file. post-checkout cannot refuse.
 */
export const GUARDED_HOOKS = ['pre-push', 'pre-rebase', 'reference-transaction'] as const;

export const HOOKS_DIR_NAME = 'overdeck-hooks';
const GUARD_SCRIPT = 'overdeck-guard.sh';
const GATE_PROGRAM = 'bin/git-gate/od-gate.cjs';
const DISPATCHER = 'overdeck-hook.sh';
const CONF = 'overdeck-hooks.conf';

export type { GuardReason } from '../domain/git-rules';

export interface GuardResult {
  allowed: boolean;
  reason?: GuardReason;
  message?: string;
}

let sourceDir: string | undefined;

/** The repository's hooks/ directory, found from here both under src/ (tsx, jest) and dist/src/. */
export function hookSourceDir(): string {
  if (sourceDir !== undefined) return sourceDir;
  for (let dir = __dirname, i = 0; i < 5; i++, dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'hooks');
    if (existsSync(path.join(candidate, GUARD_SCRIPT))) {
      sourceDir = candidate;
      return candidate;
    }
  }
  throw new GitSideError('guard_script_missing', `hooks/${GUARD_SCRIPT} not found next to the package`);
}

let gateFile: string | undefined;

/**
 * The gate program's loader (bin/git-gate/od-gate.cjs), found from here like hooks/: the hooks
 * start it for everything their shell fast path does not accept, and `od-worktree guard` runs
 * the rule through it, so that the rule is one implementation (src/gate/guard.ts).
 */
export function gateProgram(): string {
  if (gateFile !== undefined) return gateFile;
  for (let dir = __dirname, i = 0; i < 5; i++, dir = path.dirname(dir)) {
    const candidate = path.join(dir, GATE_PROGRAM);
    if (existsSync(candidate)) {
      gateFile = candidate;
      return candidate;
    }
  }
  throw new GitSideError('guard_script_missing', `${GATE_PROGRAM} not found next to the package`);
}

/** The caller's variables the rule reads (src/gate/guard.ts): its claim, and its proof. */
export const GUARD_ENV = ['OVERDECK_EXECUTION_SESSION_ID', 'OVERDECK_EPOCH', 'OVERDECK_TENURE_SECRET'] as const;

/**
 * The hook rule evaluated for `od-worktree guard`: the gate program's `guard`, the rule the hooks
 * hand every refusal to, so the rule exists once; its exit status is the refusal's status of
 * GUARD_REFUSALS (src/domain/git-rules.ts). Only the GUARD_ENV variables are taken from `env`.
 */
export function guardCheck(worktreePath: string, env: Readonly<Record<string, string | undefined>>): Promise<GuardResult> {
  const gate = gateProgram();
  // The user's environment, not the service's allow-list: `od-worktree guard` and `snapshot` run in
  // the agent's own shell, and the rule must read the config the hooks read (a global strict flag).
  const childEnv = cleanGitEnv();
  for (const name of GUARD_ENV) {
    delete childEnv[name];
    const value = env[name];
    if (value !== undefined) childEnv[name] = value;
  }
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [gate, 'guard'], { cwd: path.resolve(worktreePath), env: childEnv, encoding: 'utf8' }, (err, _stdout, stderr) => {
      if (err === null) {
        resolve({ allowed: true });
        return;
      }
      const reason = typeof err.code === 'number' ? guardReasonOf(err.code) : undefined;
      if (reason === undefined) {
        reject(new GitSideError('git_failed', `guard program failed: ${stderr.split('\n')[0] ?? String(err.code)}`.slice(0, 240)));
        return;
      }
      resolve({ allowed: false, reason, message: stderr.trim() });
    });
  });
}

export interface InstallHooksOptions {
  /**
   * Also check in pre-commit, i.e. before the message editor opens. reference-transaction already
   * refuses the commit itself, so this only moves the refusal earlier, at the price of one more
   * process per commit (measured ~+35% of an empty commit). pre-commit is checked anyway when a
   * previous pre-commit hook exists, since that process runs regardless.
   */
  earlyCommitCheck?: boolean;
}

export interface InstalledHooks {
  hooksPath: string;
  /** Hooks directory in effect before installation, chained to by every installed hook (as git would resolve it). */
  previousHooksPath: string;
  hooks: string[];
}

/**
 * Installs the guard for a whole repository (hooks are shared by its worktrees): our hooks go to
 * `<common git dir>/overdeck-hooks/` and core.hooksPath points there. Existing hooks are never
 * replaced or deleted: each installed hook chains to the previous directory's hook of the same name,
 * and every executable hook found there gets a pass-through so it keeps running. Only names that
 * exist get one, because the mere presence of some hooks (push-to-checkout, proc-receive...)
 * changes what git does. Re-run after adding a hook to the previous directory. Idempotent.
 */
export async function installHooks(repoOrWorktreePath: string, opts: InstallHooksOptions = {}): Promise<InstalledHooks> {
  const { worktreePath: top, commonDir } = await identifyWorktree(repoOrWorktreePath);
  const cwd = top;
  const ourDir = path.join(commonDir, HOOKS_DIR_NAME);
  await fs.mkdir(ourDir, { recursive: true });

  const previous = await previousHooksPath(cwd, commonDir, ourDir);
  // A relative core.hooksPath is relative to each worktree's top (where git runs hooks): keep it
  // verbatim for the hooks, resolve it against this worktree only to list what is there.
  const previousHere = path.isAbsolute(previous) ? previous : path.resolve(top, previous);
  const passThrough = await executableHooks(previousHere);
  const names = [...new Set<string>([...GUARDED_HOOKS, ...(opts.earlyCommitCheck === true ? ['pre-commit'] : []), ...passThrough])].sort();

  const src = hookSourceDir();
  const guard = await fs.readFile(path.join(src, GUARD_SCRIPT), 'utf8');
  const dispatcher = await fs.readFile(path.join(src, DISPATCHER), 'utf8');
  await writeFileAtomic(path.join(ourDir, GUARD_SCRIPT), guard, 0o644);
  // The previous hooks directory, chained to by every hook here; the node and the gate program the
  // hooks start for what their shell does not accept (absolute: a hook runs with the caller's PATH).
  const conf = [
    '# written by od-worktree install-hooks',
    `OD_PREVIOUS_HOOKS=${shQuote(previous)}`,
    `OD_NODE=${shQuote(process.execPath)}`,
    `OD_GATE=${shQuote(gateProgram())}`,
  ];
  await writeFileAtomic(path.join(ourDir, CONF), `${conf.join('\n')}\n`, 0o644);
  for (const name of names) {
    const file = path.join(ourDir, name);
    await writeFileAtomic(file, dispatcher, 0o755);
    await fs.chmod(file, 0o755); // the umask may have narrowed the mode given to open()
  }
  // The directory is ours: drop hooks of an earlier install that are no longer wanted.
  for (const stale of await fs.readdir(ourDir)) {
    if (stale !== GUARD_SCRIPT && stale !== CONF && !names.includes(stale)) await fs.rm(path.join(ourDir, stale), { force: true });
  }

  await git(['config', '--file', path.join(commonDir, 'config'), 'core.hooksPath', ourDir], { cwd });
  // Strict is no longer a mode (unidentified callers are refused in every owned worktree): the
  // flag of earlier installs means nothing, so it does not stay to mislead.
  await git(['config', '--file', path.join(commonDir, 'config'), '--unset', 'overdeck.guard.strict'], { cwd, okCodes: [5] });
  return { hooksPath: ourDir, previousHooksPath: previous, hooks: names };
}

/**
 * The hooks directory git used before us. When core.hooksPath already points at our directory
 * (re-install), the recorded one is kept: recording ourselves would make every hook call itself.
 */
async function previousHooksPath(cwd: string, commonDir: string, ourDir: string): Promise<string> {
  // What the user's git resolves (their global config included), not the service's hooks-off view.
  const res = await userGit(['config', '--get', 'core.hooksPath'], { cwd, okCodes: [1] });
  let configured = res.code === 0 ? res.stdout.trim() : '';
  if (configured.startsWith('~/')) configured = path.join(os.homedir(), configured.slice(2));
  const pointsAtUs = configured !== '' && path.isAbsolute(configured) && (await realpathOr(configured)) === ourDir;
  if (pointsAtUs) return (await recordedPrevious(ourDir)) ?? path.join(commonDir, 'hooks');
  return configured !== '' ? configured : path.join(commonDir, 'hooks');
}

async function recordedPrevious(ourDir: string): Promise<string | null> {
  try {
    const conf = await fs.readFile(path.join(ourDir, CONF), 'utf8');
    const m = /^OD_PREVIOUS_HOOKS=(.*)$/m.exec(conf);
    return m?.[1] === undefined ? null : shUnquote(m[1]);
  } catch {
    return null;
  }
}

async function executableHooks(dir: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = await fs.readdir(dir);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of entries) {
    if (!/^[a-z][a-z0-9-]*$/.test(name)) continue; // skips *.sample and editor backups
    try {
      const st = await fs.stat(path.join(dir, name));
      if (st.isFile() && (st.mode & 0o111) !== 0) out.push(name);
    } catch {
      // vanished or dangling: nothing to chain to
    }
  }
  return out;
}

async function realpathOr(p: string): Promise<string> {
  try {
    return await fs.realpath(p);
  } catch {
    return path.resolve(p);
  }
}

function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function shUnquote(s: string): string {
  return s.replace(/^'/, '').replace(/'$/, '').replace(/'\\''/g, "'");
}
