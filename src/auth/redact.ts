import type { Principal } from '../domain/identity';

/**
 * Redaction of conversation details (docs/guarantees.md#what-is-never-stored-and-what-is-redacted): conversation URLs and titles are
 * sensitive metadata. The conversationId stays, so views remain joinable and "unknown" stays
 * distinguishable from "hidden". Works on any JSON value (views, records, events, receipts,
 * provenance answers, local projections): what is redacted is decided by field names and by the
 * agent worker an object belongs to, so new response shapes are covered without a list of them.
 * Redact structured values BEFORE rendering them to text: a title inside free text cannot be found.
 */

export const REDACTED = '[redacted]';

/** Conversation URLs embedded in free text (log lines, git config dumps); the host list follows canonicalConversationUrl. */
const CONVERSATION_URL_IN_TEXT = /https?:\/\/(?:www\.)?(?:chatgpt\.com|chat\.openai\.com)\/[^\s"'<>]*/gi;

interface Policy {
  /** may conversation details that belong to this agent worker (null: unknown) be shown? */
  maySee(workerId: string | null): boolean;
  redactIds: boolean;
}

/**
 * Reader: every URL and title hidden. Executor: its own worker's conversations in full, every
 * other (or unattributable) one hidden. Admin, landing and the internal system principal: all.
 */
export function redactForPrincipal<T>(principal: Principal, value: T): T {
  return walk(value, null, false, policyFor(principal), new Set()) as T;
}

export interface ExportRedactionOptions {
  /** also hide conversation UUIDs (they may be sensitive too); off by default so exports stay correlatable */
  conversationIds?: boolean;
}

/** For `od-worktree export-diagnostics`: output leaves the local trusted control plane, so nobody's details stay. */
export function redactForExport<T>(value: T, opts: ExportRedactionOptions = {}): T {
  return walk(value, null, false, { maySee: () => false, redactIds: opts.conversationIds === true }, new Set()) as T;
}

function policyFor(p: Principal): Policy {
  switch (p.kind) {
    case 'admin':
    case 'landing':
    case 'system':
      return { maySee: () => true, redactIds: false };
    case 'executor': {
      const own = p.workerId ?? null;
      return { maySee: (w) => own !== null && w === own, redactIds: false };
    }
    default:
      // reader, and any kind added later until someone decides otherwise
      return { maySee: () => false, redactIds: false };
  }
}

/** A key as the rules compare it (lower case, letters and digits); keys are few, so each is worked out once. */
const normed = new Map<string, string>();
function norm(key: string): string {
  let n = normed.get(key);
  if (n === undefined) {
    n = key.toLowerCase().replace(/[^a-z0-9]/g, '');
    if (normed.size < 4096) normed.set(key, n);
  }
  return n;
}

/** Cheaper than the replace below for the common string that names no conversation host at all. */
const MAY_HOLD_URL = /chatgpt\.com|chat\.openai\.com/i;

function walk(value: unknown, worker: string | null, inConversation: boolean, policy: Policy, stack: Set<object>): unknown {
  if (typeof value === 'string') return policy.maySee(worker) || !MAY_HOLD_URL.test(value) ? value : value.replace(CONVERSATION_URL_IN_TEXT, REDACTED);
  if (typeof value !== 'object' || value === null) return value;
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  // Redact what JSON.stringify would emit (a Date becomes its string), not the object's internals.
  if (typeof toJSON === 'function') {
    const json: unknown = toJSON.call(value);
    return json === value ? json : walk(json, worker, inConversation, policy, stack);
  }
  if (stack.has(value)) throw new TypeError('redaction: cyclic value');
  stack.add(value);
  try {
    if (Array.isArray(value)) return value.map((x) => walk(x, worker, inConversation, policy, stack));
    const obj = value as Record<string, unknown>;
    const here = workerOf(obj, worker);
    const hidden = !policy.maySee(here);
    const isConversation = inConversation || 'conversationId' in obj || 'conversationUrl' in obj || obj.provider === 'chatgpt-web';
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(obj)) {
      const x = obj[k];
      const n = norm(k);
      const present = x !== null && x !== undefined;
      let v: unknown;
      if (hidden && present && (n.endsWith('conversationurl') || n.endsWith('conversationtitle') || (isConversation && n === 'title'))) v = REDACTED;
      else if (policy.redactIds && typeof x === 'string' && n.endsWith('conversationid')) v = REDACTED;
      else v = walk(x, here, n.includes('conversation') && !n.endsWith('id'), policy, stack);
      // A "__proto__" key from JSON.parse must stay a plain key, never the prototype.
      if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      else out[k] = v;
    }
    return out;
  } finally {
    stack.delete(value);
  }
}

/**
 * The agent worker an object belongs to: its own `workerId`, else its `worker.workerId` (owners,
 * receipts, provenance, records), else its parent's. An explicit null means unknown, which is
 * never treated as the caller's own.
 */
function workerOf(obj: Record<string, unknown>, inherited: string | null): string | null {
  if ('workerId' in obj) return typeof obj.workerId === 'string' ? obj.workerId : null;
  if ('worker' in obj) {
    const w = obj.worker;
    return typeof w === 'object' && w !== null && typeof (w as { workerId?: unknown }).workerId === 'string' ? (w as { workerId: string }).workerId : null;
  }
  return inherited;
}
