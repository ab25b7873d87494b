/**
 * The one seeded PRNG (mulberry32) of every chaos run: a run's whole choice of operations follows
 * from one printed seed, so a failing run can be repeated with `--seed`. Not for anything secret.
 */
export class Rng {
  private state: number;
  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /**
   * A stream of its own for request `index` of a run (splitmix-style mixing, so neighbouring
   * indices give unrelated streams): request i is the same whatever concurrency did to the others.
   */
  static forRequest(seed: number, index: number): Rng {
    let h = (seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
    return new Rng((h ^ (h >>> 16)) >>> 0);
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** An integer in [lo, hi]. */
  between(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error('Rng.pick: empty list');
    return xs[this.int(xs.length)]!;
  }

  /** One of `xs`, with probability proportional to its weight: [[weight, value], ...]. */
  choose<T>(xs: readonly (readonly [number, T])[]): T {
    const total = xs.reduce((n, [w]) => n + w, 0);
    let r = this.next() * total;
    for (const [w, v] of xs) {
      r -= w;
      if (r < 0) return v;
    }
    return xs[xs.length - 1]![1];
  }

  /** One key of `weights`, with probability proportional to its weight (keys weighing 0 never). */
  weighted<K extends string>(weights: Readonly<Partial<Record<K, number>>>): K {
    return this.choose((Object.entries(weights) as [K, number][]).filter(([, w]) => w > 0).map(([k, w]) => [w, k] as const));
  }

  /** A child generator (one per driver of a fault run), so drivers do not perturb each other's choices. */
  fork(salt: number): Rng {
    return new Rng((this.seed ^ Math.imul(salt + 1, 0x9e3779b1)) >>> 0);
  }

  /** `n` hex digits. */
  hex(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += '0123456789abcdef'[this.between(0, 15)];
    return s;
  }

  /** A short [a-z0-9] tag. */
  tag(n = 6): string {
    let s = '';
    for (let i = 0; i < n; i++) s += 'abcdefghijklmnopqrstuvwxyz0123456789'[this.between(0, 35)];
    return s;
  }
}

/** A seed for a run that was given none: printed, so the run can be repeated. */
export function freshSeed(): number {
  return Math.floor(Math.random() * 2 ** 31);
}
