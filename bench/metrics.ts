import { round } from './breakdown';

/**
 * Core's Prometheus metrics, scraped before and after a measured phase: the worker's own view of
 * where time went (workflow task execution, local and remote activity execution, dispatch latency,
 * the worker's completion RPCs to the server). Histograms are compared by their _sum and _count.
 */
export type Snapshot = Map<string, number>;

const KEPT_LABELS = ['workflow_type', 'activity_type', 'operation'];
const WANTED = [
  'temporal_workflow_task_execution_latency',
  'temporal_workflow_task_schedule_to_start_latency',
  'temporal_workflow_task_replay_latency',
  'temporal_local_activity_execution_latency',
  'temporal_local_activity_succeed_endtoend_latency',
  'temporal_activity_execution_latency',
  'temporal_activity_schedule_to_start_latency',
  'temporal_request_latency',
  'temporal_sticky_cache_hit',
  'temporal_sticky_cache_miss',
];

export async function scrape(url: string): Promise<Snapshot> {
  const snap: Snapshot = new Map();
  let text: string;
  try {
    text = await (await fetch(url)).text();
  } catch {
    return snap;
  }
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+?)(_sum|_count)?\{([^}]*)\} ([0-9.eE+-]+)$/.exec(line);
    if (!m) continue;
    const [, name, suffix = '', labelText, value] = m;
    if (!WANTED.includes(name)) continue;
    const labels = [...labelText.matchAll(/([a-z_]+)="([^"]*)"/g)].filter(([, k]) => KEPT_LABELS.includes(k)).map(([, k, v]) => `${k}=${v}`);
    const key = `${name}${suffix}{${labels.join(',')}}`;
    snap.set(key, (snap.get(key) ?? 0) + Number(value));
  }
  return snap;
}

/** Per metric series between two snapshots: how many observations and their mean (ms), or the counter's increase. */
export function diff(before: Snapshot, after: Snapshot): Record<string, { count: number; meanMs?: number }> {
  const out: Record<string, { count: number; meanMs?: number }> = {};
  for (const [key, value] of after) {
    if (key.includes('_sum{')) continue;
    const delta = value - (before.get(key) ?? 0);
    if (delta <= 0) continue;
    if (key.includes('_count{')) {
      const sumKey = key.replace('_count{', '_sum{');
      const sum = (after.get(sumKey) ?? 0) - (before.get(sumKey) ?? 0);
      out[key.replace('_count{', '{').replace(/^temporal_/, '')] = { count: delta, meanMs: round(sum / delta) };
    } else {
      out[key.replace(/^temporal_/, '')] = { count: delta };
    }
  }
  return out;
}

/** Scrapes around `fn`; the result carries the metric deltas of exactly that span. */
export async function withMetrics<T>(url: string, fn: () => Promise<T>): Promise<{ result: T; metrics: ReturnType<typeof diff> }> {
  const before = await scrape(url);
  const result = await fn();
  const after = await scrape(url);
  return { result, metrics: diff(before, after) };
}
