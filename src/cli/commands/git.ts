import path from 'node:path';
import type { Command } from 'commander';
import type { Caller } from '../../contract/reconcile';
import type { OfflineClaimOutcome } from '../../git/provisional';
import type { ReconcilePort, ReconcileResult, ReconciliationEntry } from '../../reconcile';
import { ApiError, ApiUrlError } from '../../api/client';
import { cliFailureOf } from '../api-failure';
import { GitSideError } from '../../git/errors';
import { git } from '../../git/exec';
import { apiClient, apiEnv } from '../api-env';
import { EXIT } from '../exit-codes';

// Loaded by the command that needs them, not at start-up (src/cli/main.ts): zod, the git side and
// reconciliation cost start-up time every other command would pay.
const config = () => require('../../config') as typeof import('../../config');
const identity = () => require('../../domain/identity') as typeof import('../../domain/identity');
const guard = () => require('../../git/guard') as typeof import('../../git/guard');
const provisional = () => require('../../git/provisional') as typeof import('../../git/provisional');
const reconciliation = () => require('../../reconcile') as typeof import('../../reconcile');
const httpPort = () => require('../../reconcile/http-port') as typeof import('../../reconcile/http-port');
const seal = () => require('../../keys/message-seal') as typeof import('../../keys/message-seal');
const tenure = () => require('../../keys/tenure') as typeof import('../../keys/tenure');

/** An opened port and how to close it (connections must not keep the CLI alive). */
export interface OpenedPort {
  port: ReconcilePort;
  /** the token's principal, shown in the output */
  caller?: Caller;
  close(): Promise<void>;
}

export interface GitCommandDeps {
  /**
   * Opens the port `reconcile` talks to the service through. Default: the authenticated HTTP API
   * (OD_API_URL, OD_TOKEN), like every other command that writes. No CLI path reaches Temporal or
   * PostgreSQL directly: that port (reconcile/service-port.ts) is for the service host's own code.
   */
  openReconcilePort?: (opts: { onReconciled: (e: ReconciliationEntry) => void }) => Promise<OpenedPort>;
}

/** `claim` without --offline goes to the service: its commands install the handler (see setOnlineClaimHandler). */
export type OnlineClaimHandler = (opts: Record<string, unknown>, cmd: Command) => Promise<void>;
const onlineClaim = new WeakMap<Command, OnlineClaimHandler>();

/** For the service commands: one `claim` command, online unless --offline (commander refuses a second `claim`). */
export function setOnlineClaimHandler(program: Command, handler: OnlineClaimHandler): void {
  onlineClaim.set(program, handler);
}

function out(json: boolean, value: unknown, human: string): void {
  if (json) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  else if (human !== '') process.stdout.write(`${human}\n`);
}

function fail(code: number, message: string, json: boolean, extra: Record<string, unknown> = {}): void {
  if (json) process.stdout.write(`${JSON.stringify({ ok: false, error: message, ...extra }, null, 2)}\n`);
  process.stderr.write(`od-worktree: ${message}\n`);
  process.exitCode = code;
}

/**
 * The tenure hashes reconcile writes, when this process can read the service key (on the service's
 * host, as its user); elsewhere none, and reconcile keeps what is on disk (reconcile.ts keptTenureHash).
 */
function tenureHashesIfKeyed(cfg: {
  serviceKeyFile: string;
  dataDir: string;
}): ((t: import('../../domain/tenure').Tenure | import('../../domain/tenure').HoldTenure) => string) | undefined {
  let keyring;
  try {
    keyring = seal().readKeyringIfPresent(cfg);
  } catch {
    // An unreadable key file is no key: the same as none.
    return undefined;
  }
  if (keyring === null) return undefined;
  const keys = seal().keyringKeys(keyring);
  return (t) => tenure().anyTenureHashWords(keys, t);
}

/** The top of the worktree containing `p` (default: the current directory). */
async function worktreeTop(p: string | undefined): Promise<string> {
  const start = path.resolve(p ?? process.cwd());
  const res = await git(['rev-parse', '--show-toplevel'], { cwd: start, okCodes: [128] }).catch(() => null);
  if (res === null || res.code !== 0 || res.stdout.trim() === '') throw new GitSideError('not_a_worktree', 'not inside a git worktree');
  return res.stdout.trim();
}

