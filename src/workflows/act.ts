import { ApplicationFailure, condition, currentUpdateInfo } from '@temporalio/workflow';
import { checkFailure } from '../domain/check';
import type { Decision } from '../domain/decide';
import type { EventDraft, OwnershipEvent } from '../domain/events';
import { REASONS, refusal, type ReasonCode, type Refusal } from '../domain/reasons';
import type { OwnershipView } from './messages';
import { fail } from './activities';
import { emit, LOG_AHEAD, logWasAhead } from './durable-log';
import { view, type RunState } from './run-state';

/**
 * How an update is decided, recorded and answered. Temporal's update is the one place a message is
 * decided, and its update id is the message id: Temporal answers a retried id itself within a run;
 * across continue-as-new the run carries what it answered (the events bearing each id, and the ids
 * it refused after accepting them), so a retried id gets the same answer in the next run too.
 */

export function orFail(d: Decision): EventDraft[] {
  if ('code' in d) fail(d);
  return d.events;
}

/**
 * Validators refuse what does not match its schema (compiled, no zod at run time: check.ts);
 * handlers then take the accepted input as it is (validators do not run on replay, but what
 * history holds was accepted).
 */
export function validated<T>(accepts: (x: unknown) => x is T, x: unknown): T {
  if (!accepts(x)) fail(refusal(checkFailure(accepts, x) ?? 'invalid_input'));
  return x;
}

/** Reason codes that refuse a message's input as such, whatever the record: a validator gives them at once. */
const INPUT_REFUSALS: ReadonlySet<string> = new Set([
  'invalid_input',
  'unknown_field',
  'nil_uuid',
  'conversation_forbidden',
  'force_requires_admin',
  'force_requires_reason',
  'worktree_mismatch',
  'message_unsealed',
  'unavailable',
]);

/** Whether a validator's failure refuses the input itself (not the record it was checked on). */
export function refusesInput(err: unknown): boolean {
  return err instanceof ApplicationFailure && (err.type === null || err.type === undefined || INPUT_REFUSALS.has(err.type));
}

/**
 * Decides, emits and answers once the events are durable (read-your-writes). The answer's
 * `projection` says whether the worktree's hooks enforce it yet: `applied` at once when the log
 * write projected it (its worker is the worktree's host agent); else the host agent writes it, and
 * the client waits for the live memo when it must (OwnershipClient.enforced).
 *
 * Decided again whenever the log turns out to be ahead of the run (durable-log.ts adopt): events
 * dropped for the log's own, or a decision that writes nothing (a refusal, a replay by content)
 * taken on a record the log had moved past. A refusal is answered only on a record the log holds.
 */
export async function act(s: RunState, decide: () => Decision, onEvents?: (drafts: EventDraft[]) => void): Promise<OwnershipView> {
  const messageId = messageIdOf();
  for (let adopted = false; ; adopted = true) {
    // After an adoption: the lost task may have decided this very message, on a record since moved
    // on (a cancel then refused no_pending_handoff, a lane set again): its event is the answer.
    const answered = adopted ? await answeredByLog(s, messageId) : null;
    if (answered) return answered;
    const d = decide();
    if ('code' in d) {
      if (await logWasAhead(s)) continue;
      fail(d);
    }
    const drafts = d.events;
    if (drafts.length > 0) onEvents?.(drafts);
    // One emit per event: each publishes its own search attributes.
    const mine = drafts.flatMap((x) => emit(s, [x], messageId));
    if (mine.length === 0) {
      // A decision that changed nothing (a replay by its content: the handoff already pending, the
      // release already made) rests on the record as it stood: answered as of then once the log holds it.
      const asDecided = view(s, s.record);
      if (await logWasAhead(s)) continue;
      return (await durableView(s)) === null ? fail(refusal('unavailable')) : asDecided!;
    }
    const last = mine.at(-1)!;
    await condition(() => s.sync.durableSeq >= last.seq || s.refusedEvents.has(last));
    if (mine.some((e) => s.refusedEvents.get(e) === LOG_AHEAD)) continue;
    refuseIfDropped(s, mine);
    return view(s)!;
  }
}

