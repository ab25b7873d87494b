import { z } from 'zod';
import { compileCheck } from './check';
import { SealSchema } from './seal';
import {
  AgentWorkerRefSchema,
  BranchName,
  CanonicalConversationSchema,
  FullSha,
  FreeText,
  IdString,
  IsoTime,
  OwnershipIdSchema,
  PrincipalSchema,
  ProcessIdentitySchema,
} from './identity';
import { RemovedReceiptSchema } from './events';

/**
 * Message payloads of the ownership workflow. Strict objects: an unknown field (a conversation,
 * say) is refused, never ignored. The claim carries no conversation at all (docs/identities.md).
 */

const Epoch = z.number().int().positive();

/** The owner's own heartbeat lease, when it differs from the server default (its cadence is its business). */
export const LeaseTtlMs = z.number().int().min(1_000).max(86_400_000);

/**
 * Which lifecycle the caller means. Messages are delivered by workflow id, and a worktree's
 * workflow id carries every lifecycle of it: a message meant for an ended lifecycle must not
 * act on the next one. Optional for direct Temporal clients that address by worktree; the API
 * always sends it.
 */
const Addressed = { ownershipId: OwnershipIdSchema.optional(), seal: SealSchema.optional() };

/**
 * The executor binding of the new owner's worker as the service read it when it sent the message
 * (the binding is the only source of an owner's conversation). The service adds it after the
 * caller's input was checked, under its seal, so the workflow need not read the binding itself (an
 * activity and a workflow task less per claim); a caller never names it (the HTTP bodies and
 * `BindRequest` have no such field). Absent (a message from a sender that does not read it): the
 * workflow reads the binding. A binding that moves after this read is followed by the
 * conversation-bound signal its observation sends, exactly as after the workflow's own read.
 */
export const BindingSeenSchema = z.strictObject({ conversation: CanonicalConversationSchema.nullable() });
export type BindingSeen = z.infer<typeof BindingSeenSchema>;

const NewOwnerFields = {
  ...Addressed,
  binding: BindingSeenSchema.optional(),
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
  branch: BranchName,
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
  /**
   * The sender found the worktree's host agent away (its beacon stale): the dead owner's WIP cannot
   * be preserved now. A reclaim is then refused at once (`host_unavailable`) instead of after the
   * WIP bound; an admin's forced one goes on at once and records why nothing was preserved. Only
   * the service's own (sealed) messages carry it.
   */
  hostAway: z.boolean().optional(),
});
export type ReclaimInput = z.infer<typeof ReclaimInputSchema>;

const OwnerOnly = { ...Addressed, executionSessionId: IdString, epoch: Epoch, principal: PrincipalSchema };

/**
 * A handoff names its successor's agent worker as well as its session: only that worker's executor
 * may accept. The client and the API always name one; absent (messages of earlier versions) means
 * the owner's own worker.
 */
export const HandoffInputSchema = z.strictObject({
  ...OwnerOnly,
  toExecutionSessionId: IdString,
  toWorkerId: IdString.optional(),
  reason: FreeText.nullable().optional(),
});
export type HandoffInput = z.infer<typeof HandoffInputSchema>;

export const CancelHandoffInputSchema = z.strictObject({ ...OwnerOnly });
export type CancelHandoffInput = z.infer<typeof CancelHandoffInputSchema>;

export const ReleaseInputSchema = z.strictObject({ ...OwnerOnly, reason: FreeText.nullable().optional() });
export type ReleaseInput = z.infer<typeof ReleaseInputSchema>;

/** The owner gives a child session standing under its tenure (docs/ownership-record.md#child-holds). */
export const GrantHoldInputSchema = z.strictObject({
  ...OwnerOnly,
  holdId: IdString,
  childExecutionSessionId: IdString,
  runtime: IdString.nullable().optional(),
  leaseTtlMs: LeaseTtlMs.optional(),
});
export type GrantHoldInput = z.infer<typeof GrantHoldInputSchema>;

/**
 * A hold ends: by the child itself or by its parent (the owner), each naming its own session and
 * the epoch the hold lives under; or by an admin with `force` and a reason.
 */
