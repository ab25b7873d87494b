import { condition, currentUpdateInfo } from '@temporalio/workflow';
import { checkFailure } from '../domain/check';
import type { Decision } from '../domain/decide';
import type { EventDraft, OwnershipEvent } from '../domain/events';
import { REASONS, refusal, type ReasonCode } from '../domain/reasons';
import type { OwnershipView } from './messages';
import { fail } from './activities';
import { emit } from './durable-log';
import { view, type RunState } from './run-state';

/** How an update is decided, recorded and answered. */

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

/**
 * Decides, emits and answers once the events are durable (read-your-writes). If the log turns
 * out to hold another decision at those seqs, the message is decided again on the adopted
 * record: the answer is always about what the log holds. The answer's `projection` says whether
 * the worktree's hooks enforce it yet: `applied` at once when the log write projected it (its
 * worker is the worktree's host agent); else the host agent writes it, and the client waits for
 * the live memo when it must (OwnershipClient.enforced), nothing the worker sees.
 */
export async function act(s: RunState, decide: () => Decision, onEvents?: (drafts: EventDraft[]) => void): Promise<OwnershipView> {
  const messageId = messageIdOf();
  for (;;) {
    // The log's answer first: a message it already holds (or refused) is never decided again.
    if (messageId !== undefined) {
      const known = await fromLog(s, messageId);
      if (known) return known;
    }
    const drafts = orFail(decide());
    if (drafts.length > 0) onEvents?.(drafts);
    // One emit per event: each publishes its own search attributes.
    const mine = drafts.flatMap((d) => emit(s, [d], undefined, messageId));
    const seq = mine.at(-1)?.seq ?? s.record?.seq ?? 0;
    // A decision that changed nothing (a replay by its content: the handoff already pending, the
    // release already made) rests on the record as it stood, pending events included: answered as
    // of then once those are durable, decided again if the log overrode any of them.
    const noop = mine.length === 0;
    const basis = noop ? s.recentEvents.filter((e) => e.seq > s.sync.durableSeq) : [];
    const asDecided = noop ? view(s, s.record) : null;
    const overridden = () => basis.some((e) => !s.recentEvents.includes(e));
    await condition(() => s.sync.durableSeq >= seq || mine.some((e) => s.lost.has(e)) || overridden());
    if (mine.some((e) => s.lost.has(e)) || overridden()) {
      mine.forEach((e) => s.lost.delete(e));
      continue;
    }
    if (asDecided) return asDecided;
    return view(s)!;
  }
}

/**
 * The record as it stands, answered once every event it holds is durable; null when the log
 * overrode one of them (a message settled refused, a lost task's events adopted), and the caller
 * decides afresh. For an answer taken from the record before any decision (a retry recognised as
 * such): act() waits the same way for the decisions it makes.
 */
export async function durableView(s: RunState): Promise<OwnershipView | null> {
  const basis = s.recentEvents.filter((e) => e.seq > s.sync.durableSeq);
  const upTo = s.record?.seq ?? 0;
  const overridden = () => basis.some((e) => !s.recentEvents.includes(e));
  await condition(() => s.sync.durableSeq >= upTo || overridden());
  return overridden() ? null : view(s);
}

/**
 * The message an update carries: Temporal's update id, which the API sets to its idempotency key,
 * so every retry of one request is one message. Its events record it.
 */
export function messageIdOf(): string | undefined {
  return currentUpdateInfo()?.id;
}

/** The event of this run that bears the message's id, if any (recent events: the log as adopted, plus what is pending). */
function eventOf(s: RunState, messageId: string): OwnershipEvent | undefined {
  for (let i = s.recentEvents.length - 1; i >= 0; i--) if (s.recentEvents[i]!.messageId === messageId) return s.recentEvents[i];
  return undefined;
}

/**
 * What the log already says of a message: settled as refused (its refusal is the answer), or an
 * event bearing its id (answered once durable: another task of this run, or one Temporal lost,
 * decided it, and a retry or a redelivery is the same message). undefined: the log has nothing
 * of it, so it is decided now.
 */
async function fromLog(s: RunState, messageId: string): Promise<OwnershipView | undefined> {
  for (;;) {
    refuseIfSettled(s, messageId);
    if (s.appliedMessages.has(messageId)) return view(s)!;
    const e = eventOf(s, messageId);
    if (!e) return undefined;
    await condition(() => s.sync.durableSeq >= e.seq || !s.recentEvents.includes(e) || s.refusedMessages.has(messageId));
    if (s.recentEvents.includes(e) && s.sync.durableSeq >= e.seq) return view(s)!;
  }
}

/** A validator's side of fromLog: true when the message is known to the log and the handler answers from it. */
export function knownToLog(s: RunState): boolean {
  const messageId = messageIdOf();
  if (messageId === undefined) return false;
  refuseIfSettled(s, messageId);
  return s.appliedMessages.has(messageId) || eventOf(s, messageId) !== undefined;
}

/** A message the log settled as refused is refused again, with the code it was settled with. */
function refuseIfSettled(s: RunState, messageId: string): void {
  const code = s.refusedMessages.get(messageId);
  if (code !== undefined) fail(refusal(code in REASONS ? (code as ReasonCode) : 'unavailable'));
}

/** Counts the run's updates: continue-as-new comes well before Temporal's per-run limit. */
export const counted =
  <A extends unknown[]>(s: RunState, fn: (...a: A) => Promise<OwnershipView>) =>
  async (...a: A): Promise<OwnershipView> => {
    s.updatesThisRun++;
    // A message the log already holds is answered from it, before any other step of its handler.
    const messageId = messageIdOf();
    if (messageId !== undefined) {
      const known = await fromLog(s, messageId);
      if (known) return known;
    }
    return await fn(...a);
  };