/** Usage-type failures get EXIT.usage; anything else is rethrown for main's internal-error path. */
function usageOr(err: unknown, json: boolean): void {
  if (err instanceof GitSideError && (err.code === 'not_a_worktree' || err.code === 'invalid_argument')) {
    fail(EXIT.usage, err.message, json);
    return;
  }
  throw err;
}

function checkId(value: string | undefined, flag: string): string | undefined {
  if (value !== undefined && !identity().IdString.safeParse(value).success) throw new GitSideError('invalid_argument', `${flag} is not a valid identifier`);
  return value;
}

const CLAIM_EXIT: Readonly<Record<OfflineClaimOutcome['status'], number>> = {
  claimed: EXIT.ok,
  already_provisional: EXIT.ok,
  already_owned: EXIT.ok,
  refused: EXIT.refused,
  conflict: EXIT.conflict,
};

/** Exit status of a reconciliation: a difference left in place, or a lost provisional claim, is a conflict. */
export function reconcileExit(r: ReconcileResult): number {
  if (r.kind === 'conflict') return EXIT.conflict;
  if ((r.kind === 'stale' || r.kind === 'corrupt') && !r.repaired) return EXIT.conflict;
  return EXIT.ok;
}

function describe(r: ReconcileResult): string {
  const seq = (s: { seq: number } | null) => (s === null ? 'none' : String(s.seq));
  const parts = [`reconcile: ${r.kind}${r.reason ? ` (${r.reason})` : ''}`, `local seq ${seq(r.local)}`, `durable seq ${seq(r.durable)}`];
  if (r.durable?.executionSessionId) parts.push(`durable owner ${r.durable.executionSessionId}`);
  if (r.provisional) parts.push(`provisional claim ${r.provisional.idempotencyKey ?? ''} by ${r.provisional.executionSessionId}`);
  if (r.repaired) parts.push('repaired from the durable record');
  else if (r.kind === 'stale' || r.kind === 'corrupt' || r.kind === 'conflict')
    parts.push('left in place: run with --repair to rewrite it from the durable record');
  return parts.join('; ');
}

const WORKER_MISMATCH_HINT =
  'the provisional claim names another worker than the one OD_TOKEN acts for: nothing was bound; only the executor token of that worker can submit it (--repair drops the claim)';

/** The HTTP API as the token's principal; without a token nothing is asked and nothing written. */
async function defaultOpenPort(opts: Parameters<NonNullable<GitCommandDeps['openReconcilePort']>>[0]): Promise<OpenedPort> {
  const env = apiEnv();
  if (!env.token)
    throw new (reconciliation().ReconcileRefused)(
      'unauthenticated',
      'unauthenticated: reconcile writes through the ownership service and needs a token: set OD_TOKEN (the executor token of your worker)',
    );
  const { port, caller } = await httpPort().openHttpPort(apiClient(env), { onReconciled: opts.onReconciled });
  return { port, caller, close: async () => undefined };
}

/** A failure before or during reconciliation, with the documented exit code; anything else is rethrown. */
function reconcileFailure(err: unknown, json: boolean): void {
  const { ReconcileRefused, ReconcileUnavailable } = reconciliation();
  if (err instanceof ReconcileRefused)
    fail(EXIT.refused, err.message.includes('OD_TOKEN') ? err.message : `${err.message} (OD_TOKEN)`, json, { code: err.code });
  else if (err instanceof ReconcileUnavailable) fail(EXIT.unreachable, `the service is unreachable (${err.causeMessage})`, json, { code: 'unreachable' });
  else if (err instanceof ApiError || err instanceof ApiUrlError) {
    const f = cliFailureOf(err)!;
    fail(f.exit, f.message, json, { code: f.code });
  } else usageOr(err, json);
}

