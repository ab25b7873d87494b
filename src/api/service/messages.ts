import { createHash } from 'node:crypto';
import { ulid } from 'ulidx';
import type { Principal } from '../../domain/identity';

/**
 * Every update the API sends is a message with an id, and that id is Temporal's update id: the one
 * judge of a message is the workflow's update (docs/architecture.md#one-judge). A caller in doubt
 * (a 503, a lost connection) sends the same request again with the same Idempotency-Key: it is the
 * same message, and Temporal answers it again (within a run; across continue-as-new, the run
 * answers from what it carries). The API settles nothing itself.
 */

/** What a write route knows of the message it carries: its id, derived from the caller's Idempotency-Key (messageIdFor). */
export interface MessageContext {
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
