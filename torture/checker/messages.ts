import type { CallRecord } from '../record';
import type { Lifecycle, Log, MessageHit } from './load';
import { couldProduce, is2xx, is4xx } from './match';
import type { Violation } from './types';

/**
 * Checks by message id. Every write the API answers names its message in the response header
 * x-od-message-id (CallRecord.messageId); every event a message decides carries that id as its
 * top-level `messageId` (ownership_events.event->>'messageId'). Calls or events without an id are
 * skipped here (the product before the change, system events, unanswered calls): the time-window
 * checks (refusals.ts, acks.ts) still see them.
 */

/** Writes whose 2xx always stands for an event of their own, or for a replay of one (never for nothing). */
const EVENT_OPS: ReadonlySet<string> = new Set(['handoff', 'accept', 'cancel', 'release', 'submit', 'plan', 'reclaim']);
/**
 * Of those, the ones the service answers 2xx without a new event when the caller's change is
 * already the record (src/domain/decide.ts: a pending handoff to the same successor, an accepted
 * handoff, a release, submit, reclaim by the same session, a plan already bound). Cancel has no
 * such replay: a 2xx cancel without its own event is lost, whatever else the log holds.
 */
const REPLAYABLE: ReadonlySet<string> = new Set(['handoff', 'accept', 'release', 'submit', 'plan', 'reclaim']);

export interface MessageFigures {
  /** write calls answered with a message id */
  withMessageId: number;
  /** 2xx answers of EVENT_OPS whose own event is in the log */
  ackLogged: number;
  /** 2xx answers of EVENT_OPS without an event of their own, explained as a replay of an earlier or another message's event */
  ackReplays: number;
  /**
   * 2xx answers of EVENT_OPS without an event of their own, where the event they could replay
   * carries no message id and was recorded during the call: a replay or a lost event, the log
   * cannot tell. A figure, not a violation.
   */
  ackUnattributed: number;
  /** a few of those, for the reader */
  unattributedExamples: string[];
}

const where = (r: CallRecord) => ({
  call: r.n,
  ...(r.answer?.ownershipId ? { ownershipId: r.answer.ownershipId } : r.target ? { ownershipId: r.target } : {}),
});
const label = (r: CallRecord) => `${r.op}/${r.variant} #${r.n}`;
const hitLabel = (h: { ownershipId: string; seq: number; type: string }) => `${h.type} ${h.ownershipId}#${h.seq}`;

/** duplicate_message: within one lifecycle, no two events share (messageId, type). */
export function checkDuplicateMessages(log: Log, out: Violation[]): void {
  for (const l of log.lifecycles.values()) {
    const seen = new Map<string, number[]>();
    l.events.forEach((e, i) => {
      const id = l.messageIds[i];
      if (!id) return;
      // A request retried against the log goes on as `<id>.1`: both ids are one request.
      const key = `${id.endsWith('.1') ? id.slice(0, -2) : id}\0${e.type}`;
      seen.set(key, [...(seen.get(key) ?? []), e.seq]);
    });
    for (const [key, seqs] of seen) {
      if (seqs.length < 2) continue;
      const [id, type] = key.split('\0');
      out.push({
        check: 'duplicate_message',
        message: `message ${id} has ${seqs.length} ${type} events (seqs ${seqs.join(', ')})`,
        ownershipId: l.ownershipId,
        seq: seqs[1]!,
      });
    }
  }
}

/**
 * The events a request made: those carrying its message id, or the id it went on under when the
 * service retried it against the log (src/api/service/messages.ts successorId: `<id>.1`).
 */
function eventsOfRequest(log: Log, messageId: string): MessageHit[] {
  return [...(log.byMessage.get(messageId) ?? []), ...(log.byMessage.get(`${messageId}.1`) ?? [])];
}

/**
 * refused_yet_logged: a 4xx answer whose message id an event carries (the caller was told no, the
 * log says yes). unavailable_took_effect: the same for a 5xx (the caller was told "try again", so
 * a retry is a second message: the change is applied twice, or by a caller who gave up).
 */
