import { condition, workflowInfo } from '@temporalio/workflow';
import { stampEvent, type EventDraft, type OwnershipEvent } from '../domain/events';
import { applyEvent } from '../domain/projection';
import { failureType, log } from './activities';
import { followProjected } from './projection-loop';
import { publish } from './publish';
import { persistSummary } from './summaries';
import { followOwnerChange, now, type RunState } from './run-state';

/**
 * The durable log: decisions become events here (stamped, folded into the record, queued), and
 * one loop hands them to PostgreSQL in order, one local activity per batch (activities.ts says
 * why local). The workflow is the judge and PostgreSQL the record: the log never overrides a
 * decision. It answers otherwise in two cases only:
 * - it holds other events from the batch's first seq: a task of this run wrote them and was lost
 *   before its result reached history. They are this run's own decisions, made by this code on
 *   this record, and lookups may have read them: the run adopts them (adopt), and the messages
 *   whose events were dropped are decided again on the adopted record (act.ts, and `redo` for
 *   signals). The same happens when a read of the tail finds events (readTail).
 * - it refuses the batch for a constraint no decision here can see: one live ownership per worktree
 *   across workflow ids (a lifecycle under an older id, a moved worktree). Then nothing of the batch
 *   is durable, the record falls back to the log's, and every message whose events it held is
 *   refused with that code (act.ts).
 */

const RECENT_EVENTS = 200;

/** What refusedEvents holds for an event dropped because the log was ahead: its message is decided again. */
export const LOG_AHEAD = 'log_ahead';

/**
 * Stamps drafts into events, folds them into the record, and queues them for the durable log.
 * `redo` decides a signal's events again if the log drops them for a lost task's.
 */
export function emit(s: RunState, drafts: EventDraft[], messageId?: string, redo?: () => void): OwnershipEvent[] {
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
    if (redo) s.redo.set(event, redo);
    remember(s, [event]);
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
    await condition(() => s.pending.length > 0 || s.tailWanted > s.tailRead);
    // A write that starts at the run's position proves the log held nothing past it, as a read of the tail would.
    const covers = s.tailWanted;
    if (s.pending.length === 0) await readTail(s);
    else await write(s);
    s.tailRead = Math.max(s.tailRead, covers);
  }
}

async function write(s: RunState): Promise<void> {
  const batch = s.pending;
  s.pending = [];
  try {
    const { durableSeq, projected, tenure, ahead } = await log.persistEvents.executeWithOptions({ summary: persistSummary(batch) }, [
      workflowInfo().workflowId,
      batch,
      s.durableRecord,
    ]);
    seenLive(s);
    if (ahead) return adopt(s, ahead, [...batch, ...s.pending]);
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

/**
 * Whether the log held events past the run's position, now adopted (the caller decides again):
 * asked before a decision that writes nothing is answered (a refusal, a decision that changes
 * nothing), once what was emitted before it is durable. One read of the tail, or none when a
 * write is on its way anyway.
 */
export async function logWasAhead(s: RunState): Promise<boolean> {
  const ticket = ++s.tailWanted;
  const adoptions = s.adoptions;
  await condition(() => s.tailRead >= ticket);
  return s.adoptions > adoptions;
}

async function readTail(s: RunState): Promise<void> {
  const tail = await log.readLogTail.executeWithOptions({ summary: `log past seq ${s.sync.durableSeq}` }, [s.ownershipId, s.sync.durableSeq]);
  seenLive(s);
  if (tail.length > 0) adopt(s, tail, s.pending);
}

function seenLive(s: RunState): void {
  if (!workflowInfo().unsafe.isReplaying) s.logSeenLive = true;
}

/**
 * The log holds `tail` past the run's position, written by a task of this run that was lost:
 * they become the record, and the events decided meanwhile (`dropped`) are gone; their updates
 * decide again (act.ts), their signals through `redo`, and liveness follows the adopted events.
 */
function adopt(s: RunState, tail: OwnershipEvent[], dropped: OwnershipEvent[]): void {
  s.adoptions++;
  drop(s, dropped, LOG_AHEAD);
  for (const e of tail) {
    s.record = applyEvent(s.record, e);
    followOwnerChange(s, e);
  }
  s.durableRecord = s.record;
  s.sync.durableSeq = s.record?.seq ?? 0;
  remember(s, tail);
  publish(s);
  s.wake++;
  const redos = new Set(dropped.map((e) => s.redo.get(e)).filter((f) => f !== undefined));
  for (const redo of redos) redo();
}

/**
 * Nothing of `events` is durable, and nothing decided on them holds: the record is the log's again,
 * and the messages that emitted them are refused with `code` (their handlers are waiting in act.ts).
 */
function refuseBatch(s: RunState, events: OwnershipEvent[], code: string): void {
  drop(s, events, code);
  if (!s.record) Object.assign(s.liveness, { status: 'unowned', verdict: null });
  publish(s);
  s.wake++;
}

/** `events` never become durable: their messages get `code`, and the record is the log's again. */
function drop(s: RunState, events: OwnershipEvent[], code: string): void {
  const gone = new Set(events);
  for (const e of events) s.refusedEvents.set(e, code);
  s.pending = [];
  s.recentEvents = s.recentEvents.filter((e) => !gone.has(e));
  s.record = s.durableRecord;
}

function remember(s: RunState, events: OwnershipEvent[]): void {
  s.recentEvents.push(...events);
  if (s.recentEvents.length > RECENT_EVENTS) s.recentEvents = s.recentEvents.slice(-RECENT_EVENTS);
}
