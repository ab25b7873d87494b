import { allHandlersFinished, condition, sleep, workflowInfo } from '@temporalio/workflow';
import type { HostQueue } from './activities';
import { decideHandoffTimeout } from '../domain/decide';
import { orFail } from './act';
import { emit } from './durable-log';
import { checkHoldLeases, checkLease, holdDeadline, leaseDeadline, soonestHold } from './liveness';
import { drainedToLog, now, type RunState } from './run-state';
import { deadlineSummary } from './summaries';

/**
 * The run loop: sleeps until a message changes something, a deadline (the owner's lease, a
 * pending handoff's expiry, a first claim that never came) falls due, the lifecycle closes, or the
 * run is due to continue as new; then drains before the run ends.
 */

/** A workflow whose first claim never succeeded (e.g. refused at update-with-start) ends quietly. */
const ABANDON_MS = 60_000;

const abandonDue = (s: RunState): boolean => s.record === null && Date.now() - s.startedMs >= ABANDON_MS;

/** Closed, or abandoned: no first claim came (the log holds nothing the run did not write). */
export const closed = (s: RunState): boolean => s.record?.state === 'closed' || (abandonDue(s) && drainedToLog(s));

const shouldContinueAsNew = (s: RunState): boolean =>
  workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > s.settings.maxHistoryEvents || s.updatesThisRun >= s.settings.maxUpdatesPerRun;

function nextDeadline(s: RunState): number | undefined {
  const r = s.record;
  const deadlines: number[] = [];
  const lease = leaseDeadline(s);
  if (lease !== null) deadlines.push(lease);
  const hold = holdDeadline(s);
  if (hold !== null) deadlines.push(hold);
  if (r?.state === 'handoff_pending' && r.handoff) deadlines.push(Date.parse(r.handoff.expiresAt));
  if (r === null) deadlines.push(s.startedMs + ABANDON_MS);
  return deadlines.length ? Math.min(...deadlines) : undefined;
}

/** Runs until the lifecycle closes or the run should continue as new. */
export async function runUntilDone(s: RunState, hostOnce: HostQueue): Promise<void> {
  /** The pending deadline timer. */
  let deadline: { at: number; fired: boolean } | null = null;
  const stop = () => closed(s) || shouldContinueAsNew(s);
  for (;;) {
    const seen = s.wake;
    const nowMs = Date.now();
    const next = nextDeadline(s);
    // One timer at a time, armed only when none is pending or a sooner deadline appears: most
    // messages move no deadline, so they cost no timer.
    const timeout = next === undefined ? undefined : Math.max(1, next - nowMs);
    const due = timeout === undefined ? undefined : nowMs + timeout;
    if (due !== undefined && (deadline === null || due < deadline.at)) {
      const t = { at: due, fired: false };
      deadline = t;
      // Not awaited: a timer still pending when the run ends is cancelled, which is fine.
      sleep(timeout!, { summary: deadlineSummary(s.record, holdDeadline(s) === due ? soonestHold(s) : null) }).then(
        () => void (t.fired = true),
        () => undefined,
      );
    }
    const armed = deadline;
    await condition(() => s.wake !== seen || stop() || armed?.fired === true);
    // A fired timer runs the deadline checks whatever else woke the loop (they look at the
    // clock), once: it is consumed here, and the next pass arms another if a deadline remains.
    const woke = armed?.fired !== true;
    if (!woke) deadline = null;

    if (stop()) return;
    if (!woke && s.record) {
      emit(s, orFail(decideHandoffTimeout(s.record, now())));
      checkHoldLeases(s);
      await checkLease(s, hostOnce);
    }
  }
}

/**
 * Drain: every acknowledged event durable, every handler done, the local projection given its
 * chance; re-checked after every await, since a message handled meanwhile may have emitted.
 */
export async function drain(s: RunState): Promise<void> {
  const drained = () => allHandlersFinished() && drainedToLog(s);
  const projected = () => s.sync.localSeq >= (s.record?.seq ?? 0);
  // Updates arriving faster than the worktree's projection could otherwise hold the run off forever.
  s.draining = true;
  let waitMs = s.settings.projectionWaitMs;
  for (;;) {
    await condition(drained);
    const waitedFrom = Date.now();
    const inTime = await condition(() => projected() || !drained(), waitMs);
    if (!drained()) {
      waitMs = s.settings.projectionWaitMs;
      continue;
    }
    const left = waitMs - (Date.now() - waitedFrom);
    if (!inTime || projected() || left <= 0) break;
    // Woken by a handler that has finished since: the SDK checks conditions right after it starts
    // a signal's handler and counts it unfinished until its promise settles, so every signal during
    // the wait wakes it. Taking that for the end of the wait would continue as new with the
    // projection's activity in flight; its completion, landing during that last task, makes the
    // server fail the task (UnhandledCommand) and abort the update it carried ("unexpected workflow
    // task failure", which the client cannot retry). So the wait goes on for what is left of it.
    waitMs = left;
  }
}
