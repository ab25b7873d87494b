import { createHash } from 'node:crypto';
import { ulid } from 'ulidx';
import { OwnershipError } from '../../client/errors';
import type { Principal } from '../../domain/identity';
import { messageOutcome, settleRefused } from '../../store/event-store';
import { isUnavailable } from '../errors';
import type { OwnershipViewOut } from '../../contract/http';
import { redact, type ServiceDeps } from './context';
import { ownershipView } from './live';

/**
 * An answer is the log's answer. Every update the API sends is a message with an id (Temporal's
 * update id, the same for every attempt of one request); its events record the id, and the log
 * keeps one outcome per message (message_outcomes). Before the API answers a message with a
 * refusal or gives up on it (503), it settles it as refused, so no workflow task can write its
 * events afterwards; if its events got there first, they are the answer instead (a 2xx).
 */

/** What a write route knows of the message it carries: the caller's Idempotency-Key, if any. */
export interface MessageContext {
  /** an id already derived for this request (see messageIdFor) */
  messageId?: string;
}

/**
 * The message id of a request: derived from the caller's Idempotency-Key, scoped to the caller (two
 * principals' keys never name one message), else a fresh one. Opaque: no key is ever stored as sent.
 */
export function messageIdFor(principal: Principal | null, idempotencyKey: string | undefined): string {
  if (idempotencyKey === undefined) return `msg_${ulid()}`;
  const who = principal ? `${principal.kind}:${principal.id}` : 'anonymous';
  return `msg_${createHash('sha256').update(`${who}\0${idempotencyKey}`).digest('hex').slice(0, 32)}`;
}

/** The refusal code a failed call answers with, as it is settled: a refusal's own, else unavailable. */
export function settledCode(err: unknown): string {
  return err instanceof OwnershipError ? err.code : isUnavailable(err) ? 'unavailable' : 'internal';
}

/**
 * The id a request goes on under when its first message was refused by a workflow behind the log
 * (againstTheLog): the first stays refused for ever, and this one carries the request's events.
 */
export const successorId = (messageId: string): string => `${messageId}.1`;
const isSuccessorId = (messageId: string): boolean => messageId.endsWith('.1');

/** The message a request is now: a retry against the log sends it again under a new id (see againstTheLog). */
export interface Message {
  id: string;
}

/**
 * Runs one message and settles it when it does not answer 2xx. `ownershipId`: the ownership it is
 * addressed to (null for a bind, which may start one). A message the log holds as applied is
 * answered from the log, even when the call itself was refused, failed or timed out.
 */
export async function asMessage(
  deps: ServiceDeps,
  principal: Principal,
  ctx: MessageContext,
  ownershipId: string | null,
  call: (message: Message) => Promise<OwnershipViewOut>,
): Promise<OwnershipViewOut> {
  const message: Message = { id: ctx.messageId ?? messageIdFor(principal, undefined) };
  try {
    return await call(message);
  } catch (err) {
    // Settled before the caller hears it: a refusal the workflow gave, and every failure in doubt.
    let outcome = await settleRefused(deps.pool, message.id, ownershipId, settledCode(err)).catch(() => null);
    // A request retried against the log went on under its successor id (againstTheLog): when that
    // applied, this request took effect, and a retry of it is answered so, not refused.
    if (outcome?.outcome === 'refused' && !isSuccessorId(message.id)) outcome = await messageOutcome(deps.pool, successorId(message.id)).catch(() => null);
    if (outcome?.outcome !== 'applied') throw err;
    if (ownershipId !== null && outcome.ownershipId !== ownershipId) throw err;
    // The ownership as it stands with that message applied, as GET shows it.
    const answer = await ownershipView(deps, outcome.ownershipId).catch(() => null);
    if (!answer) throw err;
    return redact(principal, answer);
  }
}