/** Git-side commands: guard, install-hooks, claim --offline, reconcile (src/git, src/reconcile). */
export function registerGitCommands(program: Command, deps: GitCommandDeps = {}): void {
  program
    .command('guard')
    .description('may this session mutate the worktree now? exit 0 allowed, 1 refused (the rule the hooks run)')
    .option('--worktree <path>', 'worktree to check (default: the one containing the current directory)')
    .option('--session <id>', 'execution session to check (default: $OVERDECK_EXECUTION_SESSION_ID)')
    .option('--epoch <n>', 'tenure epoch presented (default: $OVERDECK_EPOCH)')
    .option('--json', 'machine-readable output')
    .action(async (o: { worktree?: string; session?: string; epoch?: string; json?: boolean }) => {
      const json = o.json === true;
      try {
        const top = await worktreeTop(o.worktree);
        const env = {
          OVERDECK_EXECUTION_SESSION_ID: checkId(o.session, '--session') ?? process.env.OVERDECK_EXECUTION_SESSION_ID,
          OVERDECK_EPOCH: o.epoch ?? process.env.OVERDECK_EPOCH,
          // The proof comes from the environment only: an argument would show in every `ps`.
          OVERDECK_TENURE_SECRET: process.env.OVERDECK_TENURE_SECRET,
        };
        if (env.OVERDECK_EPOCH !== undefined && !/^\d+$/.test(env.OVERDECK_EPOCH))
          throw new GitSideError('invalid_argument', '--epoch must be a non-negative integer');
        const res = await guard().guardCheck(top, env);
        if (res.allowed) {
          out(json, { allowed: true, worktree: top }, '');
          return;
        }
        if (json) out(true, { allowed: false, worktree: top, reason: res.reason, message: res.message }, '');
        process.stderr.write(`${res.message ?? 'od-worktree: refused'}\n`);
        process.exitCode = EXIT.refused;
      } catch (err) {
        usageOr(err, json);
      }
    });

  program
    .command('install-hooks')
    .description('install the ownership guard hooks for the repository (all its worktrees); existing hooks keep running')
    .option('--worktree <path>', 'any worktree of the repository (default: the current directory)')
    .option('--early-commit-check', 'also check in pre-commit, before the message editor opens')
    .option('--json', 'machine-readable output')
    .action(async (o: { worktree?: string; earlyCommitCheck?: boolean; json?: boolean }) => {
      const json = o.json === true;
      try {
        const top = await worktreeTop(o.worktree);
        const res = await guard().installHooks(top, o.earlyCommitCheck ? { earlyCommitCheck: true } : {});
        // As the hooks will read it: the user's config, global included.
        out(json, res, `installed ${res.hooks.join(', ')} in ${res.hooksPath} (chaining to ${res.previousHooksPath})`);
      } catch (err) {
        usageOr(err, json);
      }
    });

  program
    .command('claim')
    .description('claim the worktree for a session; --offline writes a provisional local claim without the service (docs/git-projection.md, Offline claims)')
    .option('--offline', 'provisional, session-owned local projection; `reconcile` submits it once the service is back, bound as the worker of its OD_TOKEN')
    .option('--worktree <path>', 'worktree to claim (default: the one containing the current directory)')
    .option('--session <id>', 'execution session (default: $OVERDECK_EXECUTION_SESSION_ID)')
    .option('--runtime <runtime>', 'runtime of the session, e.g. chatgpt-web, codex-cli')
    .option(
      '--worker <id>',
      'agent worker (online: an executor token may name only its own, an admin must name one; offline: noted in the claim and grants nothing, reconcile binds as the worker of its OD_TOKEN and refuses a claim naming another)',
    )
    .option('--run <id>', 'agent worker run id')
    .option('--lane <lane>', 'lane')
    .option('--plan <ref>', 'plan reference')
    .option('--json', 'machine-readable output')
    .action(
      async (
        o: {
          offline?: boolean;
          worktree?: string;
          session?: string;
          runtime?: string;
          worker?: string;
          run?: string;
          lane?: string;
          plan?: string;
          json?: boolean;
        },
        cmd: Command,
      ) => {
        const json = o.json === true;
        if (o.offline !== true) {
          const handler = onlineClaim.get(program);
          if (handler) return handler(o as Record<string, unknown>, cmd);
          fail(EXIT.usage, 'claim without --offline goes through the service, which this build has no command for; use --offline', json);
          return;
        }
        try {
          const session = checkId(o.session ?? process.env.OVERDECK_EXECUTION_SESSION_ID, '--session');
          if (session === undefined) throw new GitSideError('invalid_argument', '--session (or OVERDECK_EXECUTION_SESSION_ID) is required');
          if (o.runtime === undefined) throw new GitSideError('invalid_argument', '--runtime is required');
          const top = await worktreeTop(o.worktree);
          const res = await provisional().offlineClaim(top, {
            executionSessionId: session,
            runtime: checkId(o.runtime, '--runtime')!,
            workerId: checkId(o.worker, '--worker') ?? null,
            runId: checkId(o.run, '--run') ?? null,
            lane: o.lane ?? null,
            planRef: o.plan ?? null,
            allowedRoots: config().loadConfig().allowedRoots,
          });
          const p = res.projection;
          const human: Record<OfflineClaimOutcome['status'], string> = {
            claimed: `provisional claim ${p?.idempotencyKey ?? ''} for session ${session} written (offline); run od-worktree reconcile with OD_TOKEN (your worker's executor token) once the service is reachable`,
            already_provisional: `session ${session} already holds provisional claim ${p?.idempotencyKey ?? ''}`,
            already_owned: `session ${session} already owns this worktree (ownership ${p?.ownershipId ?? 'unknown'})`,
            refused: `refused: this worktree is owned by session ${p?.executionSessionId ?? 'unknown'} (ownership ${p?.ownershipId ?? 'unknown'}, state ${p?.state ?? 'unknown'})`,
            conflict: `conflict: ${res.status === 'conflict' ? res.reason : ''}; run od-worktree reconcile --repair`,
          };
          const code = CLAIM_EXIT[res.status];
          const body = { ok: code === EXIT.ok, status: res.status, worktree: top, projection: p, ...(res.status === 'conflict' ? { reason: res.reason } : {}) };
          if (code === EXIT.ok) out(json, body, human[res.status]);
          else {
            if (json) out(true, body, '');
            process.stderr.write(`od-worktree: ${human[res.status]}\n`);
            process.exitCode = code;
          }
        } catch (err) {
          usageOr(err, json);
        }
      },
    );

  program
    .command('reconcile')
    .description(
      'compare the local projection with the durable record: rehydrate, submit a provisional claim, report stale/corrupt (--repair rewrites); through the HTTP API with OD_TOKEN',
    )
    .option('--worktree <path>', 'worktree (default: the one containing the current directory)')
    .option('--repair', 'rewrite a stale, corrupt or conflicting local projection from the durable record')
    .option('--json', 'machine-readable output')
    .addHelpText(
      'after',
      '\nNeeds OD_TOKEN (and OD_API_URL unless the default): a provisional claim is bound as the worker of that\n' +
        'executor token, never as a worker the claim or the local projection names; a claim naming another\n' +
        'worker is refused (worker_mismatch, exit 5) and nothing is bound. Exit 1 without a usable token.',
    )
    .action(async (o: { worktree?: string; repair?: boolean; json?: boolean }) => {
      const json = o.json === true;
      let top: string;
      try {
        top = await worktreeTop(o.worktree);
      } catch (err) {
        usageOr(err, json);
        return;
      }
      const entries: ReconciliationEntry[] = [];
      let opened: OpenedPort;
      try {
        opened = await (deps.openReconcilePort ?? defaultOpenPort)({ onReconciled: (e) => void entries.push(e) });
      } catch (err) {
        reconcileFailure(err, json);
        return;
      }
      try {
        const cfg = config().loadConfig();
        const tenureHashes = tenureHashesIfKeyed(cfg);
        const result = await reconciliation().reconcile(top, opened.port, {
          repair: o.repair === true,
          allowedRoots: cfg.allowedRoots,
          ...(tenureHashes ? { tenureHashes } : {}),
        });
        const code = reconcileExit(result);
        const body = { ok: code === EXIT.ok, ...result, logged: entries, ...(opened.caller ? { principal: opened.caller } : {}) };
        out(json, body, describe(result));
        if (result.kind === 'conflict' && result.reason === 'worker_mismatch' && !json) process.stderr.write(`od-worktree: ${WORKER_MISMATCH_HINT}\n`);
        if (code !== EXIT.ok) process.exitCode = code;
      } catch (err) {
        reconcileFailure(err, json);
      } finally {
        await opened.close();
      }
    });
}