export const EndHoldInputSchema = z.strictObject({
  ...OwnerOnly,
  holdId: IdString,
  force: z.boolean().optional(),
  reason: FreeText.nullable().optional(),
});
export type EndHoldInput = z.infer<typeof EndHoldInputSchema>;

/**
 * A child's heartbeat: it renews its hold's own lease (in the workflow's memory, never the log);
 * the parent's liveness is not touched. `epoch` is the parent tenure the hold lives under.
 */
export const HoldHeartbeatInputSchema = z.strictObject({ ...Addressed, holdId: IdString, executionSessionId: IdString, epoch: Epoch });
export type HoldHeartbeatInput = z.infer<typeof HoldHeartbeatInputSchema>;

export const SubmitInputSchema = z.strictObject({ ...OwnerOnly, head: FullSha.nullable().optional() });
export type SubmitInput = z.infer<typeof SubmitInputSchema>;

export const BindPlanInputSchema = z.strictObject({
  ...OwnerOnly,
  lane: FreeText.nullable().optional(),
  planRef: FreeText.nullable().optional(),
  requestId: IdString.nullable().optional(),
});
export type BindPlanInput = z.infer<typeof BindPlanInputSchema>;

export const RenameBranchInputSchema = z.strictObject({ ...OwnerOnly, from: BranchName, to: BranchName });
export type RenameBranchInput = z.infer<typeof RenameBranchInputSchema>;

export const HeartbeatInputSchema = z.strictObject({ ...Addressed, executionSessionId: IdString, epoch: Epoch });
export type HeartbeatInput = z.infer<typeof HeartbeatInputSchema>;

export const LandedInputSchema = z.strictObject({
  ...Addressed,
  sourceHead: FullSha,
  landedBranch: BranchName,
  landedHead: FullSha,
  landedAt: IsoTime,
  principal: PrincipalSchema,
});
export type LandedInput = z.infer<typeof LandedInputSchema>;

export const WorktreeRemovedInputSchema = z.strictObject({
  ...Addressed,
  reason: FreeText.nullable().optional(),
  /** what the service's own removal kept (POST /v1/worktrees/remove); absent when it was only told */
  receipt: RemovedReceiptSchema.optional(),
  /** recorded by an admin over the host's git (or without asking it): the event says so */
  forced: z.literal(true).optional(),
  principal: PrincipalSchema,
});
export type WorktreeRemovedInput = z.infer<typeof WorktreeRemovedInputSchema>;

export const ConversationBoundInputSchema = z.strictObject({ workerId: IdString, seal: SealSchema.optional() });
export type ConversationBoundInput = z.infer<typeof ConversationBoundInputSchema>;

/** The durable log holds `seq`: a run behind it reads the log's tail and adopts it. */
export const ResyncInputSchema = z.strictObject({ ...Addressed, seq: z.number().int().positive() });
export type ResyncInput = z.infer<typeof ResyncInputSchema>;

export const EventsQueryInputSchema = z.number().int().nonnegative();

/**
 * The same rules as plain validators, compiled once at load, for workflow code (see check.ts):
 * a workflow checks every message without calling into zod.
 */
export const Checks = {
  claim: compileCheck(ClaimInputSchema),
  acceptHandoff: compileCheck(AcceptHandoffInputSchema),
  reclaim: compileCheck(ReclaimInputSchema),
  handoff: compileCheck(HandoffInputSchema),
  cancelHandoff: compileCheck(CancelHandoffInputSchema),
  release: compileCheck(ReleaseInputSchema),
  submit: compileCheck(SubmitInputSchema),
  bindPlan: compileCheck(BindPlanInputSchema),
  renameBranch: compileCheck(RenameBranchInputSchema),
  grantHold: compileCheck(GrantHoldInputSchema),
  endHold: compileCheck(EndHoldInputSchema),
  holdHeartbeat: compileCheck(HoldHeartbeatInputSchema),
  heartbeat: compileCheck(HeartbeatInputSchema),
  landed: compileCheck(LandedInputSchema),
  worktreeRemoved: compileCheck(WorktreeRemovedInputSchema),
  conversationBound: compileCheck(ConversationBoundInputSchema),
  resync: compileCheck(ResyncInputSchema),
} as const;
