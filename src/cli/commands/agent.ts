import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import type { Command } from 'commander';
import { GitSideError } from '../../git/errors';
import { git } from '../../git/exec';
import { EXIT } from '../exit-codes';

/**
 * Agent-side commands (docs/agent-gate.md): `shell-init` and `exec` put the git gate
 * (bin/git-gate/git) first on PATH for an agent session, so destructive git is judged before it
 * touches the files; `snapshot` saves the owner's uncommitted work under the ownership's WIP refs.
 * None of them needs the service, but `shell-init` and `exec` with `--ownership`, which fetch the
 * tenure secret through the API (OD_API_URL, OD_TOKEN) when the environment has none.
 */

const snapshotting = () => require('../../git/snapshot') as typeof import('../../git/snapshot');
const config = () => require('../../config') as typeof import('../../config');
const identity = () => require('../../domain/identity') as typeof import('../../domain/identity');

const GATE = path.join('bin', 'git-gate');

let gate: string | undefined;

/** The directory of the gate's `git`, found from here under src/ (tsx, jest) and dist/src/ alike. */
export function gateDir(): string {
  if (gate !== undefined) return gate;
  for (let dir = __dirname, i = 0; i < 6; i++, dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, GATE, 'git'))) {
      gate = path.join(dir, GATE);
      return gate;
    }
  }
  throw new GitSideError('guard_script_missing', `${GATE}/git not found next to the package`);
}

export interface AgentEnvOptions {
  session?: string;
  epoch?: string;
  ownership?: string;
}

/** What the command's environment gets: the session's identity, and its tenure secret when fetched. */
export interface AgentEnv {
  session?: string;
  epoch?: string;
  secret?: string;
}

function checkedEnv(o: AgentEnvOptions): { session?: string; epoch?: string } {
  if (o.session !== undefined && !identity().IdString.safeParse(o.session).success)
    throw new GitSideError('invalid_argument', '--session is not a valid identifier');
  if (o.epoch !== undefined && !/^\d+$/.test(o.epoch)) throw new GitSideError('invalid_argument', '--epoch must be a non-negative integer');
  return { ...(o.session !== undefined ? { session: o.session } : {}), ...(o.epoch !== undefined ? { epoch: o.epoch } : {}) };
}

/** PATH with the gate first, once: entries naming the gate already are dropped, the rest keep their order. */
export function gatedPath(current: string | undefined, dir: string = gateDir()): string {
  const rest = (current ?? '').split(path.delimiter).filter((p) => p !== '' && path.resolve(p) !== dir);
  return [dir, ...rest].join(path.delimiter);
}

/** The environment `exec` gives its command. */
export function gatedEnv(base: NodeJS.ProcessEnv, o: AgentEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, PATH: gatedPath(base.PATH) };
  if (o.session !== undefined) env.OVERDECK_EXECUTION_SESSION_ID = o.session;
  if (o.epoch !== undefined) env.OVERDECK_EPOCH = o.epoch;
  if (o.secret !== undefined) env.OVERDECK_TENURE_SECRET = o.secret;
  return env;
}

/** A refusal of the service (or its absence) while fetching the tenure: said as the service commands say it. */
export class TenureFetchFailed extends Error {
  constructor(
    readonly exit: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'TenureFetchFailed';
  }
}

/**
 * The identity the command runs with. With `--ownership`, the current tenure's secret comes from
 * the service (POST /v1/ownerships/{id}/tenure, as the session given): the secret is never on
 * disk, so there is nothing to read it from locally. A secret already in the environment passes
 * through unchanged (a shell inside `exec`, an agent that got it from its bind), and nothing is asked.
 */
export async function agentEnv(o: AgentEnvOptions, base: NodeJS.ProcessEnv = process.env): Promise<AgentEnv> {
  const checked = checkedEnv(o);
  if (o.ownership === undefined || base.OVERDECK_TENURE_SECRET) return checked;
  if (!identity().OwnershipIdSchema.safeParse(o.ownership).success)
    throw new GitSideError('invalid_argument', '--ownership must be an ownership id (own_<ULID>)');
  const session = checked.session ?? base.OVERDECK_EXECUTION_SESSION_ID;
  if (!session || !identity().IdString.safeParse(session).success)
    throw new GitSideError('invalid_argument', '--ownership needs --session (or OVERDECK_EXECUTION_SESSION_ID): the session that holds it');
  const { apiClient, apiEnv } = require('../api-env') as typeof import('../api-env');
  const { cliFailureOf } = require('../api-failure') as typeof import('../api-failure');
  let tenure;
  try {
    tenure = await apiClient(apiEnv(base)).tenure(o.ownership, { executionSessionId: session });
  } catch (err) {
    const failure = cliFailureOf(err, base);
    if (failure) throw new TenureFetchFailed(failure.exit, failure.code, failure.message);
    throw err;
  }
  // An epoch named beside it must be the current one: a command run as an older tenure would be refused anyway.
  if (checked.epoch !== undefined && checked.epoch !== String(tenure.epoch)) {
    throw new TenureFetchFailed(EXIT.refused, 'stale_epoch', `stale_epoch: --epoch ${checked.epoch} is not the current tenure's (epoch ${tenure.epoch})`);
  }
  return { session: tenure.executionSessionId, epoch: String(tenure.epoch), secret: tenure.secret };
}

