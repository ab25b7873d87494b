import { z } from 'zod';
import { AgentWorkerRefSchema, FreeText, IdString, IsoTime, PrincipalSchema, ProcessIdentitySchema } from './identity';

/**
 * Message payloads of the ownership workflow. Strict objects: an unknown field (a conversation,
 * say) is refused, never ignored. The claim carries no conversation at all (ARCHITECTURE §5).
 */

const Epoch = z.number().int().positive();
/** Full object ids only (SHA-1 or SHA-256): an abbreviation is ambiguous over time and would break idempotency. */
const Sha = z.string().regex(/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/);

/** The owner's own heartbeat lease, when it differs from the server default (its cadence is its business). */
export const LeaseTtlMs = z.number().int().min(1_000).max(86_400_000);

const NewOwnerFields = {
  leaseTtlMs: LeaseTtlMs.optional(),
  executionSessionId: IdString,
  runtime: IdString,
  parentExecutionSessionId: IdString.nullable().optional(),
  worker: AgentWorkerRefSchema,
  process: ProcessIdentitySchema.nullable().optional(),
  principal: PrincipalSchema,
};

export const ClaimInputSchema = z.strictObject({
  ...NewOwnerFields,
  branch: z.string().min(1).max(255),
  lane: FreeText.nullable().optional(),
  planRef: FreeText.nullable().optional(),
  requestId: IdString.nullable().optional(),
});
export type ClaimInput = z.infer<typeof ClaimInputSchema>;

export const AcceptHandoffInputSchema = z.strictObject({ ...NewOwnerFields, handoffId: IdString });
export type AcceptHandoffInput = z.infer<typeof AcceptHandoffInputSchema>;

export const ReclaimInputSchema = z.strictObject({
  ...NewOwnerFields,
  force: z.boolean().optional(),
  reason: FreeText.nullable().optional(),
});
export type ReclaimInput = z.infer<typeof ReclaimInputSchema>;

const OwnerOnly = { executionSessionId: IdString, epoch: Epoch, principal: PrincipalSchema };

export const HandoffInputSchema = z.strictObject({ ...OwnerOnly, toExecutionSessionId: IdString, reason: FreeText.nullable().optional() });
export type HandoffInput = z.infer<typeof HandoffInputSchema>;

export const CancelHandoffInputSchema = z.strictObject({ ...OwnerOnly });
export type CancelHandoffInput = z.infer<typeof CancelHandoffInputSchema>;

export const ReleaseInputSchema = z.strictObject({ ...OwnerOnly, reason: FreeText.nullable().optional() });
export type ReleaseInput = z.infer<typeof ReleaseInputSchema>;

export const SubmitInputSchema = z.strictObject({ ...OwnerOnly, head: Sha.nullable().optional() });
export type SubmitInput = z.infer<typeof SubmitInputSchema>;

export const BindPlanInputSchema = z.strictObject({
  ...OwnerOnly,
  lane: FreeText.nullable().optional(),
  planRef: FreeText.nullable().optional(),
  requestId: IdString.nullable().optional(),
});
export type BindPlanInput = z.infer<typeof BindPlanInputSchema>;

export const RenameBranchInputSchema = z.strictObject({ ...OwnerOnly, from: z.string().min(1).max(255), to: z.string().min(1).max(255) });
export type RenameBranchInput = z.infer<typeof RenameBranchInputSchema>;

export const HeartbeatInputSchema = z.strictObject({ executionSessionId: IdString, epoch: Epoch });
export type HeartbeatInput = z.infer<typeof HeartbeatInputSchema>;

export const LandedInputSchema = z.strictObject({
  sourceHead: Sha,
  landedBranch: z.string().min(1).max(255),
  landedHead: Sha,
  landedAt: IsoTime,
  principal: PrincipalSchema,
});
export type LandedInput = z.infer<typeof LandedInputSchema>;

export const WorktreeRemovedInputSchema = z.strictObject({ reason: FreeText.nullable().optional(), principal: PrincipalSchema });
export type WorktreeRemovedInput = z.infer<typeof WorktreeRemovedInputSchema>;

export const ConversationBoundInputSchema = z.strictObject({ workerId: IdString });
export type ConversationBoundInput = z.infer<typeof ConversationBoundInputSchema>;

export const EventsQueryInputSchema = z.number().int().nonnegative();
