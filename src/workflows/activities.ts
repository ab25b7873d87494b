import { ApplicationFailure, isCancellation, proxyActivities, proxyLocalActivities, type ActivityInterfaceFor } from '@temporalio/workflow';
import type { HostActivities, StoreActivities } from '../activities/types';
import { FINAL_HOST_ERRORS } from '../domain/host-errors';
import { hostTaskQueue } from '../domain/queues';
import { REASONS, refusal, type ReasonCode, type Refusal } from '../domain/reasons';
import { HOST_ANSWER_MS, WIP_MS } from '../domain/deadlines';

/** The activities an ownership workflow calls, with their bounds, and how their failures read. */

/**
 * The durable log: local activities, run by the worker that runs the workflow, inside the workflow
 * task. An update that writes one event is one workflow task: its acceptance, the log write's
 * marker and its completion land together (no activity task, no second and third workflow task).
 *
 * What that costs, and how the run pays it (durable-log.ts): a local activity's result reaches
 * history only with the task that ran it, so a task lost after its write (the worker killed, the
 * task timed out) leaves the log ahead of the run. The retried task decides again on the record
 * before that write; the log, holding other events at those seqs, writes nothing and answers with
 * them, and the run adopts them. A refusal writes nothing, so before a handler refuses it reads
 * the log's tail (readLogTail) once.
 *
 * Only the log's two activities are local, and one loop runs them, one at a time: two local
 * activities in flight resolve live in the order they finish and on replay in history's order.
 */
export const log = proxyLocalActivities<Pick<StoreActivities, 'persistEvents' | 'readLogTail'>>({
  startToCloseTimeout: '15s',
  // The durable log is the acknowledgement: keep trying while PostgreSQL is away, never give up silently.
  retry: { initialInterval: '200ms', maximumInterval: '10s' },
});

/** The store's reads (a heartbeat the API recorded, an executor's conversation, the settings): ordinary activities on the workflow's queue. */
export const store = proxyActivities<Omit<StoreActivities, 'persistEvents' | 'readLogTail'>>({
  startToCloseTimeout: '15s',
  retry: { initialInterval: '200ms', maximumInterval: '10s' },
});

/** The host agent's activities as the workflow calls them (with per-call options: summaries). */
export type HostQueue = ActivityInterfaceFor<HostActivities>;

export interface Hosts {
  /** the local projection: patient, it catches up whenever the host is back */
  host: HostQueue;
  /** inside an acknowledgement (a foreign host's first bind): a short, heartbeated bound (deadlines.ts HOST_ANSWER_MS) */
  hostNow: HostQueue;
  /** one question (liveness), asked again at the next deadline */
  hostOnce: HostQueue;
  /** WIP preservation inside a reclaim's answer (deadlines.ts WIP_MS), well within the API's wait for a reclaim */
  hostWip: HostQueue;
}

/**
 * Every host activity is bounded: a host that is down, or a host id no agent serves, costs a
 * message at most these bounds, never a handler that waits forever (which would also keep the
 * run from continuing as new or closing).
 */
export function hostActivities(hostId: string): Hosts {
  const nonRetryableErrorTypes = [...FINAL_HOST_ERRORS];
  const taskQueue = hostTaskQueue(hostId);
  return {
    host: proxyActivities<HostActivities>({
      taskQueue,
      startToCloseTimeout: '60s',
      // The agent heartbeats while it writes: a task lost on its way to a cut-off host is tried again within this, not the 60 s.
      heartbeatTimeout: '10s',
      scheduleToCloseTimeout: '10m',
      retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 20, nonRetryableErrorTypes },
    }),
    hostNow: proxyActivities<HostActivities>({
      taskQueue,
      scheduleToCloseTimeout: HOST_ANSWER_MS,
      startToCloseTimeout: HOST_ANSWER_MS - 5_000,
      heartbeatTimeout: '15s',
      retry: { initialInterval: '1s', maximumInterval: '5s', maximumAttempts: 3, nonRetryableErrorTypes },
    }),
    hostOnce: proxyActivities<HostActivities>({ taskQueue, scheduleToCloseTimeout: '30s', retry: { maximumAttempts: 3 } }),
    hostWip: proxyActivities<HostActivities>({
      taskQueue,
      scheduleToCloseTimeout: WIP_MS,
      startToCloseTimeout: WIP_MS - 5_000,
      heartbeatTimeout: '10s',
      retry: { initialInterval: '1s', maximumInterval: '2s', maximumAttempts: 2, nonRetryableErrorTypes },
    }),
  };
}

/** The reason code a host activity failed with, or null. */
export function failureType(err: unknown): string | null {
  // An ordinary activity's failure wraps the activity's ApplicationFailure; a local one's may come as it, or wrapped deeper.
  for (let e: unknown = err; e instanceof Error; e = (e as Error & { cause?: unknown }).cause) if (e instanceof ApplicationFailure && e.type) return e.type;
  return null;
}

/** A refusal the caller sees: the host's own reason when it gave one, else host_unavailable. Cancellation passes through. */
export function hostRefusal(err: unknown): Refusal {
  if (isCancellation(err)) throw err;
  const type = failureType(err);
  return refusal(type !== null && type in REASONS ? (type as ReasonCode) : 'host_unavailable');
}

/** Refuses the message: the client sees the reason code (src/client/errors.ts). */
export function fail(r: Refusal): never {
  throw ApplicationFailure.create({ type: r.code, message: r.message, nonRetryable: true, details: r.details ? [r.details] : [] });
}
