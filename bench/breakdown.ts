import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { percentile } from './stats';

const ET = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** One measured call: which workflow, and when (wall-clock ms) the client sent it and got the answer. */
export interface TimedCall {
  workflowId: string;
  t0: number;
  t1: number;
}

function eventMs(e: HistoryEvent): number {
  const ts = e.eventTime;
  if (!ts) return Number.NaN;
  const s = ts.seconds;
  const secs = s === null || s === undefined ? 0 : typeof s === 'number' ? s : s.toNumber();
  return secs * 1000 + (ts.nanos ?? 0) / 1e6;
}

/**
 * Where the time of one call went, read off the workflow's history (server timestamps, same clock
 * as the client on this machine):
 * - clientToServer: request sent → first history event of the call (RPC in, server-side admission)
 * - wftQueue / wftRun: workflow tasks scheduled → picked up by the worker → completed. The
 *   durable-store work is an ordinary activity between two workflow tasks (src/workflows/activities.ts
 *   says why not a local one), so it shows as activity time, not inside wftRun.
 * - activityQueue / activityRun: the call's activities (the store's and the host's git), dispatched and executed
 * - serverToClient: the call's last history event (update completed) → answer received
 * - unaccounted: the rest (server persistence between events, gaps)
 */
export interface CallBreakdown {
  total: number;
  clientToServer: number;
  wftQueue: number;
  wftRun: number;
  workflowTasks: number;
  activityQueue: number;
  activityRun: number;
  activities: number;
  serverToClient: number;
  unaccounted: number;
}

/** History events of each type written between the call's send and its answer (the work it cost the server). */
export function eventTypesOf(events: HistoryEvent[], call: TimedCall, slackMs = 2): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of events) {
    const t = eventMs(e);
    if (t < call.t0 - slackMs || t > call.t1 + slackMs) continue;
    const name = (ET[e.eventType ?? 0] ?? 'UNKNOWN').replace(/^EVENT_TYPE_/, '');
    out.set(name, (out.get(name) ?? 0) + 1);
  }
  return out;
}

export function analyseCall(events: HistoryEvent[], call: TimedCall, slackMs = 2): CallBreakdown | null {
  const inWindow = events.filter((e) => {
    const t = eventMs(e);
    return t >= call.t0 - slackMs && t <= call.t1 + slackMs;
  });
  if (inWindow.length === 0) return null;
  const byId = new Map<number, HistoryEvent>();
  for (const e of events) byId.set(Number(e.eventId), e);
  let wftQueue = 0;
  let wftRun = 0;
  let workflowTasks = 0;
  let activityQueue = 0;
  let activityRun = 0;
  let activities = 0;
  let lastAnswer: number | null = null;
  for (const e of inWindow) {
    const t = eventMs(e);
    switch (e.eventType) {
      case ET.EVENT_TYPE_WORKFLOW_TASK_STARTED: {
        const sched = byId.get(Number(e.workflowTaskStartedEventAttributes?.scheduledEventId));
        if (sched) wftQueue += t - Math.max(eventMs(sched), call.t0);
        break;
      }
      case ET.EVENT_TYPE_WORKFLOW_TASK_COMPLETED: {
        const started = byId.get(Number(e.workflowTaskCompletedEventAttributes?.startedEventId));
        if (started) {
          wftRun += t - Math.max(eventMs(started), call.t0);
          workflowTasks++;
        }
        break;
      }
      case ET.EVENT_TYPE_ACTIVITY_TASK_STARTED: {
        const sched = byId.get(Number(e.activityTaskStartedEventAttributes?.scheduledEventId));
        if (sched && eventMs(sched) >= call.t0 - slackMs) activityQueue += t - eventMs(sched);
        break;
      }
      case ET.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
        const sched = byId.get(Number(e.activityTaskCompletedEventAttributes?.scheduledEventId));
        const started = byId.get(Number(e.activityTaskCompletedEventAttributes?.startedEventId));
        if (sched && started && eventMs(sched) >= call.t0 - slackMs) {
          activityRun += t - eventMs(started);
          activities++;
        }
        break;
      }
      case ET.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
        lastAnswer = t;
        break;
      default:
        break;
    }
  }
  const total = call.t1 - call.t0;
  const first = eventMs(inWindow[0]);
  const clientToServer = Math.max(0, first - call.t0);
  const serverToClient = lastAnswer === null ? 0 : Math.max(0, call.t1 - lastAnswer);
  const unaccounted = total - clientToServer - wftQueue - wftRun - activityQueue - activityRun - serverToClient;
  return { total, clientToServer, wftQueue, wftRun, workflowTasks, activityQueue, activityRun, activities, serverToClient, unaccounted };
}

/** Median of every component over the sampled calls (components do not add up exactly: each is its own median). */
export async function historyBreakdown(client: Client, calls: TimedCall[]): Promise<Record<string, unknown> & { samples: number }> {
  const histories = new Map<string, HistoryEvent[]>();
  const parts: CallBreakdown[] = [];
  const types = new Map<string, number>();
  for (const call of calls) {
    let events = histories.get(call.workflowId);
    if (!events) {
      const h = await client.workflow.getHandle(call.workflowId).fetchHistory();
      events = h.events ?? [];
      histories.set(call.workflowId, events);
    }
    const b = analyseCall(events, call);
    if (b) parts.push(b);
    for (const [k, v] of eventTypesOf(events, call)) types.set(k, (types.get(k) ?? 0) + v);
  }
  const keys: (keyof CallBreakdown)[] = [
    'total',
    'clientToServer',
    'wftQueue',
    'wftRun',
    'workflowTasks',
    'activityQueue',
    'activityRun',
    'activities',
    'serverToClient',
    'unaccounted',
  ];
  const out: Record<string, unknown> = {};
  for (const k of keys)
    out[`${k}P50`] = round(
      percentile(
        parts.map((p) => p[k]),
        50,
      ),
    );
  out.historyEventsPerCall = Object.fromEntries([...types].map(([k, v]) => [k, round(v / Math.max(1, calls.length))]));
  return Object.assign(out, { samples: parts.length });
}

export function round(v: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

/** Evenly spread picks of at most `count` items. */
export function sample<T>(items: readonly T[], count: number): T[] {
  if (items.length <= count) return [...items];
  const step = items.length / count;
  return Array.from({ length: count }, (_, i) => items[Math.floor(i * step)]);
}
