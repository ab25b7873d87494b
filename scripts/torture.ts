import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Cleanup } from '../bench/cleanup';
import { startStack } from '../bench/stack';
import { OwnershipClient } from '../src/client';
import { startTortureApi } from '../torture/api';
import { runTorture } from '../torture';
import { freshSeed } from '../torture/rng';

/**
 * npm run torture: concurrent legal and illegal traffic over HTTP against the real stack (its own
 * Temporal dev server, database and production workers, as npm run bench starts them), then the
 * checker of "exactly one live owner per worktree, and nothing acknowledged is lost". Exits 1 on
 * any violation, 5xx or unanswered call; 2 on bad arguments.
 */

const log = (line: string) => process.stderr.write(`[torture] ${line}\n`);

const USAGE = `usage: npm run torture -- [--seed N] [--duration SECONDS] [--ops CALLS] [--workers N] [--sessions N] [--worktrees N] [--concurrency N] [--out DIR]`;

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
    };
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
    const stack = await startStack(cleanup);
    // Short handoff timeouts race accepts; a periodic heartbeat event every 2 s puts heartbeats in the log.
    // The lease stays long: no liveness authority answers here, so a silent owner never goes stale.
    const client = new OwnershipClient({
      client: stack.temporal,
      taskQueue: stack.taskQueue,
      hostId: stack.hostId,
      allowedRoots: [stack.root],
      settings: { leaseTtlMs: 60 * 60_000, heartbeatLogIntervalMs: 2_000, handoffTimeoutMs: 5_000 },
    });
    const api = await startTortureApi({ temporal: stack.temporal, client, pool: stack.pool, taskQueue: stack.taskQueue, hostId: stack.hostId, allowedRoots: [stack.root], dir: stack.root, workers: opts.workers });
    cleanup.add('stop API server', () => api.stop());
    const baseDir = path.join(stack.root, 'torture');
    mkdirSync(baseDir, { recursive: true });
    const result = await runTorture({ ...api.target, pool: stack.pool, baseDir }, { ...opts, log });
    for (const v of result.violations.slice(0, 40)) log(`violation ${v.check}: ${v.message}`);
    if (result.violations.length > 40) log(`… ${result.violations.length - 40} more in ${path.join(opts.runDir, 'violations.jsonl')}`);
    process.stdout.write(`${result.summary}\n`);
    log(`requests, violations and figures in ${opts.runDir}`);
    return result.ok ? 0 : 1;
  } finally {
    await cleanup.run(log);
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(70);
  },
);
