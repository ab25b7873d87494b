import { z } from 'zod';
import { IdString } from './identity';

/**
 * The seal of a message, as the workflow sees it: written by the sender as `{ messageId, exp }`,
 * rewritten on the worker by the seal codec (src/keys/message-seal.ts) to `{ ok: true, kid, ... }`
 * when its HMAC proves a service process sent it to this very workflow, `{ ok: false }` otherwise.
 * Pure rules here; the key never reaches workflow code.
 */
export const SealSchema = z.strictObject({
  ok: z.boolean().optional(),
  kid: z.string().max(64).optional(),
  /** the update this seal is for (an update id is the message id): a sealed payload replayed under another id is refused */
  messageId: IdString.optional(),
  /** epoch ms after which an update with this seal is refused (captured updates cannot act later) */
  exp: z.number().int().nonnegative().optional(),
});
export type Seal = z.infer<typeof SealSchema>;

/** How long a sealed update counts: far beyond the API's deadline and its retries, short for a captured one. */
export const SEALED_UPDATE_TTL_MS = 10 * 60_000;

export type SealProblem = 'unsealed' | 'expired' | 'other_message';

/**
 * Why a message is not vouched for, or null. Updates bind their id and an expiry; signals have no
 * id, and may wait in history while the worker is down, so they bind only the workflow (in the MAC).
 */
export function sealProblem(raw: unknown, want: { updateId: string | null; nowMs: number }): SealProblem | null {
  const seal = typeof raw === 'object' && raw !== null ? (raw as { seal?: unknown }).seal : undefined;
  if (typeof seal !== 'object' || seal === null || (seal as Seal).ok !== true) return 'unsealed';
  const { messageId, exp } = seal as Seal;
  if (want.updateId === null) return null;
  if (messageId !== want.updateId) return 'other_message';
  if (exp === undefined || exp < want.nowMs) return 'expired';
  return null;
}

/** What the sender puts in a message: the update it is, and when it stops counting. */
export function sealRequest(updateId: string | null, nowMs: number): Seal {
  return updateId === null ? {} : { messageId: updateId, exp: nowMs + SEALED_UPDATE_TTL_MS };
}