export const SHELLS = ['sh', 'bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

const posixQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
const fishQuote = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/**
 * What `eval "$(od-worktree shell-init)"` runs: the gate prepended to PATH unless it is there
 * already (so evaluating it twice changes nothing), and the session's identity when given.
 */
export function shellInit(shell: Shell, dir: string, o: AgentEnv): string {
  const lines: string[] = [];
  if (shell === 'fish') {
    lines.push(`contains -- ${fishQuote(dir)} $PATH; or set -gx PATH ${fishQuote(dir)} $PATH`);
    if (o.session !== undefined) lines.push(`set -gx OVERDECK_EXECUTION_SESSION_ID ${fishQuote(o.session)}`);
    if (o.epoch !== undefined) lines.push(`set -gx OVERDECK_EPOCH ${fishQuote(o.epoch)}`);
    if (o.secret !== undefined) lines.push(`set -gx OVERDECK_TENURE_SECRET ${fishQuote(o.secret)}`);
  } else {
    lines.push(`case ":$PATH:" in *:${posixQuote(dir)}:*) ;; *) PATH=${posixQuote(dir)}:"$PATH" ;; esac; export PATH`);
    if (o.session !== undefined) lines.push(`export OVERDECK_EXECUTION_SESSION_ID=${posixQuote(o.session)}`);
    if (o.epoch !== undefined) lines.push(`export OVERDECK_EPOCH=${posixQuote(o.epoch)}`);
    if (o.secret !== undefined) lines.push(`export OVERDECK_TENURE_SECRET=${posixQuote(o.secret)}`);
    // zsh and bash remember where a command was found: forget any git looked up before the gate.
    lines.push('hash -r 2>/dev/null || :');
  }
  return `${lines.join('\n')}\n`;
}

function shellOf(name: string | undefined): Shell {
  const base = path.basename(name ?? '');
  return (SHELLS as readonly string[]).includes(base) ? (base as Shell) : 'sh';
}

function fail(code: number, message: string, json: boolean, extra: Record<string, unknown> = {}): void {
  if (json) process.stdout.write(`${JSON.stringify({ ok: false, error: message, ...extra }, null, 2)}\n`);
  process.stderr.write(`od-worktree: ${message}\n`);
  process.exitCode = code;
}

function usageOr(err: unknown, json: boolean): void {
  if (err instanceof GitSideError && (err.code === 'not_a_worktree' || err.code === 'invalid_argument')) {
    fail(EXIT.usage, err.message, json);
    return;
  }
  if (err instanceof TenureFetchFailed) {
    fail(err.exit, err.message, json, { code: err.code });
    return;
  }
  throw err;
}

/** Signals a terminal or supervisor sends `exec` itself; SIGINT reaches the command from the terminal directly. */
const FORWARDED: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];

/** Runs the command under the gate and ends this process the way the command ended (status or signal). */
export function runGated(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: 'inherit', env });
    const forward = (sig: NodeJS.Signals) => () => void child.kill(sig);
    const handlers = FORWARDED.map((sig) => [sig, forward(sig)] as const);
    for (const [sig, h] of handlers) process.on(sig, h);
    // The command gets Ctrl-C from the terminal's process group; this process waits for it.
    const ignoreInt = () => undefined;
    process.on('SIGINT', ignoreInt);
    const done = () => {
      for (const [sig, h] of handlers) process.off(sig, h);
      process.off('SIGINT', ignoreInt);
    };
    child.on('error', (err: NodeJS.ErrnoException) => {
      done();
      process.stderr.write(`od-worktree: exec: ${cmd}: ${err.code === 'ENOENT' ? 'command not found' : err.message}\n`);
      process.exitCode = err.code === 'ENOENT' ? 127 : 126;
      resolve();
    });
    child.on('exit', (code, signal) => {
      done();
      if (signal !== null) {
        // Die of the same signal, so a caller sees what a direct run would have shown.
        process.kill(process.pid, signal);
        process.exitCode = 128 + (os.constants.signals[signal as keyof typeof os.constants.signals] as number);
      } else process.exitCode = code ?? 0;
      resolve();
    });
  });
}

