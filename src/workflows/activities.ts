import { ActivityFailure, ApplicationFailure, isCancellation, proxyActivities, proxyLocalActivities, type ActivityInterfaceFor } from '@temporalio/workflow';
import type { HostActivities, StoreActivities } from '../activities/types';
import { hostTaskQueue } from '../domain/queues';
import { REASONS, refusal, type ReasonCode, type Refusal } from '../domain/reasons';

/** The activities an ownership workflow calls, with their bounds, and how their failures read. */

export const store = proxyLocalActivities<StoreActivities>({
  startToCloseTimeout: '15s',
  // The durable log is the acknowledgement: keep trying while PostgreSQL is away, never give up silently.
  retry: { initialInterval: '200ms', maximumInterval: '10s' },
});

/**
 * The same store activities as ordinary activities, on the workflow's own task queue (log-by-activity-v1).
 *
 * Why not local: a local activity runs inside the workflow task and its result is recorded as a
 * marker when the task completes. Under a burst of updates on one ownership that broke the run two
 * ways. (1) An update accepted in a task and completed in the same task after a local activity it
 * waited for (its events durable) does not replay: the SDK applies the completion before the
 * acceptance ("UpdateMachine in state CompletedCommandCreated ... WorkflowExecutionUpdateAccepted");
 * two local activities in flight resolve live in the order they finished and on replay in another
 * ("recorded marker 'readExecutorConversation' does not match ... 'persistEvents'"). (2) Tasks held
 * open by local activities time out ("Task not found when completing") and are lost after their
 * activities wrote to PostgreSQL: the log ahead of the run, every time. An ordinary activity's
 * result is an event in history, in the order the server recorded it, live and on replay alike.
 */
const storeTask = proxyActivities<StoreActivities>({
  startToCloseTimeout: '15s',
  retry: { initialInterval: '200ms', maximumInterval: '10s' },
});

/** The store as this run calls it: ordinary activities since log-by-activity-v1, local ones before. */
export function storeOf(s: { readonly logByActivity: boolean }): typeof store {
  return s.logByActivity ? storeTask : store;
}

/** Git errors no retry changes (the host agent's activities fail with these types too). */
export const FINAL_HOST_ERRORS = ['path_outside_allowed_roots', 'path_not_found', 'not_a_worktree', 'git_too_old', 'worktree_missing', 'projection_conflict', 'worktree_config_unsafe', 'branch_mismatch', 'detached_head'];

/**
 * The projection as a local activity of a workflow worker on the worktree's own host (see
 * StoreActivities.applyProjectionHere): briefly retried; anything but a final git refusal falls
 * back to the host agent's queue.
 */
export const here = proxyLocalActivities<Pick<StoreActivities, 'preserveWipHere'>>({
  // Within reclaim's own bound (45 s on the host agent's queue), fallback included.
  startToCloseTimeout: '20s',
  retry: { initialInterval: '200ms', maximumInterval: '1s', maximumAttempts: 2, nonRetryableErrorTypes: [...FINAL_HOST_ERRORS, 'not_this_host'] },
});

/**
 * The projection written here, inside an owner change's answer: bounded like the wait it replaces
 * (projectionWaitMs, 10 s), so a slow worktree (its writer lock held, git starved) makes the answer
 * say `projection: "pending"` and leaves the write to the host agent, never holds the answer past
 * the API's deadline. A projection normally takes milliseconds.
 */
export const projectHere = proxyLocalActivities<Pick<StoreActivities, 'applyProjectionHere'>>({
  startToCloseTimeout: '5s',
  scheduleToCloseTimeout: '10s',
  retry: { initialInterval: '200ms', maximumInterval: '1s', maximumAttempts: 2, nonRetryableErrorTypes: [...FINAL_HOST_ERRORS, 'not_this_host'] },
});

/** The host agent's activities as the workflow calls them (with per-call options: summaries). */
export type HostQueue = ActivityInterfaceFor<HostActivities>;

export interface Hosts {
  /** the local projection: patient, it catches up whenever the host is back */
  host: HostQueue;
  /** inside an acknowledgement (reclaim, a foreign host's first bind): a short, heartbeated bound */
  hostNow: HostQueue;
  /** one question (liveness), asked again at the next deadline */
  hostOnce: HostQueue;
  /** WIP preservation inside a reclaim's answer: 25 s in all, so the answer comes well within the API's 60 s */
  hostWip: HostQueue;
}

/**
 * Every host activity is bounded: a host that is down, or a host id no agent serves, costs a
 * message at most these bounds, never a handler that waits forever (which would also keep the
 * run from continuing as new or closing).
 */
export function hostActivities(hostId: string): Hosts {
  const nonRetryableErrorTypes = FINAL_HOST_ERRORS;
  const taskQueue = hostTaskQueue(hostId);
  return {
    host: proxyActivities<HostActivities>({
      taskQueue,
      startToCloseTimeout: '60s',
      scheduleToCloseTimeout: '10m',
      retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 20, nonRetryableErrorTypes },
    }),
    hostNow: proxyActivities<HostActivities>({
      taskQueue,
      scheduleToCloseTimeout: '45s',
      startToCloseTimeout: '40s',
      heartbeatTimeout: '15s',
      retry: { initialInterval: '1s', maximumInterval: '5s', maximumAttempts: 3, nonRetryableErrorTypes },
    }),
    hostOnce: proxyActivities<HostActivities>({ taskQueue, scheduleToCloseTimeout: '30s', retry: { maximumAttempts: 3 } }),
    hostWip: proxyActivities<HostActivities>({
      taskQueue,
      scheduleToCloseTimeout: '25s',
      startToCloseTimeout: '20s',
      heartbeatTimeout: '10s',
      retry: { initialInterval: '1s', maximumInterval: '2s', maximumAttempts: 2, nonRetryableErrorTypes },
    }),
  };
}

/** The reason code a host activity failed with, or null. */
export function failureType(err: unknown): string | null {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? (err.cause.type ?? null) : null;
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
