import { ownershipWorkflowId } from '../../src/ids/workflow-id';
import { noopStop } from '../workflows/noop';
import { noopUpdateWithStart } from '../noop-client';
import { diff, scrape, type Snapshot } from '../metrics';
import { historyBreakdown, sample, type TimedCall } from '../breakdown';
import type { BenchContext, LiveOwnership } from '../context';
import { asTheApi, bindRequest, executor, type Worktree } from '../fixtures';
import { latencyRow, type Row } from '../report';
import { mapLimit, progressLine, runPair, summarize, wallMs } from '../stats';

/**
 * 1. bind (update-with-start of a new ownership on a fresh worktree, answered once durable and
 *    projected) vs a bare update-with-start of noopWorkflow. Each iteration uses a new worktree /
 *    a new workflow id, so both sides always create.
 */
export async function benchBind(ctx: BenchContext, worktrees: Worktree[], withFloor: boolean): Promise<{ rows: Row[]; bound: LiveOwnership[] }> {
  const { stack, sizes } = ctx;
  const { warmup, iterations } = sizes.bind;
  if (worktrees.length < warmup + iterations) throw new Error('benchBind: not enough worktrees');
  const run = Math.random().toString(36).slice(2, 8);
  const bound: LiveOwnership[] = [];
  const oursCalls: TimedCall[] = [];
  const baseCalls: TimedCall[] = [];
  const noopIds: string[] = [];

  let before: Snapshot = new Map();
  const result = await runPair({
    warmup,
    iterations,
    onMeasureStart: async () => {
      before = await scrape(stack.metricsUrl);
    },
    ours: async (i) => {
      const t0 = wallMs();
      const view = await stack.ownership.bind(bindRequest(worktrees[i], i), await asTheApi(stack.pool, `bench-worker-${i}`));
      const t1 = wallMs();
      const workflowId = ownershipWorkflowId(view.hostId, view.worktreePath);
      if (view.seq !== 1 || view.owner?.executionSessionId !== `bench-session-${i}`) throw new Error(`bind ${i}: unexpected answer (seq ${view.seq})`);
      if (view.projectionSync.localSeq < 1) throw new Error(`bind ${i}: answered before the local projection`);
      if (i >= warmup) oursCalls.push({ workflowId, t0, t1 });
      bound.push({
        wt: worktrees[i],
        workflowId,
        ownershipId: view.ownershipId,
        executionSessionId: `bench-session-${i}`,
        epoch: view.epoch,
        principal: executor(`bench-worker-${i}`),
      });
    },
    base: async (i) => {
      const workflowId = `bench-noop-uws-${run}-${i}`;
      noopIds.push(workflowId);
      const t0 = wallMs();
      await noopUpdateWithStart(stack, workflowId);
      if (i >= warmup) baseCalls.push({ workflowId, t0, t1: wallMs() });
    },
    progress: progressLine('bind vs update-with-start'),
  });

  const workerMetrics = diff(before, await scrape(stack.metricsUrl));
  const ours = summarize(result.ours);
  const base = summarize(result.base);
  const breakdown = {
    bind: await historyBreakdown(stack.temporal, sample(oursCalls, sizes.breakdownSamples)),
    noopUpdateWithStart: await historyBreakdown(stack.temporal, sample(baseCalls, sizes.breakdownSamples)),
  };
  // The primitive a bind is made of (less its first projection): update-with-start answered after one no-op local activity.
  const localFloor = !withFloor
    ? null
    : await runPair({
        warmup,
        iterations,
        ours: async (i) => {
          const workflowId = `bench-lfloor-uws-${run}-${i}`;
          noopIds.push(workflowId);
          await noopUpdateWithStart(stack, workflowId, 'localFloor');
        },
        base: async (i) => {
          const workflowId = `bench-noop-uws2-${run}-${i}`;
          noopIds.push(workflowId);
          await noopUpdateWithStart(stack, workflowId);
        },
        progress: progressLine('local floor vs update-with-start'),
      });
  // The baseline workflows are done with: stop them so they do not count as live workflows later.
  await mapLimit(noopIds, 16, (id) => stack.temporal.workflow.getHandle(id).signal(noopStop));
  const row = latencyRow(
    'bind',
    'bind (update-with-start, new ownership)',
    ours,
    base,
    'executeUpdateWithStart(noopUpdate)',
    { on: 'ratio', op: '<=', value: 1.5, stat: 'p50' },
    {
      oursMean: ours.mean,
      baseMean: base.mean,
      breakdown,
      workerMetrics,
    },
  );
  if (localFloor === null) return { rows: [row], bound };
  const floorRow = latencyRow(
    'bind-local-floor',
    'floor of a bind: update-with-start answered after one no-op local activity',
    summarize(localFloor.ours),
    summarize(localFloor.base),
    'executeUpdateWithStart(noopUpdate)',
    null,
  );
  return { rows: [row, floorRow], bound };
}