/**
 * A refusal decided before a handler's side effects (a reclaim preserves the dead owner's work
 * first), by act()'s rule: it stands only on a record the log is not ahead of. With the log ahead,
 * the lost task's answer to this very message if it gave one, or the check again on the adopted
 * record. Null: not refused, go on.
 */
export async function refuseFirst(s: RunState, check: () => Refusal | null): Promise<OwnershipView | null> {
  let denied = check();
  if (denied && (await logWasAhead(s))) {
    const answered = await answeredByLog(s, messageIdOf());
    if (answered) return answered;
    denied = check();
  }
  if (denied) fail(denied);
  return null;
}

/** The answer of a message an adopted event bears (the lost task decided it), or null. */
export async function answeredByLog(s: RunState, messageId: string | undefined): Promise<OwnershipView | null> {
  if (messageId === undefined || eventOf(s, messageId) === undefined) return null;
  return await durableView(s);
}

/** The log refused the batch holding these events (durable-log.ts): so is the message. */
function refuseIfDropped(s: RunState, events: readonly OwnershipEvent[]): void {
  for (const e of events) {
    const code = s.refusedEvents.get(e);
    if (code !== undefined) fail(refusal(code in REASONS ? (code as ReasonCode) : 'unavailable'));
  }
}

/**
 * The record as it stands, answered once every event it holds is durable; null when the log
 * refused one of them. For an answer taken from the record before any decision (a retry
 * recognised as such), waiting the same way act() waits for the decisions it makes.
 */
export async function durableView(s: RunState): Promise<OwnershipView | null> {
  const basis = s.recentEvents.filter((e) => e.seq > s.sync.durableSeq);
  const upTo = s.record?.seq ?? 0;
  const dropped = () => basis.some((e) => s.refusedEvents.has(e));
  await condition(() => s.sync.durableSeq >= upTo || dropped());
  return dropped() ? null : view(s);
}

/** The message an update carries: Temporal's update id, which the API sets from its idempotency key. Its events record it. */
export function messageIdOf(): string | undefined {
  return currentUpdateInfo()?.id;
}

/** The event of this run that bears the message's id, if any. */
function eventOf(s: RunState, messageId: string): OwnershipEvent | undefined {
  for (let i = s.recentEvents.length - 1; i >= 0; i--) if (s.recentEvents[i]!.messageId === messageId) return s.recentEvents[i];
  return undefined;
}

/** A validator's side of answered(): true when this id was answered before (this run or one it continues), so the handler answers it again. */
export function answeredBefore(s: RunState): boolean {
  const id = messageIdOf();
  return id !== undefined && (s.refusals.has(id) || eventOf(s, id) !== undefined);
}

/** How many refusals a run remembers (and carries) by message id. */
export const REMEMBERED_REFUSALS = 128;

function rememberRefusal(s: RunState, id: string, code: string): void {
  s.refusals.delete(id);
  s.refusals.set(id, code);
  if (s.refusals.size > REMEMBERED_REFUSALS) s.refusals.delete(s.refusals.keys().next().value!);
}

/**
 * Every update handler: counts the run's updates (continue-as-new comes well before Temporal's
 * per-run limit), answers an id answered before with the same answer, and remembers the refusals it
 * gives after accepting a message, so a retry in the next run is refused alike.
 */
export const counted =
  <A extends unknown[]>(s: RunState, fn: (...a: A) => Promise<OwnershipView>) =>
  async (...a: A): Promise<OwnershipView> => {
    s.updatesThisRun++;
    const id = messageIdOf();
    if (id !== undefined) {
      const code = s.refusals.get(id);
      if (code !== undefined) fail(refusal(code in REASONS ? (code as ReasonCode) : 'unavailable'));
      const e = eventOf(s, id);
      if (e) {
        await condition(() => s.sync.durableSeq >= e.seq || s.refusedEvents.has(e));
        // Dropped for a lost task's events: decided again below, on the record that adopted them.
        if (s.refusedEvents.get(e) !== LOG_AHEAD) {
          refuseIfDropped(s, [e]);
          return view(s)!;
        }
      }
    }
    try {
      return await fn(...a);
    } catch (err) {
      // 'unavailable' is a moment's, never the message's answer: a retry is decided afresh.
      if (id !== undefined && err instanceof ApplicationFailure && err.type && err.type !== 'unavailable') rememberRefusal(s, id, err.type);
      throw err;
    }
  };
