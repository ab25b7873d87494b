import { execFileSync } from 'node:child_process';
import { benchGate } from './cases/gate';
import { benchProvenance } from './cases/provenance';
import os from 'node:os';
import path from 'node:path';
import { temporalCliPath } from '../src/infra/tools';
import { ownershipWorkflowId } from '../src/ids/workflow-id';
import { benchBaseMemory } from './cases/base-memory';
import { benchBind } from './cases/bind';
import { benchCli } from './cases/cli';
import { benchCommit } from './cases/commit';
import { buildPackage } from './cases/compiled';
import { benchHeartbeat, stopNoops } from './cases/heartbeat';
import { benchLifecycleHistory } from './cases/history';
import { benchList } from './cases/list';
import { benchLookup } from './cases/lookup';
import { buildMinimalBundle, memoryRow, perWorkflowCost, settledSample } from './cases/memory';
import { measureParts } from './cases/parts';
import { benchProjection } from './cases/projection';
import { benchUpdate } from './cases/update';
import { Cleanup } from '../stack/cleanup';
import { bareClaims, claimFloorRow, claimGrowthRow, claimRow } from './cases/claims';
import { cpuNow, cpuPerOp } from './cpu';
import { readScale, sizesFor, type BenchContext, type LiveOwnership } from './context';
import { asTheApi, bindRequest, executor, makeWorktrees } from './fixtures';
import { machineInfo, renderTable, writeResults, type Row } from './report';
import { log, maxCached, startStack, waitIdle } from './stack';
import { mapLimit, progressLine, summarize } from './stats';

/** BENCH_RESULTS moves the output (the CI smoke run writes to a temp file, not over a full run's results). */
const RESULTS = path.resolve(process.env.BENCH_RESULTS || path.join(__dirname, 'results', 'latest.json'));

/** The cases BENCH_ONLY can name (comma-separated); unset runs them all. */
const CASES = [
  'projection',
  'commit',
  'gate',
  'bind',
  'update',
  'history',
  'heartbeat',
  'list',
  'lookup',
  'cli',
  'base-memory',
  'memory',
  'provenance',
] as const;
type CaseName = (typeof CASES)[number];

/**
 * BENCH_ONLY=cli,lookup runs only those cases (and what they stand on: the bound ownerships), for
 * a before/after of one change without the whole run. Unknown names are an error, not a silent no-op.
 */
function selectedCases(env: NodeJS.ProcessEnv = process.env): Set<CaseName> {
  const raw = env.BENCH_ONLY?.trim();
  if (!raw) return new Set(CASES);
  const names = raw
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(CASES as readonly string[]).includes(n));
  if (unknown.length > 0) throw new Error(`BENCH_ONLY: unknown case(s) ${unknown.join(', ')}; known: ${CASES.join(', ')}`);
  return new Set(names as CaseName[]);
}

