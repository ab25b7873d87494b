import { summarize, type AnswerSummary } from '../chaos/answer';
import { errorBodyProblems, stackLike } from '../chaos/answer-rules';
import { send } from '../chaos/http';
import { JsonLines } from '../chaos/json-lines';
import type { OpName } from '../chaos/ops';

/** faults/ calls an operation an Op. */
export type Op = OpName;

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

export interface Answer {
  record: CallRecord;
  body: unknown;
}

/** Every call of the run, in memory for the checker and one JSON line each in the run dir. */
export class CallLog {
  private readonly lines: JsonLines<CallRecord>;
  phase = 'setup';
  constructor(file: string | null) {
    this.lines = new JsonLines(file);
  }
  get records(): readonly CallRecord[] {
    return this.lines.records;
  }
  add(r: Omit<CallRecord, 'n' | 'phase'>): CallRecord {
    return this.lines.add({ n: this.lines.nextN(), phase: this.phase, ...r });
  }
  close(): Promise<void> {
    return this.lines.close();
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
export async function call(
  log: CallLog,
  baseUrl: string,
  method: 'GET' | 'POST',
  pathAndQuery: string,
  token: string,
  body: unknown,
  meta: CallMeta,
  timeoutMs: number,
): Promise<Answer> {
  const t0 = Date.now();
  const res = await send(baseUrl, method, pathAndQuery, token, body, timeoutMs);
  const t1 = Date.now();
  const { status, text } = res;
  const parsed = res.notJson ? null : res.body;
  let unsafeBody = res.notJson ? `not JSON: ${text.slice(0, 120)}` : undefined;
  const rec: Omit<CallRecord, 'n' | 'phase'> = { ...meta, method, path: pathAndQuery, t0, t1, status };
  if (status >= 400 || status === 0) rec.code = summarize(status, parsed).code;
  if (status >= 400) {
    rec.retryAfter = res.retryAfter;
    if (unsafeBody === undefined && errorBodyProblems(parsed, text).length > 0) unsafeBody = `not an error body: ${text.slice(0, 120)}`;
  }
  const stack = unsafeBody === undefined ? stackLike(text) : null;
  if (stack !== null) unsafeBody = `stack-like text: ${stack}`;
  if (unsafeBody !== undefined) rec.unsafeBody = unsafeBody;
  if (status >= 200 && status < 300) {
    const { answer } = summarize(status, parsed);
    if (answer) rec.answer = answer;
  }
  return { record: log.add(rec), body: parsed };
}