export function registerAgentCommands(program: Command): void {
  program
    .command('shell-init')
    .description('print the environment that puts the git gate first on PATH: eval "$(od-worktree shell-init)" (docs/agent-gate.md)')
    .option('--shell <shell>', `syntax to print: ${SHELLS.join(', ')} (default: from $SHELL)`)
    .option('--session <id>', 'also export OVERDECK_EXECUTION_SESSION_ID')
    .option('--epoch <n>', 'also export OVERDECK_EPOCH')
    .option(
      '--ownership <id>',
      "with --session: also export the current tenure's OVERDECK_TENURE_SECRET and OVERDECK_EPOCH, fetched through the service (OD_TOKEN) unless already set",
    )
    .action(async (o: AgentEnvOptions & { shell?: string }) => {
      try {
        const shell = o.shell ?? shellOf(process.env.SHELL);
        if (!(SHELLS as readonly string[]).includes(shell)) throw new GitSideError('invalid_argument', `--shell must be one of ${SHELLS.join(', ')}`);
        process.stdout.write(shellInit(shell as Shell, gateDir(), await agentEnv(o)));
      } catch (err) {
        usageOr(err, false);
      }
    });

  program
    .command('exec')
    .description('run a command (an agent) with the git gate first on PATH: od-worktree exec [--session id] [--epoch n] [--ownership id] -- <command...>')
    .argument('<command...>', 'the command and its arguments, after --')
    .option('--session <id>', 'OVERDECK_EXECUTION_SESSION_ID for the command')
    .option('--epoch <n>', 'OVERDECK_EPOCH for the command')
    .option(
      '--ownership <id>',
      "with --session: the current tenure's OVERDECK_TENURE_SECRET and OVERDECK_EPOCH for the command, fetched through the service (OD_TOKEN) unless already set",
    )
    .action(async (argv: string[], o: AgentEnvOptions) => {
      let env: NodeJS.ProcessEnv;
      try {
        env = gatedEnv(process.env, await agentEnv(o));
      } catch (err) {
        usageOr(err, false);
        return;
      }
      const [cmd, ...args] = argv;
      await runGated(cmd!, args, env);
    });

  program
    .command('snapshot')
    .description(
      "save this worktree's uncommitted work (index, files, untracked) as a commit under the ownership's WIP refs, deduplicated by tree; the owner only, offline",
    )
    .option('--worktree <path>', 'worktree (default: the one containing the current directory)')
    .option(
      '--ignored [max]',
      'also keep ignored files (build outputs, local config the worktree was provisioned with), all of them when together at most max (default 64M; K, M, G suffixes), else none and the snapshot says so',
    )
    .option('--json', 'machine-readable output')
    .action(async (o: { worktree?: string; ignored?: string | boolean; json?: boolean }) => {
      const json = o.json === true;
      try {
        const ignoredMaxBytes = o.ignored === undefined || o.ignored === false ? undefined : byteSize(o.ignored === true ? '64M' : o.ignored);
        const start = path.resolve(o.worktree ?? process.cwd());
        const res = await git(['rev-parse', '--show-toplevel'], { cwd: start, okCodes: [128] }).catch(() => null);
        if (res === null || res.code !== 0 || res.stdout.trim() === '') throw new GitSideError('not_a_worktree', 'not inside a git worktree');
        const top = res.stdout.trim();
        const env = {
          OVERDECK_EXECUTION_SESSION_ID: process.env.OVERDECK_EXECUTION_SESSION_ID,
          OVERDECK_EPOCH: process.env.OVERDECK_EPOCH,
          OVERDECK_TENURE_SECRET: process.env.OVERDECK_TENURE_SECRET,
        };
        const out = await snapshotting().snapshotWorktree(top, {
          env,
          allowedRoots: config().loadConfig().allowedRoots,
          ...(ignoredMaxBytes !== undefined ? { ignoredMaxBytes } : {}),
        });
        switch (out.status) {
          case 'unowned':
            fail(EXIT.notFound, 'no live ownership holds this worktree: there is no WIP namespace to snapshot into', json, {
              worktree: top,
              status: out.status,
            });
            return;
          case 'refused':
            if (json)
              process.stdout.write(
                `${JSON.stringify({ ok: false, status: out.status, worktree: top, reason: out.guard.reason, message: out.guard.message }, null, 2)}\n`,
              );
            process.stderr.write(`${out.guard.message ?? 'od-worktree: refused'}\n`);
            process.exitCode = EXIT.refused;
            return;
          case 'clean': {
            const body = { ok: true, status: out.status, worktree: top, ownershipId: out.ownershipId, snapshot: null };
            process.stdout.write(json ? `${JSON.stringify(body, null, 2)}\n` : 'nothing to snapshot: the worktree matches HEAD\n');
            return;
          }
          case 'saved': {
            const s = out.snapshot;
            const body = {
              ok: true,
              status: out.status,
              worktree: top,
              ownershipId: out.ownershipId,
              snapshot: { ref: s.ref, sha: s.sha, tree: s.tree, deduplicated: !s.created },
            };
            process.stdout.write(
              json
                ? `${JSON.stringify(body, null, 2)}\n`
                : `${s.ref} ${s.sha.slice(0, 12)} (${s.created ? 'new' : 'the same content was already saved there'})\n`,
            );
            return;
          }
        }
      } catch (err) {
        usageOr(err, json);
      }
    });
}

/** `64M`, `512K`, `2G` or plain bytes: the bound on the ignored files a snapshot keeps. */
export function byteSize(text: string): number {
  const m = /^(\d{1,12})([KMG]?)$/i.exec(text.trim());
  if (!m) throw new GitSideError('invalid_argument', `--ignored: a size such as 64M, 512K or 2G (got ${JSON.stringify(text)})`);
  return Number(m[1]) * { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[m[2]!.toUpperCase() as '' | 'K' | 'M' | 'G'];
}
