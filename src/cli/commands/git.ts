import path from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../../config';
import { IdString } from '../../domain/identity';
import { GitSideError } from '../../git/errors';
import { git } from '../../git/exec';
import { guardCheck, installHooks } from '../../git/guard';
import { offlineClaim, type OfflineClaimOutcome } from '../../git/provisional';
import { reconcile, type ReconcilePort, type ReconcileResult, ReconcileUnavailable, type ReconciliationEntry } from '../../reconcile';
import { EXIT } from '../exit-codes';

/** An opened port and how to close it (connections must not keep the CLI alive). */
export interface OpenedPort {
  port: ReconcilePort;
  close(): Promise<void>;
}

export interface GitCommandDeps {
  /**
   * Opens the port `reconcile` talks to the service through. Default: Temporal and PostgreSQL from
   * the environment (src/config: TEMPORAL_ADDRESS, DATABASE_URL, TEMPORAL_TASK_QUEUE, OD_HOST_ID),
   * the same endpoints `npm start` uses.
   */
  openReconcilePort?: (opts: { worker: { workerId: string; runId: string | null } | null; onReconciled: (e: ReconciliationEntry) => void }) => Promise<OpenedPort>;
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
  if (value !== undefined && !IdString.safeParse(value).success) throw new GitSideError('invalid_argument', `${flag} is not a valid identifier`);
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
  else if (r.kind === 'stale' || r.kind === 'corrupt' || r.kind === 'conflict') parts.push('left in place: run with --repair to rewrite it from the durable record');
  return parts.join('; ');
}

async function defaultOpenPort(opts: Parameters<NonNullable<GitCommandDeps['openReconcilePort']>>[0]): Promise<OpenedPort> {
  // Loaded on demand: guard and install-hooks must not pay for Temporal and pg.
  const { openServicePort } = require('../../reconcile/service-port') as typeof import('../../reconcile/service-port');
  const cfg = loadConfig();
  return openServicePort(
    {
      temporalAddress: cfg.temporalAddress || `127.0.0.1:${cfg.temporalPort}`,
      namespace: cfg.temporalNamespace,
      taskQueue: cfg.taskQueue,
      hostId: cfg.hostId,
      // npm start's embedded PostgreSQL when DATABASE_URL is unset (scripts/start.ts).
      databaseUrl: cfg.databaseUrl || `postgres://postgres:postgres@127.0.0.1:${cfg.pgPort}/ownership`,
      allowedRoots: cfg.allowedRoots,
    },
    { defaultWorker: opts.worker, principalId: `od-worktree@${cfg.hostId}`, onReconciled: opts.onReconciled },
  );
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
        };
        if (env.OVERDECK_EPOCH !== undefined && !/^\d+$/.test(env.OVERDECK_EPOCH)) throw new GitSideError('invalid_argument', '--epoch must be a non-negative integer');
        const res = await guardCheck(top, env);
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
    .description("install the ownership guard hooks for the repository (all its worktrees); existing hooks keep running")
    .option('--worktree <path>', 'any worktree of the repository (default: the current directory)')
    .option('--strict', 'refuse unidentified callers (no OVERDECK_EXECUTION_SESSION_ID) in owned worktrees')
    .option('--no-strict', 'let unidentified callers through again')
    .option('--early-commit-check', 'also check in pre-commit, before the message editor opens')
    .option('--json', 'machine-readable output')
    .action(async (o: { worktree?: string; strict?: boolean; earlyCommitCheck?: boolean; json?: boolean }) => {
      const json = o.json === true;
      try {
        const top = await worktreeTop(o.worktree);
        const res = await installHooks(top, { ...(o.strict !== undefined ? { strict: o.strict } : {}), ...(o.earlyCommitCheck ? { earlyCommitCheck: true } : {}) });
        const strict = (await git(['config', '--bool', '--get', 'overdeck.guard.strict'], { cwd: top, okCodes: [1] })).stdout.trim() === 'true';
        out(json, { ...res, strict }, `installed ${res.hooks.join(', ')} in ${res.hooksPath} (chaining to ${res.previousHooksPath}); strict ${strict ? 'on' : 'off'}`);
      } catch (err) {
        usageOr(err, json);
      }
    });

  program
    .command('claim')
    .description('claim the worktree for a session; --offline writes a provisional local claim without the service (spec §14.5)')
    .option('--offline', 'provisional, session-owned local projection; reconcile submits it once the service is back')
    .option('--worktree <path>', 'worktree to claim (default: the one containing the current directory)')
    .option('--session <id>', 'execution session (default: $OVERDECK_EXECUTION_SESSION_ID)')
    .option('--runtime <runtime>', 'runtime of the session, e.g. chatgpt-web, codex-cli')
    .option('--worker <id>', 'logical agent worker id')
    .option('--run <id>', 'agent worker run id')
    .option('--lane <lane>', 'lane')
    .option('--plan <ref>', 'plan reference')
    .option('--json', 'machine-readable output')
    .action(async (o: { offline?: boolean; worktree?: string; session?: string; runtime?: string; worker?: string; run?: string; lane?: string; plan?: string; json?: boolean }, cmd: Command) => {
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
        const res = await offlineClaim(top, {
          executionSessionId: session,
          runtime: checkId(o.runtime, '--runtime')!,
          workerId: checkId(o.worker, '--worker') ?? null,
          runId: checkId(o.run, '--run') ?? null,
          lane: o.lane ?? null,
          planRef: o.plan ?? null,
          allowedRoots: loadConfig().allowedRoots,
        });
        const p = res.projection;
        const human: Record<OfflineClaimOutcome['status'], string> = {
          claimed: `provisional claim ${p?.idempotencyKey ?? ''} for session ${session} written (offline); run od-worktree reconcile once the service is reachable`,
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
    });

  program
    .command('reconcile')
    .description('compare the local projection with the durable record: rehydrate, submit a provisional claim, report stale/corrupt (--repair rewrites)')
    .option('--worktree <path>', 'worktree (default: the one containing the current directory)')
    .option('--repair', 'rewrite a stale, corrupt or conflicting local projection from the durable record')
    .option('--worker <id>', 'agent worker to submit a provisional claim made without --worker')
    .option('--json', 'machine-readable output')
    .action(async (o: { worktree?: string; repair?: boolean; worker?: string; json?: boolean }) => {
      const json = o.json === true;
      let top: string;
      try {
        top = await worktreeTop(o.worktree);
        checkId(o.worker, '--worker');
      } catch (err) {
        usageOr(err, json);
        return;
      }
      const entries: ReconciliationEntry[] = [];
      let opened: OpenedPort;
      try {
        opened = await (deps.openReconcilePort ?? defaultOpenPort)({ worker: o.worker ? { workerId: o.worker, runId: null } : null, onReconciled: (e) => void entries.push(e) });
      } catch (err) {
        fail(EXIT.unreachable, `the service is unreachable (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`, json);
        return;
      }
      try {
        const result = await reconcile(top, opened.port, { repair: o.repair === true, allowedRoots: loadConfig().allowedRoots });
        const code = reconcileExit(result);
        const body = { ok: code === EXIT.ok, ...result, logged: entries };
        out(json, body, describe(result));
        if (code !== EXIT.ok) process.exitCode = code;
      } catch (err) {
        if (err instanceof ReconcileUnavailable) fail(EXIT.unreachable, `the service is unreachable (${err.causeMessage})`, json);
        else usageOr(err, json);
      } finally {
        await opened.close();
      }
    });
}
