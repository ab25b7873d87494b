import { cpuNow, cpuPerOp, type CpuSplit } from '../cpu';
import type { Goal, Row } from '../report';
import type { BenchStack } from '../stack';
import { mapLimit, summarize, type Summary } from '../stats';
import { noopUpdateWithStart } from '../noop-client';
import { noopStop } from '../workflows/noop';

/** The bound on a claim while thousands are live: what an orchestrator starting a batch of agents feels. */
const CLAIM_GOAL: Goal = { on: 'absolute', op: '<=', value: 150, p99: 500 };
/** From the first stretch to the last, p50 may grow this much at most (flat in the live count). */
const GROWTH_GOAL: Goal = { on: 'ratio', op: '<=', value: 1.2 };

/** Claims (8 in flight) while `from` → `to` ownerships are live, with the CPU one cost where it ran. */
export function claimRow(
  from: number,
  to: number,
  s: Summary,
  seconds: number,
  cpuPerClaimMs: CpuSplit,
  bare: { summary: Summary; cpuPerOpMs: CpuSplit },
): Row {
  return {
    id: 'claim-at-scale',
    name: `claims while ${from.toLocaleString('en-US')} → ${to.toLocaleString('en-US')} ownerships are live (8 in flight)`,
    unit: 'ms',
    ours: { p50: s.p50, p99: s.p99 },
    base: { p50: bare.summary.p50, p99: bare.summary.p99 },
    baseLabel: 'bare update-with-start of no-op workflows, 8 in flight, before the first stretch',
    ratio: s.p50 / bare.summary.p50,
    goal: CLAIM_GOAL,
    met: s.p50 <= CLAIM_GOAL.value && s.p99 <= CLAIM_GOAL.p99!,
    samples: { ours: s.n, base: bare.summary.n },
    details: {
      mean: s.mean,
      max: s.max,
      perSecond: Math.round((s.n / seconds) * 10) / 10,
      // bench = the worker, the client and the git they run; a claim is CPU-bound when these add up to 2 cores / claims per second.
      cpuPerClaimMs: cpuPerClaimMs,
      bareCpuPerOpMs: bare.cpuPerOpMs,
    },
  };
}

/**
 * What the shape of a claim costs on this machine with nothing of ours in it: update-with-start
 * answered after one ordinary activity (two workflow tasks), 8 in flight, beside the bare
 * update-with-start. A claim answers after its log write, an ordinary activity: no claim can
 * be faster here than this row's p50.
 */
export function claimFloorRow(floor: { summary: Summary; cpuPerOpMs: CpuSplit }, bare: { summary: Summary; cpuPerOpMs: CpuSplit }): Row {
  return {
    id: 'claim-floor',
    name: 'floor of a claim: update-with-start answered after one no-op activity (8 in flight)',
    unit: 'ms',
    ours: { p50: floor.summary.p50, p99: floor.summary.p99 },
    base: { p50: bare.summary.p50, p99: bare.summary.p99 },
    baseLabel: 'bare update-with-start of no-op workflows, 8 in flight',
    ratio: floor.summary.p50 / bare.summary.p50,
    goal: null,
    met: null,
    samples: { ours: floor.summary.n, base: bare.summary.n },
    details: { cpuPerOpMs: floor.cpuPerOpMs, bareCpuPerOpMs: bare.cpuPerOpMs },
  };
}

/** "a → b ownerships are live", from a stretch's row name. */
const spanOf = (r: Row): string => r.name.replace(/^claims while | \(8 in flight\)$/g, '');

/** The last stretch's p50 over the first's: growth with the live count. */
export function claimGrowthRow(stretches: Row[]): Row | null {
  const first = stretches[0];
  const last = stretches[stretches.length - 1];
  if (!first || !last || first === last || !first.ours?.p50 || !last.ours?.p50) return null;
  const ratio = last.ours.p50 / first.ours.p50;
  return {
    id: 'claim-growth',
    name: `claim p50 growth, ${spanOf(first)} to ${spanOf(last)}`,
    unit: 'ms',
    ours: { p50: last.ours.p50, p99: last.ours.p99 },
    base: { p50: first.ours.p50, p99: first.ours.p99 },
    baseLabel: 'the first stretch',
    ratio,
    goal: GROWTH_GOAL,
    met: ratio <= GROWTH_GOAL.value,
  };
}

/**
 * The primitive under the claims, the same way: bare update-with-start of no-op workflows, 8 in
 * flight, with the CPU each cost; the workflows are stopped after, so they never count as live.
 */
export async function bareClaims(stack: BenchStack, count: number, kind: 'noop' | 'floor' = 'noop'): Promise<{ summary: Summary; cpuPerOpMs: CpuSplit }> {
  const run = Math.random().toString(36).slice(2, 8);
  const ids = Array.from({ length: count }, (_, i) => `bench-${kind}-claim-${run}-${i}`);
  const took: number[] = [];
  const cpu0 = cpuNow();
  await mapLimit(ids, 8, async (workflowId) => {
    const t0 = performance.now();
    await noopUpdateWithStart(stack, workflowId, kind);
    took.push(performance.now() - t0);
  });
  const cpuPerOpMs = cpuPerOp(cpu0, cpuNow(), took.length);
  await mapLimit(ids, 16, (id) => stack.temporal.workflow.getHandle(id).signal(noopStop));
  return { summary: summarize(took), cpuPerOpMs };
}
