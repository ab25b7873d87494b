import type { AnswerSummary } from '../chaos/answer';
import { JsonLines } from '../chaos/json-lines';
import type { OpName } from '../chaos/ops';

/** Who made a call, as recorded (never the token). */
export type Caller = { kind: 'admin' | 'landing' | 'reader' } | { kind: 'executor'; worker: number; workerId: string };

/** One HTTP call of the run, as sent and as answered. */
export interface CallRecord {
  /** order in which calls were sent */
  n: number;
  /** the operation intent (drawn from the seed) this call belongs to */
  intent: number;
  op: OpName;
  /** which flavour of the operation (legal, stale epoch, hijack, spoofed root, …) */
  variant: string;
  /** refused whatever the interleaving: a 2xx answer is a violation by itself */
  mustRefuse: boolean;
  caller: Caller;
  slot: number;
  /** the ownership addressed in the URL (per-ownership routes) */
  target?: string;
  method: 'GET' | 'POST';
  path: string;
  body?: Record<string, unknown>;
  /** wall-clock ms, sent and answered */
  t0: number;
  t1: number;
  /** 0: no answer (network error or client timeout) */
  status: number;
  code?: string;
  answer?: AnswerSummary;
  /** the message id the service gave this write (response header x-od-message-id), when it gave one */
  messageId?: string;
  /** burst mode: the round the call was fired in */
  round?: number;
}

/** In memory for the checker, and one JSON line per answered call in the run dir. */
export class CallLog extends JsonLines<CallRecord> {}
