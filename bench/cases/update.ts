import { floorUpdate, localFloorUpdate, noopStop, noopUpdate, type floorWorkflow, type localFloorWorkflow, type noopWorkflow } from '../workflows/noop';
import { diff, scrape, type Snapshot } from '../metrics';
import { historyBreakdown, sample, type TimedCall } from '../breakdown';
import type { BenchContext, LiveOwnership } from '../context';
import { latencyRow, type Row } from '../report';
import { progressLine, runPair, summarize, wallMs } from '../stats';

/**
 * 2. An owner-only update (bindPlan, the lane alternating so every call appends one event and
 *    answers once it is durable) vs a bare update on a running noopWorkflow. Calls rotate over a
 *    few ownerships and as many noop workflows, as several owners would.
 */
export async function benchUpdate(ctx: BenchContext, live: LiveOwnership[]): Promise<Row[]> {
  const { stack, sizes } = ctx;
  const k = Math.min(sizes.update.ownerships, live.length);
  const owners = live.slice(0, k);
  const run = Math.random().toString(36).slice(2, 8);
  const noops = await Promise.all(
    owners.map((_, j) =>
      stack.temporal.workflow.start<typeof noopWorkflow>('noopWorkflow', { workflowId: `bench-noop-upd-${run}-${j}`, taskQueue: stack.taskQueue, args: [] }),
    ),
  );
  // The floor: the same update answered after one no-op ordinary activity, as bindPlan is answered after its log write.
  const floors = await Promise.all(
    owners.map((_, j) =>
      stack.temporal.workflow.start<typeof floorWorkflow>('floorWorkflow', { workflowId: `bench-floor-upd-${run}-${j}`, taskQueue: stack.taskQueue, args: [] }),
    ),
  );
  const localFloors = await Promise.all(
    owners.map((_, j) =>
      stack.temporal.workflow.start<typeof localFloorWorkflow>('localFloorWorkflow', {
        workflowId: `bench-lfloor-upd-${run}-${j}`,
        taskQueue: stack.taskQueue,
        args: [],
      }),
    ),
  );
  const calls = new Array<number>(k).fill(0);
  const lastSeq = new Array<number>(k).fill(0);
  const oursCalls: TimedCall[] = [];
  const baseCalls: TimedCall[] = [];
  const { warmup, iterations } = sizes.update;

  let before: Snapshot = new Map();
  const result = await runPair({
    warmup,
    iterations,
    onMeasureStart: async () => {
      before = await scrape(stack.metricsUrl);
    },
    ours: async (i) => planOnce(i),
    base: async (i) => {
      const h = noops[i % k];
      const t0 = wallMs();
      await h.executeUpdate(noopUpdate, { args: [1] });
      if (i >= warmup) baseCalls.push({ workflowId: h.workflowId, t0, t1: wallMs() });
    },
    progress: progressLine('bindPlan vs update'),
  });
  async function planOnce(i: number, record = true): Promise<void> {
    const j = i % k;
    const o = owners[j];
    const lane = calls[j]++ % 2 === 0 ? 'lane-a' : 'lane-b';
    const t0 = wallMs();
    const view = await stack.ownership.bindPlan(
      { workflowId: o.workflowId },
      { executionSessionId: o.executionSessionId, epoch: o.epoch, principal: o.principal, lane },
    );
    const t1 = wallMs();
    if (view.lane !== lane || view.seq <= lastSeq[j]) throw new Error(`bindPlan ${i}: no event appended (seq ${view.seq}, lane ${view.lane})`);
    lastSeq[j] = view.seq;
    if (record && i >= warmup) oursCalls.push({ workflowId: o.workflowId, t0, t1 });
  }

  const workerMetrics = diff(before, await scrape(stack.metricsUrl));
  const ours = summarize(result.ours);
  const base = summarize(result.base);
  const breakdown = {
    bindPlan: await historyBreakdown(stack.temporal, sample(oursCalls, sizes.breakdownSamples)),
    noopUpdate: await historyBreakdown(stack.temporal, sample(baseCalls, sizes.breakdownSamples)),
  };
  // Ours against the floor, interleaved the same way: what of an owner update is ours at all.
  const vsFloor = await runPair({
    warmup,
    iterations,
    ours: (i) => planOnce(iterations + warmup + i, false),
    base: async (i) => void (await floors[i % k].executeUpdate(floorUpdate, { args: [1] })),
    progress: progressLine('bindPlan vs its floor'),
  });
  // Against the local floor: the primitive an owner update is made of (one task, one local activity).
  const vsLocalFloor = await runPair({
    warmup,
    iterations,
    ours: (i) => planOnce(2 * (iterations + warmup) + i, false),
    base: async (i) => void (await localFloors[i % k].executeUpdate(localFloorUpdate, { args: [1] })),
    progress: progressLine('bindPlan vs its local floor'),
  });
  await Promise.all([...noops, ...floors, ...localFloors].map((h) => h.signal(noopStop)));
  const localFloorRow = latencyRow(
    'update-local-floor',
    'owner-only update (bindPlan) vs an update answered after one no-op local activity',
    summarize(vsLocalFloor.ours),
    summarize(vsLocalFloor.base),
    'executeUpdate(localFloorUpdate)',
    null,
  );
  const floorRow = latencyRow(
    'update-floor',
    'owner-only update (bindPlan) vs its floor: an update answered after one no-op activity',
    summarize(vsFloor.ours),
    summarize(vsFloor.base),
    'executeUpdate(floorUpdate)',
    null,
  );
  return [
    latencyRow(
      'update',
      'owner-only update (bindPlan)',
      ours,
      base,
      'executeUpdate(noopUpdate)',
      { on: 'ratio', op: '<=', value: 1.3, stat: 'p50' },
      {
        ownerships: k,
        oursMean: ours.mean,
        baseMean: base.mean,
        breakdown,
        workerMetrics,
      },
    ),
    floorRow,
    localFloorRow,
  ];
}
