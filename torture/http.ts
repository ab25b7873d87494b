import type { AnswerSummary } from './record';

export interface Answer {
  status: number;
  body: unknown;
  /** the response's x-od-message-id header, when present */
  messageId?: string;
}

/** The response header naming the message (the idempotency key its events carry as `messageId`) a write was. */
export const MESSAGE_ID_HEADER = 'x-od-message-id';

/** One call; never throws: no answer (refused connection, client timeout) is status 0. */
export async function send(baseUrl: string, method: 'GET' | 'POST', pathAndQuery: string, token: string, body: unknown, timeoutMs: number): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    const res = await fetch(baseUrl + pathAndQuery, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text.slice(0, 200);
    }
    const messageId = res.headers.get(MESSAGE_ID_HEADER);
    return { status: res.status, body: parsed, ...(messageId ? { messageId } : {}) };
  } catch {
    return { status: 0, body: null };
  }
}

type Obj = Record<string, unknown>;
const obj = (x: unknown): Obj | null => (typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Obj) : null);
const str = (x: unknown): string | undefined => (typeof x === 'string' ? x : undefined);
const num = (x: unknown): number | undefined => (typeof x === 'number' ? x : undefined);

/** The fields of a view (bind and every owner update answer with one) that the checker compares with the log. */
export function summarizeView(x: unknown): AnswerSummary | undefined {
  const v = obj(x);
  if (!v || typeof v.ownershipId !== 'string') return undefined;
  const owner = obj(v.owner);
  const worker = obj(v.worker);
  const handoff = obj(v.handoff);
  const out: AnswerSummary = {
    ownershipId: v.ownershipId,
    ownerSession: str(owner?.executionSessionId) ?? null,
    ownerWorker: str(worker?.workerId) ?? null,
    handoffId: str(handoff?.handoffId) ?? null,
    handoffTo: str(handoff?.toExecutionSessionId) ?? null,
    lane: str(v.lane) ?? null,
    planRef: str(v.planRef) ?? null,
  };
  const state = str(v.state);
  if (state !== undefined) out.state = state;
  const epoch = num(v.epoch);
  if (epoch !== undefined) out.epoch = epoch;
  const seq = num(v.seq);
  if (seq !== undefined) out.seq = seq;
  const projection = str(v.projection);
  if (projection !== undefined) out.projection = projection;
  return out;
}

export function summarize(status: number, body: unknown): { code?: string; answer?: AnswerSummary } {
  const b = obj(body);
  if (status >= 400 || status === 0) {
    const code = str(b?.code) ?? (status === 0 ? 'no_answer' : `http_${status}`);
    return b?.details !== undefined ? { code, answer: { details: b.details } } : { code };
  }
  if (b && (b.status === 'recorded' || b.status === 'accepted') && typeof b.ownershipId === 'string') {
    return { answer: { ownershipId: b.ownershipId, landingStatus: b.status } };
  }
  const view = summarizeView(body);
  return view ? { answer: view } : {};
}
