import { z } from 'zod';
import { OwnershipError, refusalFromIssues } from '../contract/refusal';
import { REASONS } from '../domain/reasons';
import { REASON_HTTP_STATUS, type ApiErrorCode, type ErrorBody } from '../contract/errors';

/**
 * One mapping from failures to what a caller of the HTTP API or an MCP tool sees: a stable reason
 * code, its fixed message, safe details, and an HTTP status. Payloads are never echoed, and nothing
 * unexpected leaks a stack: an unknown failure is `internal` with a fixed message.
 */

export const RETRY_AFTER_SECONDS = 5;

export function statusOf(code: ApiErrorCode): number {
  return REASON_HTTP_STATUS[code];
}

export interface ApiFailure {
  status: number;
  body: ErrorBody;
  /** seconds, for 503 */
  retryAfter?: number;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/** gRPC: CANCELLED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, UNAVAILABLE */
const GRPC_UNAVAILABLE = new Set([1, 4, 8, 14]);
const UNAVAILABLE_NAMES = new Set(['ServiceError', 'WorkflowUpdateRPCTimeoutOrCancelledError', 'TransportError', 'TimeoutError', 'AbortError']);
const PG_UNAVAILABLE_MESSAGE =
  /connection terminated|timeout exceeded when trying to connect|connection error|Connection refused|the database system is (starting up|shutting down)|Client was closed|Cannot use a pool after calling end/i;

/**
 * Temporal or PostgreSQL not answering (down, restarting, overloaded, our deadline passed): the
 * request may be retried. Walks the cause chain, since both clients wrap transport errors.
 */
export function isUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const x = e as { code?: unknown; name?: unknown; message?: unknown };
    if (typeof x.code === 'string') {
      if (NETWORK_CODES.has(x.code)) return true;
      // PostgreSQL SQLSTATE: class 08 connection exception, 57P0x shutdown/cannot connect now, 53300 too many connections.
      if (/^08...$|^57P0[1-4]$|^53300$/.test(x.code)) return true;
    }
    if (typeof x.code === 'number' && GRPC_UNAVAILABLE.has(x.code) && typeof x.message === 'string') return true;
    if (typeof x.name === 'string' && UNAVAILABLE_NAMES.has(x.name)) return true;
    if (typeof x.message === 'string' && PG_UNAVAILABLE_MESSAGE.test(x.message)) return true;
  }
  return false;
}

/** Safe details only: OwnershipError details are built by the service (owner summaries, field names). */
export function toFailure(err: unknown): ApiFailure {
  if (err instanceof OwnershipError) {
    const status = statusOf(err.code);
    const body: ErrorBody = { code: err.code, message: REASONS[err.code] === err.message ? err.message : safeMessage(err) };
    if (err.details) body.details = err.details;
    return status === 503 ? { status, body, retryAfter: RETRY_AFTER_SECONDS } : { status, body };
  }
  if (err instanceof z.ZodError) {
    return toFailure(refusalFromIssues(err.issues));
  }
  if (isUnavailable(err)) {
    return { status: 503, body: { code: 'unavailable', message: REASONS.unavailable }, retryAfter: RETRY_AFTER_SECONDS };
  }
  return { status: 500, body: { code: 'internal', message: 'internal error' } };
}

/**
 * Workflow refusals carry their own message (e.g. "the ownership is continuing as new"), written
 * by this service, never by the caller; anything long or multi-line falls back to the fixed text.
 */
function safeMessage(err: OwnershipError): string {
  const m = err.message;
  return m.length <= 200 && !m.includes('\n') ? m : REASONS[err.code];
}
