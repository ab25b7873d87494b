import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Cleanup } from '../stack/cleanup';
import { maxCached, startStack } from '../bench/stack';
import { OwnershipClient } from '../src/client';
import { gitWorktreeResolver } from '../src/adapters/worktree-resolver';
import { startTortureApi } from '../torture/api';
import { runTorture, type Disturbance, type Target, type TemporalAccess, type TortureResult, type Violation } from '../torture';
import { startProcessStack, WorkerKiller } from '../torture/process-stack';
import { freshSeed } from '../chaos/rng';
import { WorkerRestarter } from '../torture/worker-restart';

/**
 * npm run torture: concurrent legal and illegal traffic over HTTP against the real stack (its own
 * Temporal dev server, database and production workers, as npm run bench starts them), then the
 * checker of "exactly one live owner per worktree, and nothing acknowledged is lost". Exits 1 on
 * any violation, 5xx or unanswered call; 2 on bad arguments.
 *
 * Lanes (default): --concurrency independent random lanes for --duration seconds.
 * Bursts (--rounds N --burst M): each round fires M intents at once from the same seeded mix and
 * waits for every answer: M over --worktrees W is about M/W concurrent writers per ownership.
 * --restart-worker (bursts): the workflow worker is replaced mid-round (in-process, see
 * torture/worker-restart.ts). --cache-size K: the workers' maxCachedWorkflows (OD_MAX_CACHED_WORKFLOWS),
 * small to force evictions and replays.
 * --stack processes: the same run against the real stack as separate processes (faults/stack.ts:
 * Temporal dev server, embedded PostgreSQL, `tsx worker.ts`, `tsx worker.ts --host-agent`,
 * `tsx src/server/main.ts`; their logs in the run dir's processes/). --kill-worker (bursts, processes
 * only): the workflow worker process gets SIGKILL mid-round and is started again at once
 * (torture/process-stack.ts WorkerKiller), one line per kill with the time until the new one polls.
 */

const log = (line: string) => process.stderr.write(`[torture] ${line}\n`);

const USAGE = [
  'usage: npm run torture -- [--seed N] [--workers N] [--sessions N] [--worktrees N] [--out DIR] [--cache-size K]',
  '         lanes:  [--duration SECONDS] [--ops CALLS] [--concurrency N]',
  '         bursts: --rounds N --burst M [--restart-worker | --kill-worker]',
  '         --stack in-process|processes  (default in-process: workers and API inside this process;',
  '                                        processes: worker, host agent and API as processes, for --kill-worker)',
].join('\n');

