import type { OwnershipEvent } from '../../src/domain/events';
import type { CallRecord } from '../record';

/** Signals (heartbeat, landed, worktree-removed) are applied after their 202: a wider window. */
export const UPDATE_SLACK_MS = 1_000;
export const SIGNAL_SLACK_MS = 5_000;

const body = (r: CallRecord) => (r.body ?? {}) as Record<string, unknown>;
const callerWorker = (r: CallRecord) => (r.caller.kind === 'executor' ? r.caller.workerId : null);

/** The worker a new owner acts for: an executor's own; the one an admin named. */
export function newOwnerWorker(r: CallRecord): string | null {
  if (r.caller.kind === 'executor') return r.caller.workerId;
  const w = body(r).worker as { workerId?: string } | undefined;
  return w?.workerId ?? (typeof body(r).workerId === 'string' ? (body(r).workerId as string) : null);
}

/**
 * Whether call `r` is one that could have produced event `e` (same kind of change, same session,
 * epoch, handoff or head, same worker for a new owner), ignoring time. Events the service makes
 * by itself (stale, handoff timeout, WIP preservation, conversation) are never a call's.
 */
export function couldProduce(r: CallRecord, e: OwnershipEvent): boolean {
  const b = body(r);
  switch (e.type) {
    case 'ownership.claimed':
      if (e.data.via === 'handoff') {
        return (
          r.op === 'accept' &&
          b.executionSessionId === e.data.owner.executionSessionId &&
          b.handoffId === e.data.handoffId &&
          callerWorker(r) === e.data.owner.worker?.workerId
        );
      }
      return r.op === 'bind' && b.executionSessionId === e.data.owner.executionSessionId && newOwnerWorker(r) === e.data.owner.worker?.workerId;
    case 'ownership.reclaimed':
      return r.op === 'reclaim' && b.executionSessionId === e.data.owner.executionSessionId && newOwnerWorker(r) === e.data.owner.worker?.workerId;
    case 'ownership.handoff_started':
      return r.op === 'handoff' && b.executionSessionId === e.data.fromExecutionSessionId && b.toExecutionSessionId === e.data.toExecutionSessionId;
    case 'ownership.handoff_cancelled':
      return e.data.reason === 'cancelled' && r.op === 'cancel' && b.executionSessionId === e.actor.executionSessionId;
    case 'ownership.released':
      return r.op === 'release' && b.executionSessionId === e.data.executionSessionId && b.epoch === e.data.epoch;
    case 'ownership.submitted':
      return r.op === 'submit' && b.executionSessionId === e.data.executionSessionId && b.epoch === e.data.epoch;
    case 'ownership.plan_bound':
      return r.op === 'plan' && b.lane === e.data.lane && b.planRef === e.data.planRef;
    case 'ownership.landed':
      return r.op === 'landed' && b.landedHead === e.data.receipt.landedHead;
    case 'ownership.worktree_removed':
      return r.op === 'worktreeRemoved';
    case 'ownership.heartbeat':
      return r.op === 'heartbeat' && b.executionSessionId === e.data.executionSessionId && b.epoch === e.data.epoch;
    default:
      return false;
  }
}

/** Events no call makes: the service's own (liveness, handoff timeout, WIP kept for a reclaim, conversation picked up). */
export function isServiceEvent(e: OwnershipEvent): boolean {
  return (
    e.type === 'ownership.stale' ||
    e.type === 'ownership.wip_preserved' ||
    e.type === 'ownership.conversation_bound' ||
    e.type === 'ownership.branch_renamed' ||
    (e.type === 'ownership.handoff_cancelled' && e.data.reason === 'timeout')
  );
}

export function slackFor(e: OwnershipEvent): number {
  return e.type === 'ownership.heartbeat' || e.type === 'ownership.landed' || e.type === 'ownership.worktree_removed' ? SIGNAL_SLACK_MS : UPDATE_SLACK_MS;
}

export const within = (r: CallRecord, atMs: number, slack: number) => atMs >= r.t0 - slack && atMs <= r.t1 + slack;

/** A span in which the workflow worker was down (killed, not yet taking tasks again): epoch ms. */
export interface Outage {
  from: number;
  to: number;
}

/**
 * A signal's window (see slackFor) when the workflow worker may have been down: a signal answered
 * 202 just before or during an outage is applied once a worker takes its workflow task again, so
 * its window reaches the end of every outage that began before the slack after its answer ran out.
 * Updates are answered only once applied: their windows never stretch.
 */
export function withinSignal(r: CallRecord, atMs: number, slack: number, outages: readonly Outage[]): boolean {
  if (within(r, atMs, slack)) return true;
  if (atMs < r.t0 - slack) return false;
  return outages.some((o) => o.from <= r.t1 + slack && o.to >= r.t0 && atMs <= o.to + slack);
}
export const is2xx = (r: CallRecord) => r.status >= 200 && r.status < 300;
export const is4xx = (r: CallRecord) => r.status >= 400 && r.status < 500;
