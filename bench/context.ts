import type { Principal } from '../src/domain/identity';
import type { Worktree } from './fixtures';
import type { BenchStack } from './stack';

/** BENCH_SCALE (default 1): multiplies N, iteration counts and the large history figure. */
export function readScale(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.BENCH_SCALE;
  if (raw === undefined || raw === '') return 1;
  const v = Number(raw);
  if (!Number.isFinite(v) || v <= 0 || v > 10) throw new Error(`BENCH_SCALE must be a number in (0, 10], got ${raw}`);
  return v;
}

export interface Sizes {
  /** Live ownerships for the heartbeat and memory cases (1,000 at full scale). */
  liveOwnerships: number;
  bind: { warmup: number; iterations: number };
  update: { warmup: number; iterations: number; ownerships: number };
  heartbeat: { perWorkflow: number; concurrency: number };
  lookup: { warmup: number; iterations: number };
  projection: { warmup: number; iterations: number };
  commit: { warmup: number; iterations: number };
  list: { warmup: number; iterations: number; small: number; large: number };
  /** How many measured operations get a server-side (history) breakdown. */
  breakdownSamples: number;
}

export function sizesFor(scale: number): Sizes {
  const n = (full: number, min: number) => Math.max(min, Math.round(full * scale));
  return {
    liveOwnerships: n(1_000, 20),
    bind: { warmup: n(10, 3), iterations: n(200, 20) },
    update: { warmup: n(10, 3), iterations: n(300, 30), ownerships: 10 },
    heartbeat: { perWorkflow: 4, concurrency: 32 },
    lookup: { warmup: n(200, 20), iterations: n(2_000, 200) },
    projection: { warmup: n(10, 3), iterations: n(200, 30) },
    commit: { warmup: n(5, 3), iterations: n(100, 20) },
    list: { warmup: n(50, 10), iterations: n(500, 50), small: 1_000, large: Math.max(2_000, Math.round(100_000 * scale)) },
    breakdownSamples: n(30, 10),
  };
}

/** An ownership bound during the run that stays live: the heartbeat, update and lookup cases use it. */
export interface LiveOwnership {
  wt: Worktree;
  workflowId: string;
  ownershipId: string;
  executionSessionId: string;
  epoch: number;
  principal: Principal;
}

export interface BenchContext {
  stack: BenchStack;
  scale: number;
  sizes: Sizes;
}
