import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { temporalCliPath } from '../src/infra/tools';
import { ownershipWorkflowId } from '../src/domain/workflow-id';
import { benchBind } from './cases/bind';
import { benchCommit } from './cases/commit';
import { benchHeartbeat, stopNoops } from './cases/heartbeat';
import { benchList } from './cases/list';
import { benchLookup } from './cases/lookup';
import { buildMinimalBundle, memoryRow, perWorkflowCost, settledSample } from './cases/memory';
import { measureParts } from './cases/parts';
import { benchProjection } from './cases/projection';
import { benchUpdate } from './cases/update';
import { Cleanup } from './cleanup';
import { readScale, sizesFor, type BenchContext, type LiveOwnership } from './context';
import { bindRequest, executor, makeWorktrees } from './fixtures';
import { machineInfo, renderTable, writeResults, type Row } from './report';
import { log, startStack, waitIdle } from './stack';
import { mapLimit, progressLine } from './stats';

/** BENCH_RESULTS moves the output (the CI smoke run writes to a temp file, not over a full run's results). */
const RESULTS = path.resolve(process.env.BENCH_RESULTS || path.join(__dirname, 'results', 'latest.json'));

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
    log(`BENCH_SCALE=${scale}: ${sizes.liveOwnerships} live ownerships, bind ${sizes.bind.iterations}, update ${sizes.update.iterations}, history ${sizes.list.large}`);
    const stack = await phase('start stack', () => startStack(cleanup));
    const ctx: BenchContext = { stack, scale, sizes };
    const minimalBundle = await buildMinimalBundle();
    const before = await settledSample(stack);
    // 8 (control): why a cached workflow costs what it costs, measured before any other workflow exists.
    const perWorkflow = await phase('8 per-workflow memory (bundle control)', () => perWorkflowCost(stack, Math.min(100, sizes.liveOwnerships), minimalBundle));

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

    // 5. projection write, 6. commit with hooks: git only, on a machine with no workflow traffic yet.
    rows.push(await phase('5 git projection write', () => benchProjection(ctx, projWt)));
    rows.push(await phase('6 commit with guard hooks', () => benchCommit(ctx, guardedWt, plainWt)));
    // Breakdown material for 1 and 2: their store and git parts, each timed alone.
    const parts = await phase('parts for the breakdowns', () => measureParts(ctx, spare));

    // 1. bind
    const { row: bindRow, bound } = await phase('1 bind', () => benchBind(ctx, owned));
    rows.push(bindRow);
    // 2. owner-only update
    rows.push(await phase('2 owner-only update', () => benchUpdate(ctx, bound)));

    // The rest of the N live ownerships (untimed), then 8. memory with N live.
    const live: LiveOwnership[] = [...bound];
    await phase(`bind up to ${sizes.liveOwnerships} live ownerships`, async () => {
      const rest = owned.slice(bound.length, sizes.liveOwnerships).map((wt, k) => ({ wt, i: bound.length + k }));
      const progress = progressLine('bind (untimed)');
      let done = 0;
      const more = await mapLimit(rest, 8, async ({ wt, i }) => {
        const view = await stack.ownership.bind(bindRequest(wt, i));
        progress(++done, rest.length);
        return {
          wt,
          workflowId: ownershipWorkflowId(view.repoRoot, view.worktreePath),
          ownershipId: view.ownershipId,
          executionSessionId: `bench-session-${i}`,
          epoch: view.epoch,
          principal: executor(`bench-worker-${i}`),
        } satisfies LiveOwnership;
      });
      live.push(...more);
      await waitIdle(stack, 1_000);
    });
    const liveSet = live.slice(0, sizes.liveOwnerships);
    const withLive = await settledSample(stack);

    // 3. heartbeats
    const hb = await phase('3 heartbeat throughput', () => benchHeartbeat(ctx, liveSet));
    rows.push(hb.throughput, hb.latency);
    const withLiveAndNoops = await settledSample(stack);
    await stopNoops(hb.noops);
    await waitIdle(stack);
    const afterHeartbeats = await settledSample(stack);

    for (const r of rows) if (r.id === 'bind' || r.id === 'update') r.details = { ...r.details, partsTimedAlone: parts };

    // 7. list with 1,000 vs 100,000 historical ownerships; 4. lookups run on the grown tables.
    rows.push(await phase('7 listOwnerships vs history size', () => benchList(ctx)));
    rows.push(...(await phase('4 lookup by branch', () => benchLookup(ctx, liveSet))));

    rows.push(
      memoryRow(sizes.liveOwnerships, before, withLive, {
        withLiveAndNoopWorkflows: withLiveAndNoops,
        afterHeartbeatsNoopsStopped: afterHeartbeats,
        perWorkflow,
      }),
    );

    const order = ['bind', 'update', 'heartbeat-throughput', 'heartbeat-latency', 'lookup-store', 'lookup-http', 'projection', 'commit', 'list', 'worker-rss'];
    rows.sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
    const totalSeconds = Math.round((Date.now() - started) / 1000);
    const pgVersion = (await stack.pool.query<{ v: string }>('SELECT version() AS v')).rows[0].v;
    const machine = machineInfo(scale, {
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
