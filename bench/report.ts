import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Summary } from './stats';

export interface Goal {
  /** What the goal is about: the ours/baseline ratio, or the absolute value of `ours.p50`. */
  on: 'ratio' | 'absolute';
  op: '<=' | '>=';
  value: number;
  /** Which statistic the ratio compares (p50 for latencies, throughput for rates). */
  stat?: string;
  /** An absolute goal's bound on p99 too (met only when both hold). */
  p99?: number;
}

export interface Pair {
  p50: number | null;
  p99: number | null;
}

export interface Row {
  id: string;
  name: string;
  unit: string;
  ours: Pair | null;
  base: Pair | null;
  baseLabel: string;
  ratio: number | null;
  goal: Goal | null;
  met: boolean | null;
  samples?: { ours: number; base: number };
  details?: Record<string, unknown>;
}

export function judge(goal: Goal | null, ratio: number | null, oursP50: number | null): boolean | null {
  if (!goal) return null;
  const v = goal.on === 'ratio' ? ratio : oursP50;
  if (v === null || !Number.isFinite(v)) return null;
  return goal.op === '<=' ? v <= goal.value : v >= goal.value;
}

/** A latency pair: ours vs baseline, ratio of the p50s. */
export function latencyRow(
  id: string,
  name: string,
  ours: Summary,
  base: Summary,
  baseLabel: string,
  goal: Goal | null,
  details?: Record<string, unknown>,
): Row {
  const ratio = ours.p50 / base.p50;
  return {
    id,
    name,
    unit: 'ms',
    ours: { p50: ours.p50, p99: ours.p99 },
    base: { p50: base.p50, p99: base.p99 },
    baseLabel,
    ratio,
    goal,
    met: judge(goal, ratio, ours.p50),
    samples: { ours: ours.n, base: base.n },
    ...(details ? { details } : {}),
  };
}

function fmt(v: number | null | undefined, unit = ''): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '-';
  const abs = Math.abs(v);
  const s = abs >= 100 ? v.toFixed(0) : abs >= 10 ? v.toFixed(1) : abs >= 1 ? v.toFixed(2) : v.toFixed(3);
  return unit ? `${s} ${unit}` : s;
}

function goalText(g: Goal | null): string {
  if (!g) return '(info)';
  if (g.on === 'ratio') return `ratio ${g.op} ${g.value}`;
  return g.p99 === undefined ? `${g.op} ${g.value}` : `p50 ${g.op} ${g.value}, p99 ${g.op} ${g.p99}`;
}

export function renderTable(rows: Row[]): string {
  const header = ['name', 'p50', 'p99', 'baseline p50', 'baseline p99', 'ratio', 'goal', 'met?'];
  const lines = rows.map((r) => {
    const met = r.met === null ? 'n/a' : r.met ? 'yes' : 'NO';
    return [
      r.name,
      fmt(r.ours?.p50, r.unit),
      fmt(r.ours?.p99, r.unit),
      fmt(r.base?.p50, r.unit),
      fmt(r.base?.p99, r.unit),
      fmt(r.ratio),
      goalText(r.goal),
      met,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const row = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [row(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(row)].join('\n');
}

export function machineInfo(scale: number, extra: Record<string, unknown>): Record<string, unknown> {
  const cpus = os.cpus();
  let gitVersion = 'unknown';
  try {
    gitVersion = execFileSync('git', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    /* reported as unknown */
  }
  return {
    timestamp: new Date().toISOString(),
    BENCH_SCALE: scale,
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    memoryMiB: Math.round(os.totalmem() / 2 ** 20),
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    git: gitVersion,
    ...extra,
  };
}

export function writeResults(file: string, payload: Record<string, unknown>): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(payload, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)}\n`);
}