function versionOf(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8' }).split('\n')[0].trim();
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<number> {
  const started = Date.now();
  const scale = readScale();
  const only = selectedCases();
  const wants = (c: CaseName) => only.has(c);
  const sizes = sizesFor(scale);
  const cleanup = new Cleanup();
  let interrupted = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    log(`${sig}: stopping everything the bench started`);
    const hard = setTimeout(() => process.exit(130), 60_000);
    hard.unref();
    void cleanup.run(log).then(() => process.exit(130));
  };
  // `on`, not `once`: a Ctrl-C reaches this process twice (from the terminal's process group and
  // relayed by the tsx parent), and a second signal with no listener left would kill it mid-cleanup.
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const rows: Row[] = [];
  const phases: Record<string, { seconds: number; load1AtEnd: number }> = {};
  const phase = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const t = Date.now();
    log(`${name}…`);
    const out = await fn();
    phases[name] = { seconds: Math.round((Date.now() - t) / 100) / 10, load1AtEnd: Math.round(os.loadavg()[0] * 100) / 100 };
    log(`${name}: done in ${phases[name].seconds} s (load ${phases[name].load1AtEnd})`);
    return out;
  };
  // Other processes on this machine skew every number: say so up front, and record the load per phase.
  const load0 = os.loadavg()[0];
  if (load0 > os.cpus().length * 0.5) log(`warning: load average ${load0.toFixed(2)} on ${os.cpus().length} CPUs before the start; results will be noisy`);

  try {
    log(
      `BENCH_SCALE=${scale}: ${sizes.liveOwnerships} live ownerships, bind ${sizes.bind.iterations}, update ${sizes.update.iterations}, history ${sizes.list.large}, workflow cache ${maxCached() || 'SDK default'}`,
    );
    const stack = await phase('start stack', () => startStack(cleanup));
    const ctx: BenchContext = { stack, scale, sizes };
    const minimalBundle = await buildMinimalBundle();
    const before = await settledSample(stack);
    // 8 (control): why a cached workflow costs what it costs, measured before any other workflow exists.
    const perWorkflow = wants('memory')
      ? await phase('8 per-workflow memory (bundle control)', () => perWorkflowCost(stack, Math.min(100, sizes.liveOwnerships), minimalBundle))
      : null;

    const bindTotal = sizes.bind.warmup + sizes.bind.iterations;
    const ownedCount = Math.max(sizes.liveOwnerships, bindTotal);
    const reposDir = path.join(stack.root, 'repos');
    const { owned, spare } = await phase('create worktrees', async () => {
      const owned = await makeWorktrees(reposDir, 'own', ownedCount, { progress: progressLine('git worktree add') });
      const spare = await makeWorktrees(reposDir, 'spare', 10);
      return { owned, spare };
    });
    const [projWt] = await makeWorktrees(reposDir, 'proj', 1);
    const [guardedWt] = await makeWorktrees(reposDir, 'guarded', 1);
    const [plainWt] = await makeWorktrees(reposDir, 'plain', 1);
    const [lifeWt] = await makeWorktrees(reposDir, 'life', 1);

    // 5. projection write, 6. commit with hooks: git only, on a machine with no workflow traffic yet.
    if (wants('projection')) rows.push(await phase('5 git projection write', () => benchProjection(ctx, projWt)));
    if (wants('commit')) rows.push(await phase('6 commit with guard hooks', () => benchCommit(ctx, guardedWt, plainWt)));
    if (wants('gate')) rows.push(...(await phase('6b git through the agent-side gate', () => benchGate(ctx, reposDir))));
    // Breakdown material for 1 and 2: their store and git parts, each timed alone.
    const parts = wants('bind') || wants('update') ? await phase('parts for the breakdowns', () => measureParts(ctx, spare)) : null;

    // 1. bind (always: every later case stands on the ownerships it binds; its row only when asked)
    const { rows: bindRows, bound } = await phase('1 bind', () => benchBind(ctx, owned, wants('bind')));
    if (wants('bind')) rows.push(...bindRows);
    // 2. owner-only update
    if (wants('update')) rows.push(...(await phase('2 owner-only update', () => benchUpdate(ctx, bound))));
    // 11. what a whole lifecycle costs in history
    if (wants('history')) rows.push(await phase('11 history of a 5-step lifecycle', () => benchLifecycleHistory(ctx, lifeWt)));

    // The rest of the N live ownerships (untimed), then 8. memory with N live.
    const live: LiveOwnership[] = [...bound];
    // Lookups rotate over the live set too, so they see the same ownerships with or without BENCH_ONLY.
    if (wants('heartbeat') || wants('memory') || wants('lookup'))
      await phase(`bind up to ${sizes.liveOwnerships} live ownerships`, async () => {
        const rest = owned.slice(bound.length, sizes.liveOwnerships).map((wt, k) => ({ wt, i: bound.length + k }));
        const progress = progressLine('bind (8 in flight)');
        let done = 0;
        // Timed as claims under a growing live set (8 in flight), in three stretches (to a tenth of
        // N, to half, to N) side by side, each with the CPU a claim cost where it ran: the scale
        // rows, next to the bind row's quiet one-at-a-time figure.
        const n = sizes.liveOwnerships;
        const edges = [...new Set([bound.length, Math.max(bound.length, Math.round(n / 10)), Math.max(bound.length, Math.round(n / 2)), n])];
        const stretches: Row[] = [];
        // The primitive's figure, only when there are claims to set beside it.
        const primitives = Math.min(200, Math.max(40, Math.round(n / 5)));
        const bare = rest.length > 0 ? await bareClaims(stack, primitives) : null;
        const floor = rest.length > 0 ? await bareClaims(stack, primitives, 'floor') : null;
        for (let e = 0; e + 1 < edges.length; e++) {
          const from = edges[e]!;
          const to = edges[e + 1]!;
          const part = rest.slice(from - bound.length, to - bound.length);
          const took: number[] = [];
          const cpu0 = cpuNow();
          const tStart = performance.now();
          const more = await mapLimit(part, 8, async ({ wt, i }) => {
            const t0 = performance.now();
            const view = await stack.ownership.bind(bindRequest(wt, i), await asTheApi(stack.pool, `bench-worker-${i}`));
            took.push(performance.now() - t0);
            progress(++done, rest.length);
            return {
              wt,
              workflowId: ownershipWorkflowId(view.hostId, view.worktreePath),
              ownershipId: view.ownershipId,
              executionSessionId: `bench-session-${i}`,
              epoch: view.epoch,
              principal: executor(`bench-worker-${i}`),
            } satisfies LiveOwnership;
          });
          const seconds = (performance.now() - tStart) / 1000;
          live.push(...more);
          if (took.length > 0 && bare) stretches.push(claimRow(from, to, summarize(took), seconds, cpuPerOp(cpu0, cpuNow(), took.length), bare));
        }
        await waitIdle(stack, 1_000);
        rows.push(...stretches);
        if (floor && bare && stretches.length > 0) rows.push(claimFloorRow(floor, bare));
        const growth = claimGrowthRow(stretches);
        if (growth) rows.push(growth);
      });
    const liveSet = live.slice(0, sizes.liveOwnerships);
    const withLive = await settledSample(stack);

    // 3. heartbeats
    let withLiveAndNoops: Awaited<ReturnType<typeof settledSample>> | null = null;
    let afterHeartbeats: Awaited<ReturnType<typeof settledSample>> | null = null;
    if (wants('heartbeat')) {
      const hb = await phase('3 heartbeat throughput', () => benchHeartbeat(ctx, liveSet));
      rows.push(hb.throughput, hb.latency);
      withLiveAndNoops = await settledSample(stack);
      await stopNoops(hb.noops);
      await waitIdle(stack);
      afterHeartbeats = await settledSample(stack);
    }

    for (const r of rows) if (r.id === 'bind' || r.id === 'update') r.details = { ...r.details, partsTimedAlone: parts };

    // 7. list with 1,000 vs 100,000 historical ownerships; 4. lookups run on the grown tables.
    if (wants('list')) rows.push(await phase('7 listOwnerships vs history size', () => benchList(ctx)));
    if (wants('lookup')) rows.push(...(await phase('4 lookup by branch', () => benchLookup(ctx, liveSet))));
    if (wants('provenance')) rows.push(...(await phase('12 provenance lookup (100,000 receipts at BENCH_SCALE=1)', () => benchProvenance(ctx))));

    // 9. the installed CLI's start-up and 10. the production processes' base memory, compiled vs tsx,
    // on the package built for this run (never the working tree's dist/).
    if (wants('cli') || wants('base-memory')) {
      const pkg = await phase('build the package', () => buildPackage(stack.root));
      if (wants('cli')) rows.push(...(await phase('9 CLI start-up', () => benchCli(ctx, cleanup, pkg, liveSet[0]))));
      if (wants('base-memory')) rows.push(...(await phase('10 base memory, compiled vs tsx', () => benchBaseMemory(ctx, cleanup, pkg))));
    }

    if (wants('memory') && perWorkflow && withLiveAndNoops && afterHeartbeats) {
      rows.push(
        memoryRow(sizes.liveOwnerships, before, withLive, {
          withLiveAndNoopWorkflows: withLiveAndNoops,
          afterHeartbeatsNoopsStopped: afterHeartbeats,
          perWorkflow,
        }),
      );
    } else if (wants('memory')) {
      log('memory: needs the heartbeat case too (its samples); BENCH_ONLY=memory,heartbeat');
    }

    const order = [
      'bind',
      'claim-at-scale',
      'claim-growth',
      'claim-floor',
      'update',
      'heartbeat-throughput',
      'heartbeat-latency',
      'lookup-store',
      'lookup-http',
      'lookup-http-bare',
      'projection',
      'commit',
      'gate-status',
      'gate-commit',
      'gate-add',
      'list',
      'worker-rss',
      'cli-version',
      'cli-help',
      'cli-who',
      'worker-base-rss',
      'api-base-rss',
    ];
    rows.sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
    const totalSeconds = Math.round((Date.now() - started) / 1000);
    const pgVersion = (await stack.pool.query<{ v: string }>('SELECT version() AS v')).rows[0].v;
    const machine = machineInfo(scale, {
      ...(only.size < CASES.length ? { BENCH_ONLY: [...only].join(',') } : {}),
      maxCachedWorkflows: maxCached() || 'SDK default',
      loadAverage1mAtStart: Math.round(load0 * 100) / 100,
      loadAverage1mAtEnd: Math.round(os.loadavg()[0] * 100) / 100,
      temporalCli: versionOf(temporalCliPath(), ['--version']),
      postgres: `${pgVersion.split(',')[0]} (${stack.pgSource})`,
    });

    process.stdout.write(`\n${renderTable(rows)}\n\n`);
    for (const r of rows) {
      const b = r.details?.breakdown as Record<string, unknown> | undefined;
      if (b) process.stdout.write(`${r.id} breakdown (p50 ms, from workflow history): ${JSON.stringify(b)}\n`);
      if (r.details?.partsTimedAlone) process.stdout.write(`${r.id} parts timed alone (p50 ms): ${JSON.stringify(r.details.partsTimedAlone)}\n`);
    }
    process.stdout.write(
      `\nBENCH_SCALE=${scale}, ${machine.cpus} CPUs (${String(machine.cpuModel)}), load ${String(machine.loadAverage1mAtStart)} at start / ${String(machine.loadAverage1mAtEnd)} at end, total ${totalSeconds} s; details in ${path.relative(process.cwd(), RESULTS)}\n`,
    );

    writeResults(RESULTS, { machine, totalSeconds, phasesSeconds: phases, sizes, settings: stack.settings, rows });
    return 0; // a missed goal is a result, reported in the table, not a failure of the run
  } catch (err) {
    if (interrupted) return 130;
    log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  } finally {
    if (!interrupted) {
      log('stopping the stack…');
      await cleanup.run(log);
      log(`done in ${Math.round((Date.now() - started) / 1000)} s`);
    }
  }
}

void main().then((code) => {
  // Interrupted: the signal handler exits once everything is stopped.
  if (code !== 130) process.exit(code);
});
