import { plan } from '../support/sequencer';

/** Simulates the plan's order on `workers` workers, as jest hands suites to whichever is free. */
function replay(order: string[], workers: number, ms: Record<string, number>, heavy: Set<string>) {
  const freeAt = Array.from({ length: workers }, () => 0);
  let heavyUntil = 0;
  let idle = 0;
  for (const t of order) {
    const w = freeAt.indexOf(Math.min(...freeAt));
    const start = heavy.has(t) ? Math.max(freeAt[w]!, heavyUntil) : freeAt[w]!;
    idle += start - freeAt[w]!;
    freeAt[w] = start + ms[t]!;
    if (heavy.has(t)) heavyUntil = freeAt[w]!;
  }
  return { makespan: Math.max(...freeAt), idle };
}

describe('the suite plan', () => {
  const ms = { h1: 200, h2: 110, h3: 100, a: 170, b: 90, c: 70, d: 60, e: 40, f: 30, g: 20, i: 10 };
  const heavy = new Set(['h1', 'h2', 'h3']);
  const names = Object.keys(ms);

  test('no worker waits on the heavy lock where another suite could run, and the run is no longer than longest-first', () => {
    const order = plan(
      names,
      2,
      (t) => ms[t as keyof typeof ms],
      (t) => heavy.has(t),
    );
    const planned = replay(order, 2, ms, heavy);
    // Plain longest-first puts h1 and h2 on the two workers at once: one waits 200 for the lock.
    const naive = replay(
      [...names].sort((x, y) => ms[y as keyof typeof ms] - ms[x as keyof typeof ms]),
      2,
      ms,
      heavy,
    );
    expect(naive.idle).toBeGreaterThan(0);
    expect(planned.idle).toBe(0);
    expect(planned.makespan).toBeLessThan(naive.makespan);
    expect(order[0]).toBe('h1');
  });

  test('every suite is planned exactly once', () => {
    const order = plan(
      names,
      3,
      (t) => ms[t as keyof typeof ms],
      (t) => heavy.has(t),
    );
    expect([...order].sort()).toEqual([...names].sort());
  });
});
