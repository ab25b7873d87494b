import { z } from 'zod';
import {
  BranchStatusWireSchema,
  HistoryResponseSchema,
  ListItemSchema,
  LivenessSchema,
  OverrideResponseSchema,
  OwnershipItemSchema,
  OwnershipViewSchema,
  TenureSchema,
} from './http';
import { ProvenanceSchema } from './provenance';
import { LeaveObserveResponseSchema, ObserveResponseSchema } from './observers';

/**
 * The `--json` output of the service commands of od-worktree, validated before it is printed and
 * exported for scripts and tests. Every answer has `ok`; a failure is `{ok: false, code, error}`.
 */

export const CliErrorSchema = z.strictObject({ ok: z.literal(false), code: z.string(), error: z.string() });
export type CliError = z.infer<typeof CliErrorSchema>;

/**
 * `ownership` has the shape of every item of `list --json` (OwnershipItemSchema: the record with
 * liveness and branchStatus). `liveness` and `branch` beside it repeat those two for scripts
 * written against earlier versions.
 */
export const WhoOutputSchema = z.strictObject({
  ok: z.literal(true),
  ownership: OwnershipItemSchema,
  liveness: LivenessSchema.nullable(),
  branch: BranchStatusWireSchema.nullable().optional(),
});
export type WhoOutput = z.infer<typeof WhoOutputSchema>;

/** `observe --json`: the registration as it stands after this heartbeat; with --leave, whether a live one ended. */
export const ObserveOutputSchema = ObserveResponseSchema.extend({ ok: z.literal(true) });
export type ObserveOutput = z.infer<typeof ObserveOutputSchema>;
export const LeaveObserveOutputSchema = LeaveObserveResponseSchema.extend({ ok: z.literal(true) });
export type LeaveObserveOutput = z.infer<typeof LeaveObserveOutputSchema>;

export const ListOutputSchema = z.strictObject({ ok: z.literal(true), items: z.array(ListItemSchema), nextCursor: z.string().nullable() });
export type ListOutput = z.infer<typeof ListOutputSchema>;

export const HistoryOutputSchema = HistoryResponseSchema.extend({ ok: z.literal(true) });
export type HistoryOutput = z.infer<typeof HistoryOutputSchema>;

export const ProvenanceOutputSchema = z.strictObject({ ok: z.literal(true), provenance: ProvenanceSchema });
export type ProvenanceOutput = z.infer<typeof ProvenanceOutputSchema>;

/** claim and release answer the ownership's new view. */
export const OwnershipOutputSchema = z.strictObject({ ok: z.literal(true), ownership: OwnershipViewSchema });
export type OwnershipOutput = z.infer<typeof OwnershipOutputSchema>;

/** claim also answers the new owner's tenure proof (null when the answer is about another owner): run git with `tenure.env`. */
export const ClaimOutputSchema = OwnershipOutputSchema.extend({ tenure: TenureSchema.nullable() });
export type ClaimOutput = z.infer<typeof ClaimOutputSchema>;

export const HeartbeatOutputSchema = z.strictObject({ ok: z.literal(true), ownershipId: z.string(), accepted: z.literal(true) });
export type HeartbeatOutput = z.infer<typeof HeartbeatOutputSchema>;

/** `override --json`: the override as recorded, printed before the command runs; the tenure secret goes to the command's environment only. */
export const OverrideOutputSchema = OverrideResponseSchema.omit({ tenure: true }).extend({ ok: z.literal(true) });
export type OverrideOutput = z.infer<typeof OverrideOutputSchema>;
