import { z } from 'zod';
import { RemovalFactsSchema, RemovalReceiptSchema } from '../domain/removal';

/**
 * The `--json` output of `od-worktree remove` and `od-worktree gc` (docs/cleanup.md). The facts,
 * verdict and receipt are the rule's own schemas (src/domain/removal.ts).
 */

const RefusalSchema = z.strictObject({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() });

/** Where the ownership's state and liveness came from: the service when it answered, always the local projection. */
export const ServiceSourceSchema = z.strictObject({
  status: z.enum(['used', 'unreachable', 'no_token', 'refused']),
  detail: z.string().nullable(),
});
export type ServiceSource = z.infer<typeof ServiceSourceSchema>;

/** `worktree_removed` sent to the service: recorded (durable), accepted (signalled), or why not. */
export const RemovalRecordSchema = z.strictObject({
  status: z.enum(['recorded', 'accepted', 'not_sent', 'failed']),
  detail: z.string().nullable(),
});
export type RemovalRecord = z.infer<typeof RemovalRecordSchema>;

export const BranchFateSchema = z.strictObject({ name: z.string(), status: z.enum(['kept', 'deleted', 'delete_failed']), detail: z.string().optional() });

export const RemovalResultSchema = z.strictObject({
  worktree: z.string(),
  status: z.enum(['removed', 'would_remove', 'refused', 'failed']),
  refusal: RefusalSchema.nullable(),
  refusals: z.array(RefusalSchema),
  receipt: RemovalReceiptSchema.nullable(),
  facts: RemovalFactsSchema.nullable(),
  removedAt: z.string().nullable(),
  branch: BranchFateSchema.nullable(),
  record: RemovalRecordSchema.nullable(),
  /** a failed git step: what failed (nothing is reported removed) */
  error: z.string().nullable(),
});
export type RemovalResult = z.infer<typeof RemovalResultSchema>;

export const RemoveOutputSchema = z.strictObject({
  ok: z.boolean(),
  dryRun: z.boolean(),
  service: ServiceSourceSchema,
  result: RemovalResultSchema,
});
export type RemoveOutput = z.infer<typeof RemoveOutputSchema>;

export const GcOutputSchema = z.strictObject({
  ok: z.boolean(),
  repo: z.string(),
  applied: z.boolean(),
  service: ServiceSourceSchema,
  results: z.array(RemovalResultSchema),
});
export type GcOutput = z.infer<typeof GcOutputSchema>;