export function checkRefusedMessages(log: Log, calls: readonly CallRecord[], out: Violation[]): void {
  for (const r of calls) {
    if (!r.messageId || r.op === 'get') continue;
    const refused = is4xx(r);
    const unavailable = r.status >= 500;
    if (!refused && !unavailable) continue;
    const hits = eventsOfRequest(log, r.messageId);
    if (!hits.length) continue;
    out.push({
      check: refused ? 'refused_yet_logged' : 'unavailable_took_effect',
      message: `${label(r)} answered ${r.status} ${r.code ?? ''} (message ${r.messageId}), yet the log holds ${hits.map(hitLabel).join(', ')}`,
      ...where(r),
      ownershipId: hits[0]!.ownershipId,
      seq: hits[0]!.seq,
    });
  }
}

/**
 * acknowledged_not_logged: a 2xx answer of a write that always makes an event (handoff, accept,
 * cancel, release, submit, plan, reclaim) carrying a message id must find an event with that id in
 * the log, in the ownership it answered for. Without one it may still be an idempotent replay (the
 * service answers the record as it is): it is when the log holds, up to the answered seq, an event
 * the call could have made that was recorded before the call was sent or that carries another
 * message's id. Nothing of the kind: a violation. An event the call could have made, recorded
 * during the call, without any message id: undecidable, counted in the figures.
 */
export function checkAcknowledgedMessages(log: Log, calls: readonly CallRecord[], out: Violation[]): MessageFigures {
  const figures: MessageFigures = { withMessageId: 0, ackLogged: 0, ackReplays: 0, ackUnattributed: 0, unattributedExamples: [] };
  for (const r of calls) {
    if (r.op === 'get' || !r.messageId) continue;
    figures.withMessageId++;
    if (!is2xx(r) || !EVENT_OPS.has(r.op)) continue;
    const answered = r.answer?.ownershipId ?? r.target;
    const hits = eventsOfRequest(log, r.messageId);
    if (hits.length > 0) {
      if (answered && !hits.some((h) => h.ownershipId === answered)) {
        out.push({
          check: 'acknowledged_not_logged',
          message: `${label(r)} answered ${r.status} for ${answered}, its message ${r.messageId} is logged on another ownership: ${hits.map(hitLabel).join(', ')}`,
          ...where(r),
        });
      } else figures.ackLogged++;
      continue;
    }
    const l = answered ? log.lifecycles.get(answered) : undefined;
    if (!l) {
      out.push({
        check: 'acknowledged_not_logged',
        message: `${label(r)} answered ${r.status} (message ${r.messageId}) for ${answered ?? 'no ownership'}, which has no log`,
        ...where(r),
      });
      continue;
    }
    const upTo = Math.min(r.answer?.seq ?? l.events.length, l.events.length);
    const replayOf = REPLAYABLE.has(r.op) ? replayCandidates(l, r, upTo) : [];
    if (replayOf.length === 0) {
      out.push({
        check: 'acknowledged_not_logged',
        message: `${label(r)} answered ${r.status} at seq ${r.answer?.seq ?? '?'} (message ${r.messageId}); no event carries the message${REPLAYABLE.has(r.op) ? ` and none up to seq ${upTo} is one it could replay` : ` (a ${r.op} is never a replay)`}`,
        ...where(r),
      });
      continue;
    }
    const explained = replayOf.some((i) => l.recordedAt[i]! < r.t0 || (l.messageIds[i] !== null && l.messageIds[i] !== r.messageId));
    if (explained) figures.ackReplays++;
    else {
      figures.ackUnattributed++;
      if (figures.unattributedExamples.length < 5)
        figures.unattributedExamples.push(`${label(r)} on ${l.ownershipId} (could replay seq ${replayOf.map((i) => l.events[i]!.seq).join(',')})`);
    }
  }
  return figures;
}

/** Indexes of the events up to `upTo` that call `r` could have made (what a replay of it answers with). */
function replayCandidates(l: Lifecycle, r: CallRecord, upTo: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < upTo; i++) if (couldProduce(r, l.events[i]!)) out.push(i);
  return out;
}
