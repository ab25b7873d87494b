import { condition, workflowInfo } from '@temporalio/workflow';
import { stampEvent, type EventDraft, type OwnershipEvent } from '../domain/events';
import { applyEvent } from '../domain/projection';
import { failureType, store } from './activities';
import { followProjected } from './projection-loop';
import { publish } from './publish';
import { persistSummary } from './summaries';
import { followOwnerChange, now, type RunState } from './run-state';

/**
 * The durable log: decisions become events here (stamped, folded into the record, queued), and
 * one loop hands them to PostgreSQL in order, one ordinary activity per batch. The workflow is the
 * judge and PostgreSQL the record: the activity's input is fixed in history before it runs, so a
 * retried write sends the same events and the log takes them as sent (src/store/event-store.ts).
 * The log never overrides a decision. Its one refusal is a constraint no decision here can see:
 * one live ownership per worktree across workflow ids (a lifecycle under an older id, a moved
 * worktree). Then nothing of the batch is durable, the record falls back to the log's, and every
 * message whose events it held is refused with that code (act.ts).
 */

const RECENT_EVENTS = 200;

/** Stamps drafts into events, folds them into the record, and queues them for the durable log. */
export function emit(s: RunState, drafts: EventDraft[], messageId?: string): OwnershipEvent[] {
  const out: OwnershipEvent[] = [];
  const { worktree } = s;
  for (const d of drafts) {
    const base = s.record ?? {
      repoRoot: s.verified?.repoRoot ?? worktree.repoRoot,
      worktreePath: worktree.worktreePath,
      branch: s.verified?.branch ?? worktree.branch,
      hostId: worktree.hostId,
      seq: 0,
    };
    const event = stampEvent(s.ownershipId, base, d, now(), messageId);
    s.record = applyEvent(s.record, event);
    s.pending.push(event);
    out.push(event);
    s.recentEvents.push(event);
    if (s.recentEvents.length > RECENT_EVENTS) s.recentEvents = s.recentEvents.slice(-RECENT_EVENTS);
    followOwnerChange(s, event);
  }
  if (drafts.length > 0) {
    publish(s);
    s.wake++;
  }
  return out;
}

export async function persistLoop(s: RunState): Promise<never> {
  for (;;) {
    await condition(() => s.pending.length > 0);
    const batch = s.pending;
    s.pending = [];
    try {
      const { durableSeq, projected, tenure } = await store.persistEvents.executeWithOptions({ summary: persistSummary(batch) }, [
        workflowInfo().workflowId,
        batch,
      ]);
      for (const e of batch) s.durableRecord = applyEvent(s.durableRecord, e);
      s.sync.durableSeq = Math.max(s.sync.durableSeq, durableSeq);
      s.tenure = tenure ?? null;
      // Written into the worktree by the same activity (a worker that is its host's agent).
      if (projected) followProjected(s.sync, projected.localSeq, projected.branch);
    } catch (err) {
      // Only a non-retryable failure reaches here (the store's retries are unbounded): the log refused the batch.
      refuseBatch(s, [...batch, ...s.pending], failureType(err) ?? 'unavailable');
    }
  }
}

/**
 * Nothing of `events` is durable, and nothing decided on them holds: the record is the log's again,
 * and the messages that emitted them are refused with `code` (their handlers are waiting in act.ts).
 */
function refuseBatch(s: RunState, events: OwnershipEvent[], code: string): void {
  const gone = new Set(events);
  for (const e of events) s.refusedEvents.set(e, code);
  s.pending = [];
  s.record = s.durableRecord;
  s.recentEvents = s.recentEvents.filter((e) => !gone.has(e));
  if (!s.record) Object.assign(s.liveness, { status: 'unowned', verdict: null });
  publish(s);
  s.wake++;
}