function intArg(v: string | undefined, name: string, dflt: number, min = 1): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer >= ${min}, got ${v}`);
  return n;
}

async function main(): Promise<number> {
  let opts;
  try {
    const { values } = parseArgs({
      options: {
        seed: { type: 'string' },
        duration: { type: 'string' },
        ops: { type: 'string' },
        workers: { type: 'string' },
        sessions: { type: 'string' },
        worktrees: { type: 'string' },
        concurrency: { type: 'string' },
        rounds: { type: 'string' },
        burst: { type: 'string' },
        'restart-worker': { type: 'boolean' },
        'kill-worker': { type: 'boolean' },
        stack: { type: 'string' },
        'cache-size': { type: 'string' },
        out: { type: 'string' },
        help: { type: 'boolean' },
      },
    });
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    opts = {
      seed: intArg(values.seed, 'seed', freshSeed(), 0),
      durationMs: intArg(values.duration, 'duration', 60) * 1000,
      maxCalls: intArg(values.ops, 'ops', Number.MAX_SAFE_INTEGER),
      workers: intArg(values.workers, 'workers', 3),
      sessionsPerWorker: intArg(values.sessions, 'sessions', 6),
      worktrees: intArg(values.worktrees, 'worktrees', 6),
      concurrency: intArg(values.concurrency, 'concurrency', 8),
      runDir: values.out ? path.resolve(values.out) : mkdtempSync(path.join(os.tmpdir(), 'od-torture-')),
      ...(values.rounds !== undefined || values.burst !== undefined
        ? { rounds: intArg(values.rounds, 'rounds', 3), burst: intArg(values.burst, 'burst', 200) }
        : {}),
      restartWorker: values['restart-worker'] === true,
      killWorker: values['kill-worker'] === true,
      stack: stackArg(values.stack),
      ...(values['cache-size'] !== undefined ? { cacheSize: intArg(values['cache-size'], 'cache-size', 0) } : {}),
    };
    if (opts.restartWorker && opts.stack === 'processes')
      throw new Error('--restart-worker replaces the in-process workers; with --stack processes use --kill-worker (a SIGKILL of the worker process)');
    if (opts.killWorker && opts.stack !== 'processes')
      throw new Error('--kill-worker kills the worker process: it needs --stack processes (the in-process stack has --restart-worker)');
    if (opts.restartWorker && opts.rounds === undefined) throw new Error('--restart-worker needs burst mode (--rounds N --burst M)');
    if (opts.killWorker && opts.rounds === undefined) throw new Error('--kill-worker needs burst mode (--rounds N --burst M)');
    if (opts.rounds !== undefined && opts.workers < 2) throw new Error('burst mode needs --workers >= 2 (sessions of at least two agent workers)');
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    return 2;
  }
  log(`seed ${opts.seed} (repeat with --seed ${opts.seed}); run dir ${opts.runDir}`);

  const cleanup = new Cleanup();
  let interrupted = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    log(`${sig}: stopping everything the torture run started`);
    setTimeout(() => process.exit(130), 60_000).unref();
    void cleanup.run(log).then(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    // The stack's workers take their cache cap from OD_MAX_CACHED_WORKFLOWS (bench/stack.ts maxCached();
    // the process stack's worker reads it from the environment it inherits).
    if (opts.cacheSize !== undefined) process.env.OD_MAX_CACHED_WORKFLOWS = String(opts.cacheSize);
    const { restartWorker: _r, killWorker: _k, ...runOpts } = opts;
    const run =
      opts.stack === 'processes'
        ? await onProcesses(cleanup, { workers: opts.workers, killWorker: opts.killWorker, runDir: opts.runDir, seed: opts.seed })
        : await inProcess(cleanup, { workers: opts.workers, restartWorker: opts.restartWorker });
    const result: TortureResult = await runTorture(run.target, {
      ...runOpts,
      ...(run.disturb ? { disturb: run.disturb } : {}),
      ...(maxCached() > 0 ? { cacheSize: maxCached() } : {}),
      temporal: run.temporal,
      log,
    });
    printViolations(result.violations, path.join(opts.runDir, 'violations.jsonl'));
    process.stdout.write(`${result.summary}\n`);
    log(`requests, violations and figures in ${opts.runDir}`);
    return result.ok ? 0 : 1;
  } finally {
    await cleanup.run(log);
  }
}

interface Prepared {
  target: Target;
  temporal: TemporalAccess;
  disturb?: Disturbance;
}

/** bench/stack.ts: Temporal and PostgreSQL as processes, the workers and the API inside this process. */
async function inProcess(cleanup: Cleanup, opts: { workers: number; restartWorker: boolean }): Promise<Prepared> {
  const stack = await startStack(cleanup);
  // Short handoff timeouts race accepts; a periodic heartbeat event every 2 s puts heartbeats in the log.
  // The lease stays long: no liveness authority answers here, so a silent owner never goes stale.
  const client = new OwnershipClient({
    client: stack.temporal,
    resolver: gitWorktreeResolver,
    taskQueue: stack.taskQueue,
    hostId: stack.hostId,
    allowedRoots: [stack.root],
    settings: { leaseTtlMs: 60 * 60_000, heartbeatLogIntervalMs: 2_000, handoffTimeoutMs: 5_000 },
  });
  const api = await startTortureApi({
    temporal: stack.temporal,
    client,
    pool: stack.pool,
    taskQueue: stack.taskQueue,
    hostId: stack.hostId,
    allowedRoots: [stack.root],
    dir: stack.root,
    workers: opts.workers,
  });
  cleanup.add('stop API server', () => api.stop());
  const baseDir = path.join(stack.root, 'torture');
  mkdirSync(baseDir, { recursive: true });
  let restarter: WorkerRestarter | undefined;
  if (opts.restartWorker) {
    restarter = new WorkerRestarter({
      temporalAddress: stack.temporalAddress,
      taskQueue: stack.taskQueue,
      hostId: stack.hostId,
      allowedRoots: [stack.root],
      pool: stack.workerPool,
      dataConverter: stack.dataConverter,
      bundlePath: stack.bundlePath,
      maxCachedWorkflows: maxCached(),
      initial: stack.workers,
      log,
    });
    const r = restarter;
    cleanup.add('stop restarted workers', () => r.stop(), 30_000);
  }
  return {
    target: { ...api.target, pool: stack.pool, baseDir },
    temporal: { client: stack.temporal, workflowBundle: { codePath: stack.bundlePath }, dataConverter: stack.dataConverter },
    ...(restarter ? { disturb: restarter } : {}),
  };
}

/** faults/stack.ts: every component its own process; --kill-worker SIGKILLs the worker process mid-round. */
async function onProcesses(cleanup: Cleanup, opts: { workers: number; killWorker: boolean; runDir: string; seed: number }): Promise<Prepared> {
  const ps = await startProcessStack(cleanup, log, { executors: opts.workers, logDir: path.join(opts.runDir, 'processes') });
  mkdirSync(ps.baseDir, { recursive: true });
  let killer: WorkerKiller | undefined;
  if (opts.killWorker) {
    killer = new WorkerKiller({ stack: ps.stack, temporal: ps.temporal, seed: opts.seed, log });
    const k = killer;
    // Registered after the stack: runs before its stop, so no restart starts a worker after it.
    cleanup.add('stop killing the worker', () => k.stop(), 30_000);
  }
  return {
    target: { ...ps.target, baseDir: ps.baseDir },
    temporal: { client: ps.temporal, workflowBundle: { codePath: ps.bundlePath }, dataConverter: ps.dataConverter },
    ...(killer ? { disturb: killer } : {}),
  };
}

function stackArg(v: string | undefined): 'in-process' | 'processes' {
  if (v === undefined || v === 'in-process') return 'in-process';
  if (v === 'processes') return 'processes';
  throw new Error(`--stack takes in-process or processes, got ${v}`);
}

/** The first few violations of each check, then how many more there are of each. */
function printViolations(violations: readonly Violation[], file: string): void {
  const PER_CHECK = 5;
  const byCheck = new Map<string, Violation[]>();
  for (const v of violations) byCheck.set(v.check, [...(byCheck.get(v.check) ?? []), v]);
  for (const [name, vs] of byCheck) {
    for (const v of vs.slice(0, PER_CHECK)) log(`violation ${name}: ${v.message}`);
    if (vs.length > PER_CHECK) log(`… ${vs.length - PER_CHECK} more ${name}`);
  }
  if (violations.length) log(`all ${violations.length} violations in ${file}`);
}

main().then(
  (code) => process.exit(code),
  (err) => {
    log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(70);
  },
);
