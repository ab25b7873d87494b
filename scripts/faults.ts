import { parseArgs } from 'node:util';
import { Cleanup } from '../stack/cleanup';
import { defaultOptions, runFaults, type FaultsOptions } from '../faults/run';

/**
 * npm run faults: the durability promise under faults. The real stack as separate processes
 * (Temporal dev server on SQLite, embedded PostgreSQL, worker, host agent, API), a load over
 * HTTP on real worktrees, and each fault in turn (worker kill -9, Temporal kill -9, PostgreSQL
 * stopped, host agent stopped / gone, a worktree deleted under a reclaim), each followed by the
 * checker and ONE figures line on stdout. Exit 1 on any violation, 2 on bad arguments, 70 when
 * the run itself broke.
 */

const log = (line: string) => process.stderr.write(`[faults] ${line}\n`);

const USAGE = `usage: npm run faults -- [--short] [--seed N] [--only a1,a2,b,b2,c,d1,d2,e,f,g] [--worktrees N] [--keep]
       [--worker-delay S] [--temporal-down S] [--temporal-gone S] [--pg-down S] [--host-stop S] [--host-gone S]
       [--health-lag S | --strict-health]
  --short          the quick mode (the integration test's): a1 b c d1 e with short holds
  --only IDS       just these faults (f: a bind on a host no agent serves; g: Temporal killed right
                   after a claim reached PostgreSQL; both run only when named)
  --keep           keep the run's temp dir (logs of every process, requests.jsonl, intents.jsonl)
  --health-lag S   how long /healthz may still call a killed worker or host agent up (default 95, its poller freshness)
  --strict-health  the same, 5 s`;

const DEFAULT_SEED = 20261201;

function num(v: string | undefined, name: string, min = 0): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min}, got ${v}`);
  return n;
}

function parse(argv: string[]): FaultsOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      short: { type: 'boolean' },
      seed: { type: 'string' },
      only: { type: 'string' },
      worktrees: { type: 'string' },
      keep: { type: 'boolean' },
      'worker-delay': { type: 'string' },
      'temporal-down': { type: 'string' },
      'temporal-gone': { type: 'string' },
      'pg-down': { type: 'string' },
      'host-stop': { type: 'string' },
      'host-gone': { type: 'string' },
      'health-lag': { type: 'string' },
      'strict-health': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) return 'help';
  const short = values.short === true || process.env.FAULTS_SHORT === '1';
  const d = defaultOptions(short);
  const sec = (v: string | undefined, name: string, dflt: number) => {
    const n = num(v, name);
    return n === undefined ? dflt : n * 1000;
  };
  const ids = ['a1', 'a2', 'b', 'b2', 'c', 'd1', 'd2', 'e', 'f', 'g'];
  const only = values.only
    ? values.only
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : null;
  if (only?.some((x) => !ids.includes(x))) throw new Error(`--only takes fault ids among ${ids.join(',')}`);
  const seed = num(values.seed ?? process.env.FAULTS_SEED, 'seed') ?? DEFAULT_SEED;
  return {
    ...d,
    seed: Math.floor(seed),
    only,
    worktrees: num(values.worktrees, 'worktrees', 2) ?? d.worktrees,
    keep: values.keep === true,
    holds: {
      workerDelayMs: sec(values['worker-delay'], 'worker-delay', d.holds.workerDelayMs),
      temporalDownMs: sec(values['temporal-down'], 'temporal-down', d.holds.temporalDownMs),
      temporalGoneMs: sec(values['temporal-gone'], 'temporal-gone', d.holds.temporalGoneMs),
      postgresDownMs: sec(values['pg-down'], 'pg-down', d.holds.postgresDownMs),
      hostStoppedMs: sec(values['host-stop'], 'host-stop', d.holds.hostStoppedMs),
      hostGoneMs: sec(values['host-gone'], 'host-gone', d.holds.hostGoneMs),
    },
    healthLagMs: values['strict-health'] ? 5_000 : sec(values['health-lag'], 'health-lag', d.healthLagMs),
    log,
  };
}

async function main(): Promise<number> {
  let opts: FaultsOptions | 'help';
  try {
    opts = parse(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    return 2;
  }
  if (opts === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const cleanup = new Cleanup();
  let interrupted = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    log(`${sig}: stopping every process and removing what the run made`);
    setTimeout(() => process.exit(130), 60_000).unref();
    void cleanup.run(log).then(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const t0 = Date.now();
    const result = await runFaults(opts, cleanup);
    const failed = result.phases.filter((p) => p.violations.length > 0).map((p) => p.id);
    process.stdout.write(
      `[faults] ${result.ok ? 'PASS' : 'FAIL'} seed=${opts.seed} ${opts.short ? 'short' : 'long'} phases=${result.phases.map((p) => p.id).join(',')} ` +
        `${failed.length ? `failed=${failed.join(',')} ` : ''}in ${((Date.now() - t0) / 1000).toFixed(0)} s\n`,
    );
    if (opts.keep) log(`run dir kept: ${result.runDir}`);
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
