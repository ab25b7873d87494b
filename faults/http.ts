import { createWriteStream, type WriteStream } from 'node:fs';

export type Op =
  | 'bind'
  | 'heartbeat'
  | 'plan'
  | 'handoff'
  | 'accept'
  | 'cancel'
  | 'release'
  | 'reclaim'
  | 'submit'
  | 'landed'
  | 'worktreeRemoved'
  | 'get';

/** The parts of an answer the checker compares with the log. */
export interface AnswerSummary {
  ownershipId?: string;
  state?: string;
  epoch?: number;
  seq?: number;
  ownerSession?: string | null;
  handoffId?: string | null;
  handoffTo?: string | null;
  projection?: string | null;
  /** landings: recorded (durable) or accepted (signalled only) */
  landingStatus?: string;
}

/** One HTTP call, as sent and as answered (never a token). */
export interface CallRecord {
  n: number;
  phase: string;
  slot: number;
  /** the intent (one logical operation, retried on 503) this call is an attempt of; -1 for reads */
  intent: number;
  attempt: number;
  op: Op;
  method: 'GET' | 'POST';
  path: string;
  /** the body's identifying fields (sessions, epoch, handoff, lane, heads), for the checker */
  fields: Record<string, unknown>;
  t0: number;
  t1: number;
  /** 0: no answer (refused connection or the client's own timeout) */
  status: number;
  code?: string;
  retryAfter?: string | null;
  /** an error body that is not `{code, message[, details]}` or carries anything like a stack */
  unsafeBody?: string;
  answer?: AnswerSummary;
}

type Obj = Record<string, unknown>;
const obj = (x: unknown): Obj | null => (typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Obj) : null);
const str = (x: unknown): string | undefined => (typeof x === 'string' ? x : undefined);
const num = (x: unknown): number | undefined => (typeof x === 'number' ? x : undefined);

/** Anything a caller must never see: a stack frame, a source location, an exception's name. */
const STACKISH = /\n\s+at\s|\bat\s+\S+\s+\(|\.(?:ts|js):\d+|\b(?:TypeError|ReferenceError|SyntaxError|RangeError)\b|node_modules/;

export function summarizeView(x: unknown): AnswerSummary | undefined {
  const v = obj(x);
  if (!v || typeof v.ownershipId !== 'string') return undefined;
  const owner = obj(v.owner);
  const handoff = obj(v.handoff);
  const out: AnswerSummary = {
    ownershipId: v.ownershipId,
    ownerSession: str(owner?.executionSessionId) ?? null,
    handoffId: str(handoff?.handoffId) ?? null,
    handoffTo: str(handoff?.toExecutionSessionId) ?? null,
    projection: str(v.projection) ?? null,
  };
  const state = str(v.state);
  if (state !== undefined) out.state = state;
  const epoch = num(v.epoch);
  if (epoch !== undefined) out.epoch = epoch;
  const seq = num(v.seq);
  if (seq !== undefined) out.seq = seq;
  return out;
}

export interface Answer {
  record: CallRecord;
  body: unknown;
}

/** Every call of the run, in memory for the checker and one JSON line each in the run dir. */
export class CallLog {
  readonly records: CallRecord[] = [];
  private readonly out: WriteStream | null;
  private n = 0;
  phase = 'setup';
  constructor(file: string | null) {
    this.out = file ? createWriteStream(file, { flags: 'w' }) : null;
  }
  add(r: Omit<CallRecord, 'n' | 'phase'>): CallRecord {
    const full: CallRecord = { n: this.n++, phase: this.phase, ...r };
    this.records.push(full);
    this.out?.write(`${JSON.stringify(full)}\n`);
    return full;
  }
  close(): Promise<void> {
    const out = this.out;
    if (!out) return Promise.resolve();
    return new Promise((resolve) => out.end(resolve));
  }
}

export interface CallMeta {
  op: Op;
  slot: number;
  intent: number;
  attempt: number;
  fields: Record<string, unknown>;
}

/** One call; never throws: no answer is status 0. */
export async function call(log: CallLog, baseUrl: string, method: 'GET' | 'POST', pathAndQuery: string, token: string, body: unknown, meta: CallMeta, timeoutMs: number): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const t0 = Date.now();
  let status = 0;
  let text = '';
  let retryAfter: string | null = null;
  try {
    const res = await fetch(baseUrl + pathAndQuery, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
    status = res.status;
    retryAfter = res.headers.get('retry-after');
    text = await res.text();
  } catch {
    status = 0;
  }
  const t1 = Date.now();
  let parsed: unknown = null;
  let unsafeBody: string | undefined;
  if (status !== 0) {
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      unsafeBody = `not JSON: ${text.slice(0, 120)}`;
    }
  }
  const rec: Omit<CallRecord, 'n' | 'phase'> = { ...meta, method, path: pathAndQuery, t0, t1, status };
  const b = obj(parsed);
  if (status >= 400) {
    rec.code = str(b?.code) ?? `http_${status}`;
    rec.retryAfter = retryAfter;
    const keys = b ? Object.keys(b) : [];
    if (unsafeBody === undefined && (!b || typeof b.code !== 'string' || typeof b.message !== 'string' || keys.some((k) => !['code', 'message', 'details'].includes(k)))) {
      unsafeBody = `not an error body: ${text.slice(0, 120)}`;
    }
  } else if (status === 0) {
    rec.code = 'no_answer';
  }
  if (unsafeBody === undefined && STACKISH.test(text)) unsafeBody = `stack-like text: ${text.match(STACKISH)?.[0] ?? ''}`;
  if (unsafeBody !== undefined) rec.unsafeBody = unsafeBody;
  if (status >= 200 && status < 300) {
    if (b && (b.status === 'recorded' || b.status === 'accepted') && typeof b.ownershipId === 'string') rec.answer = { ownershipId: b.ownershipId, landingStatus: b.status };
    else {
      const v = summarizeView(parsed);
      if (v) rec.answer = v;
    }
  }
  return { record: log.add(rec), body: parsed };
}
