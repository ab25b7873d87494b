import { z } from 'zod';

/** Rows `history` answers beside the events: recorded overrides (src/store/overrides.ts) and refused messages (src/store/refused-messages.ts). */

export const OverrideRowSchema = z.strictObject({
  overrideId: z.string(),
  ownershipId: z.string(),
  epoch: z.number().int(),
  /** `<kind>:<id>` of the principal that asked */
  principal: z.string(),
  reason: z.string(),
  at: z.string(),
});
export type OverrideRow = z.infer<typeof OverrideRowSchema>;

export const RefusedMessageRowSchema = z.object({
  ownershipId: z.string(),
  message: z.string(),
  messageId: z.string().nullable(),
  code: z.string(),
  problem: z.string(),
  claimedPrincipal: z.string().nullable(),
  receivedAt: z.string(),
});
export type RefusedMessageRow = z.infer<typeof RefusedMessageRowSchema>;
