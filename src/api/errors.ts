import { z } from 'zod';
import { OwnershipError } from '../client/errors';
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

/** A key we may name back: the caller made up unknown keys, and they may carry anything (NUL, markup, a token). */
const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]{0,63}$/;

/** A zod failure as a refusal: an unrecognised key is `unknown_field`, anything else `invalid_input`. Field paths only, never values. */
export function refusalFromIssues(issues: readonly { code: string; path: readonly PropertyKey[]; keys?: readonly string[] }[]): OwnershipError {
  const unknown = issues.some((i) => i.code === 'unrecognized_keys');
  const fields = new Set<string>();
  for (const i of issues) {
    const base = i.path.map((c) => (typeof c === 'number' || PLAIN_KEY.test(String(c)) ? String(c) : '(unnamed)')).join('.');
    if (i.code === 'unrecognized_keys' && i.keys) for (const k of i.keys) fields.add(`${base ? `${base}.` : ''}${PLAIN_KEY.test(k) ? k : '(unnamed)'}`);
    else if (base) fields.add(base);
  }
  const list = [...fields].slice(0, 20).map((f) => f.slice(0, 100));
  return new OwnershipError(unknown ? 'unknown_field' : 'invalid_input', undefined, list.length ? { fields: list } : undefined);
}

/** Parses with a schema, refusing like the HTTP API does. */
export function parseInput<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw refusalFromIssues(parsed.error.issues as unknown as Parameters<typeof refusalFromIssues>[0]);
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
    return toFailure(refusalFromIssues(err.issues as unknown as Parameters<typeof refusalFromIssues>[0]));
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
