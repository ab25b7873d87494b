/**
 * What a chaos run keeps of an answer for its checker: the fields of an ownership view (bind and
 * every owner update answer with one), a landing's status, or a refusal's code and details.
 */
export interface AnswerSummary {
  ownershipId?: string;
  state?: string;
  epoch?: number;
  seq?: number;
  ownerSession?: string | null;
  ownerWorker?: string | null;
  handoffId?: string | null;
  handoffTo?: string | null;
  lane?: string | null;
  planRef?: string | null;
  /** owner-changing answers: whether the worktree's local projection already shows it */
  projection?: string;
  /** landings: recorded (durable) or accepted (signalled only) */
  landingStatus?: string;
  /** refusals: the owner summary or current epoch the service disclosed */
  details?: unknown;
}

type Obj = Record<string, unknown>;
export const obj = (x: unknown): Obj | null => (typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Obj) : null);
const str = (x: unknown): string | undefined => (typeof x === 'string' ? x : undefined);
const num = (x: unknown): number | undefined => (typeof x === 'number' ? x : undefined);

/** The fields of a view that a checker compares with the log; undefined when `x` is no view. */
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

/** A refusal's code (`no_answer` for status 0) and details; a landing's status; else the view. */
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
