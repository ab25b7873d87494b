import { createWriteStream, type WriteStream } from 'node:fs';

/** Who made a call, as recorded (never the token). */
export type Caller = { kind: 'admin' | 'landing' | 'reader' } | { kind: 'executor'; worker: number; workerId: string };

/** The parts of an answer the checker compares with the log. */
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

export type OpName =
  | 'bind'
  | 'heartbeat'
  | 'handoff'
  | 'accept'
  | 'cancel'
  | 'release'
  | 'reclaim'
  | 'submit'
  | 'landed'
  | 'plan'
  | 'worktreeRemoved'
  | 'get';

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
export class CallLog {
  readonly records: CallRecord[] = [];
  private readonly out: WriteStream | null;
  private n = 0;
  constructor(file: string | null) {
    this.out = file ? createWriteStream(file, { flags: 'w' }) : null;
  }
  nextN(): number {
    return this.n++;
  }
  add(r: CallRecord): void {
    this.records.push(r);
    this.out?.write(`${JSON.stringify(r)}\n`);
  }
  close(): Promise<void> {
    const out = this.out;
    if (!out) return Promise.resolve();
    return new Promise((resolve) => out.end(resolve));
  }
}
