import { performance } from 'node:perf_hooks';

/** Nearest-rank percentile (p in 0..100) of unsorted samples; NaN when there are none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
}

export interface Summary {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

export function summarize(samples: readonly number[]): Summary {
  const n = samples.length;
  const mean = n ? samples.reduce((a, b) => a + b, 0) / n : Number.NaN;
  return { n, p50: percentile(samples, 50), p99: percentile(samples, 99), mean, min: Math.min(...samples), max: Math.max(...samples) };
}

/** Milliseconds taken by one call. */
export async function timeOnce(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export interface PairResult {
  ours: number[];
  base: number[];
}

/**
 * Runs `ours` and `base` side by side: warm-up rounds first (not recorded), then `iterations`
 * rounds, each timing one call of each, the order alternating every round so neither side always
 * runs on the other's leftovers (GC, a queued background task).
 */
export async function runPair(opts: {
  warmup: number;
  iterations: number;
  ours: (i: number) => Promise<unknown>;
  base: (i: number) => Promise<unknown>;
  progress?: (done: number, total: number) => void;
  /** Called once between the warm-up and the first recorded round (e.g. to snapshot metrics). */
  onMeasureStart?: () => Promise<void>;
}): Promise<PairResult> {
  const ours: number[] = [];
  const base: number[] = [];
  const total = opts.warmup + opts.iterations;
  for (let i = 0; i < total; i++) {
    const record = i >= opts.warmup;
    if (i === opts.warmup) await opts.onMeasureStart?.();
    const a = async () => {
      const t = await timeOnce(() => opts.ours(i));
      if (record) ours.push(t);
    };
    const b = async () => {
      const t = await timeOnce(() => opts.base(i));
      if (record) base.push(t);
    };
    if (i % 2 === 0) {
      await a();
      await b();
    } else {
      await b();
      await a();
    }
    opts.progress?.(i + 1, total);
  }
  return { ours, base };
}

/** Runs `fn` over items with at most `limit` in flight. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i], i);
    }
  });
  await Promise.all(runners);
  return out;
}

/** A progress printer for long phases: at most one stderr line every `everyMs`, plus the last one. */
export function progressLine(label: string, everyMs = 5_000): (done: number, total: number) => void {
  let last = 0;
  return (done, total) => {
    const now = Date.now();
    if (done === total || now - last >= everyMs) {
      last = now;
      process.stderr.write(`[bench]   ${label}: ${done}/${total}\n`);
    }
  };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Wall-clock milliseconds with sub-millisecond precision, comparable with server timestamps. */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
}
