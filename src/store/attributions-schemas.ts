import { z } from 'zod';

/** The wire shapes of commit attributions and refused attempts (no store, no git: the API schemas and the CLI load them). */

export const AttributionViaSchema = z.enum(['session', 'owner_at_time', 'unknown']);
export type AttributionVia = z.infer<typeof AttributionViaSchema>;

export const AuthorSchema = z.strictObject({
  commit: z.string(),
  via: AttributionViaSchema,
  ownershipId: z.string().nullable(),
  epoch: z.number().int().nullable(),
  executionSessionId: z.string().nullable(),
  workerId: z.string().nullable(),
  conversation: z.strictObject({ conversationId: z.string(), conversationUrl: z.string().nullable(), title: z.string().nullable() }).nullable(),
});
export type Author = z.infer<typeof AuthorSchema>;

export const AttemptSchema = z.strictObject({
  kind: z.enum(['ref_refused', 'wrapper_refused']),
  code: z.string(),
  at: z.string(),
  ownershipId: z.string().nullable(),
  epoch: z.number().int().nullable(),
  executionSessionId: z.string().nullable(),
  ownerSessionId: z.string().nullable(),
  ref: z.string().nullable(),
  oldHead: z.string().nullable(),
  newHead: z.string().nullable(),
  command: z.string().nullable(),
  worktreePath: z.string(),
});
export type Attempt = z.infer<typeof AttemptSchema>;
