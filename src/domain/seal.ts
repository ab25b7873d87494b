import { z } from 'zod';
import { IdString } from './identity';

/**
 * The seal of a message, as the workflow sees it: written by the sender as `{ messageId, exp }`,
 * rewritten on the worker by the seal codec (src/keys/message-seal.ts) to `{ ok: true, kid,
 * notAfter?, ... }` when its HMAC proves a service process sent it to this very workflow, `{ ok:
 * false }` otherwise. The codec judges every payload addressed to a workflow on its parsed value,
 * so a seal the sender wrote never reaches the workflow. Pure rules here; the key never reaches
 * workflow code.
 */
export const SealSchema = z.strictObject({
  ok: z.boolean().optional(),
  kid: z.string().max(64).optional(),
  /** the message this seal is for (an update's id is the message id): a sealed payload replayed under another id, or twice, is refused */
  messageId: IdString.optional(),
  /** epoch ms after which the message is refused (a captured message cannot act later) */
  exp: z.number().int().nonnegative().optional(),
  /** set by the codec only: the end of the sealing key's window (a retired key) */
  notAfter: z.number().int().optional(),
});
export type Seal = z.infer<typeof SealSchema>;

/** How long a sealed update counts: far beyond the API's deadline and its retries, short for a captured one. */
export const SEALED_UPDATE_TTL_MS = 10 * 60_000;
/**
 * How long a sealed signal counts: a signal may wait in history while no worker runs (a landing
 * the controller reported during an outage), so longer than an update, and bounded: a signal
 * copied out of a history acts at most once (its id is remembered, src/workflows/seal.ts) and
 * never after this.
 */
export const SEALED_SIGNAL_TTL_MS = 6 * 60 * 60_000;
/** How long a sealed start input counts, against the run's own start time: a client's start, or the run a continue-as-new begins. */
export const SEALED_START_TTL_MS = 10 * 60_000;

export type SealProblem = 'unsealed' | 'expired' | 'other_message' | 'key_retired' | 'replayed';

/** What a message must prove: an update names its id, a signal has an id of its own, a start only its time. */
export type SealWant =
  | { kind: 'update'; updateId: string | null; nowMs: number }
  | { kind: 'signal'; nowMs: number; seen?: (messageId: string) => boolean }
  | { kind: 'start'; runStartMs: number };

const sealOf = (raw: unknown): Seal | null => {
  if (typeof raw !== 'object' || raw === null || !Object.hasOwn(raw, 'seal')) return null;
  const seal = (raw as { seal?: unknown }).seal;
  return typeof seal === 'object' && seal !== null && (seal as Seal).ok === true ? (seal as Seal) : null;
};

/** Why a message is not vouched for, or null. */
export function sealProblem(raw: unknown, want: SealWant): SealProblem | null {
  const seal = sealOf(raw);
  if (seal === null) return 'unsealed';
  const atMs = want.kind === 'start' ? want.runStartMs : want.nowMs;
  if (seal.notAfter !== undefined && atMs > seal.notAfter) return 'key_retired';
  if (want.kind === 'update' && seal.messageId !== want.updateId) return 'other_message';
  if (want.kind === 'signal' && seal.messageId === undefined) return 'other_message';
  if (seal.exp === undefined || seal.exp < atMs) return 'expired';
  if (want.kind === 'signal' && want.seen?.(seal.messageId!) === true) return 'replayed';
  return null;
}

/** What the sender puts in a message: the message it is, and when it stops counting. */
export function sealRequest(kind: 'update' | 'signal', messageId: string, nowMs: number): Seal {
  return { messageId, exp: nowMs + (kind === 'update' ? SEALED_UPDATE_TTL_MS : SEALED_SIGNAL_TTL_MS) };
}

/** What a start input carries: when it stops counting as the start of a run. */
export const startSealRequest = (nowMs: number): Seal => ({ exp: nowMs + SEALED_START_TTL_MS });
