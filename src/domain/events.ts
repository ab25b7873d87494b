import { z } from 'zod';
import { AgentWorkerRefSchema, BranchName, ConversationSchema, FreeText, FullSha, IdString, IsoTime, OwnerSchema, PrincipalSchema } from './identity';

/**
 * The ownership event log (docs/events.md; branch_renamed, stale and handoff_cancelled are events
 * too, so that the record stays a pure fold over events). Every event carries
 * the ownership id, a gap-free seq, a time, the actor and the worktree identity at that moment.
 */

export const LandingReceiptSchema = z.strictObject({
  ownershipId: z.string(),
  sourceBranch: z.string(),
  sourceHead: FullSha,
  landedBranch: z.string().min(1).max(255),
  landedHead: FullSha,
  landedAt: IsoTime,
  worktreePath: z.string(),
  executionSessionId: z.string().nullable(),
  worker: AgentWorkerRefSchema.nullable(),
  conversation: ConversationSchema.nullable(),
});
export type LandingReceipt = z.infer<typeof LandingReceiptSchema>;

const Epoch = z.number().int().nonnegative();

/**
 * What a lossless removal kept and how its branch's commits were found landed (the removal rule's
 * receipt, src/domain/removal.ts, in a bounded form: counts per method rather than every sha, so
 * the event stays small however long the branch). Absent on removals the service was only told of.
 */
export const RemovedReceiptSchema = z.strictObject({
  head: FullSha.nullable(),
  headLandedOn: BranchName.nullable(),
  /** commits of the branch by how each was found landed or kept (ancestry, receipt, patch_id, squash, clean_merge, preserved) */
  accounted: z.strictObject(
    Object.fromEntries(
      ['ancestry', 'receipt', 'patch_id', 'squash', 'clean_merge', 'preserved'].map((m) => [m, z.number().int().nonnegative().optional()]),
    ) as Record<'ancestry' | 'receipt' | 'patch_id' | 'squash' | 'clean_merge' | 'preserved', z.ZodOptional<z.ZodNumber>>,
  ),
  /** the snapshots of its uncommitted and untracked files */
  preserved: z.array(z.strictObject({ ref: BranchName, sha: FullSha, files: z.number().int().nonnegative() })).max(8),
  /** what became of its branch: kept unless asked and safe; absent with no branch (HEAD detached) */
  branch: z.enum(['kept', 'deleted', 'delete_failed']).optional(),
});
export type RemovedReceipt = z.infer<typeof RemovedReceiptSchema>;

/**
 * A child hold: a nested agent's session given standing under its parent's tenure, so it may write
 * in the parent's worktree while the parent owns it (docs/ownership-record.md#child-holds). It
 * lives under one epoch of the parent: a change of owner ends it. A fixed number per ownership
 * (docs/failure-bounds.md), so a record, its history and the gate's projection stay bounded
 * (MAX_HOLDS, defined in src/domain/tenure.ts so the gate's projection reader needs no schema here).
 */
export { MAX_HOLDS } from './tenure';

export const HoldSchema = z.strictObject({
  holdId: IdString,
  /** the child session that holds */
  executionSessionId: IdString,
  /** the owner that granted it, at `epoch` */
  parentExecutionSessionId: IdString,
  epoch: z.number().int().positive(),
  grantedAt: IsoTime,
  /** the child's own lease: silent this long, its hold ends (the parent's liveness is not touched) */
  leaseTtlMs: z.number().int().min(1_000).max(86_400_000),
  runtime: IdString.nullable(),
});
export type Hold = z.infer<typeof HoldSchema>;

export const HOLD_END_REASONS = ['released', 'expired', 'epoch_ended', 'forced'] as const;
export type HoldEndReason = (typeof HOLD_END_REASONS)[number];

export const EventDataSchemas = {
  'ownership.claimed': z.strictObject({
    owner: OwnerSchema,
    epoch: Epoch,
    via: z.enum(['bind', 'handoff', 'after_release']),
    handoffId: z.string().nullable(),
    previousExecutionSessionId: IdString.nullable(),
    lane: FreeText.nullable(),
    planRef: FreeText.nullable(),
    requestId: IdString.nullable(),
  }),
  'ownership.conversation_bound': z.strictObject({
    executionSessionId: IdString,
    conversation: ConversationSchema,
    worker: AgentWorkerRefSchema.nullable().optional(),
  }),
  'ownership.plan_bound': z.strictObject({ lane: FreeText.nullable(), planRef: FreeText.nullable(), requestId: IdString.nullable() }),
  'ownership.heartbeat': z.strictObject({ executionSessionId: IdString, epoch: Epoch, transition: z.enum(['revived', 'periodic']) }),
  'ownership.handoff_started': z.strictObject({
    handoffId: IdString,
    fromExecutionSessionId: IdString,
    toExecutionSessionId: IdString,
    /** absent on events written before handoffs named their successor's worker: the owner's own worker then */
    toWorkerId: IdString.optional(),
    reason: FreeText.nullable(),
    expiresAt: IsoTime,
  }),
  'ownership.handoff_cancelled': z.strictObject({ handoffId: IdString, reason: z.enum(['cancelled', 'timeout']) }),
  'ownership.released': z.strictObject({ executionSessionId: IdString, epoch: Epoch, reason: FreeText.nullable() }),
  'ownership.stale': z.strictObject({ executionSessionId: IdString, epoch: Epoch, verdict: z.literal('dead'), detail: FreeText.nullable() }),
  'ownership.wip_preserved': z.strictObject({
    executionSessionId: IdString,
    ref: z.string(),
    sha: z.string().regex(/^[0-9a-f]{40,64}$/),
    /** paths the snapshot changes against HEAD, and the bytes of their content (absent before sizes were recorded) */
    files: z.number().int().nonnegative().optional(),
    bytes: z.number().int().nonnegative().optional(),
  }),
  /**
   * A reclaim preserved no WIP: no worktree to preserve it from (deleted without a worktree_removed
   * message), or an admin forced the reclaim although preservation failed (`detail`: the host's reason code).
   */
  'ownership.wip_not_preserved': z.strictObject({
    executionSessionId: IdString,
    reason: z.enum(['worktree_missing', 'preservation_failed']),
    detail: z.string().max(64).optional(),
  }),
  'ownership.reclaimed': z.strictObject({
    previousOwner: OwnerSchema.nullable(),
    owner: OwnerSchema,
    epoch: Epoch,
    forced: z.boolean(),
    reason: FreeText.nullable(),
    principal: PrincipalSchema,
  }),
  'ownership.submitted': z.strictObject({ executionSessionId: IdString, epoch: Epoch, head: z.string().nullable() }),
  'ownership.landed': z.strictObject({ receipt: LandingReceiptSchema }),
  'ownership.worktree_removed': z.strictObject({ reason: FreeText.nullable(), receipt: RemovedReceiptSchema.optional(), forced: z.literal(true).optional() }),
  'ownership.branch_renamed': z.strictObject({ from: z.string(), to: z.string().min(1).max(255) }),
  /** the owner gave a child session standing under its tenure (docs/ownership-record.md#child-holds) */
  'ownership.hold_granted': z.strictObject({ hold: HoldSchema }),
  /** a child's hold ended: its own release or the parent's, its lease, the parent's change of epoch, or an admin */
  'ownership.hold_ended': z.strictObject({ holdId: IdString, executionSessionId: IdString, reason: z.enum(HOLD_END_REASONS), detail: FreeText.nullable() }),
} as const;

export type EventType = keyof typeof EventDataSchemas;
export const EVENT_TYPES = Object.keys(EventDataSchemas) as EventType[];

export const EventBaseSchema = z.strictObject({
  ownershipId: z.string(),
  seq: z.number().int().positive(),
  at: IsoTime,
  // Every event names who caused it: the session, the principal, or both (a system one, `system:<part>`, for timeouts and verdicts).
  actor: z
    .strictObject({ executionSessionId: z.string().nullable(), principal: z.string().nullable() })
    .refine((a) => a.executionSessionId !== null || a.principal !== null, 'an event names its actor: a session or a principal'),
  repoRoot: z.string(),
  worktreePath: z.string(),
  branch: z.string(),
  hostId: z.string(),
  /**
   * The message (update) that decided this event: the API's idempotency key, or Temporal's update
   * id. Absent on system events (timeouts, liveness, signals). The workflow answers a retried id
   * from the events it carries (src/workflows/act.ts); the log records, it does not judge.
   */
  messageId: IdString.optional(),
});

export const OwnershipEventSchema = z.discriminatedUnion(
  'type',
  EVENT_TYPES.map((t) => EventBaseSchema.extend({ type: z.literal(t), data: EventDataSchemas[t] })) as unknown as [
    z.ZodObject<{ type: z.ZodLiteral<EventType> }>,
    ...z.ZodObject<{ type: z.ZodLiteral<EventType> }>[],
  ],
);

type Base = z.infer<typeof EventBaseSchema>;
export type EventOf<T extends EventType> = Base & { type: T; data: z.infer<(typeof EventDataSchemas)[T]> };
export type OwnershipEvent = { [T in EventType]: EventOf<T> }[EventType];

/** What a decision produces; the workflow stamps seq, time and identity onto it. */
export type EventDraft = { [T in EventType]: { type: T; data: EventOf<T>['data']; actorSessionId: string | null; principal: string | null } }[EventType];

export function parseEvent(x: unknown): OwnershipEvent {
  return OwnershipEventSchema.parse(x) as OwnershipEvent;
}

/** Where an event happened: the record's worktree identity, or the lifecycle's own before its first event. */
export type EventPlace = Pick<OwnershipEvent, 'repoRoot' | 'worktreePath' | 'branch' | 'hostId'> & { seq: number };

/**
 * A decision's draft as the event the log records: the next seq, its time and actor, and the
 * worktree identity at that moment (a rename moves the branch with the event itself).
 */
export function stampEvent(ownershipId: string, place: EventPlace, d: EventDraft, at: string, messageId?: string): OwnershipEvent {
  return {
    ownershipId,
    seq: place.seq + 1,
    at,
    actor: { executionSessionId: d.actorSessionId, principal: d.principal },
    repoRoot: place.repoRoot,
    worktreePath: place.worktreePath,
    branch: d.type === 'ownership.branch_renamed' ? d.data.to : place.branch,
    hostId: place.hostId,
    ...(messageId !== undefined ? { messageId } : {}),
    type: d.type,
    data: d.data,
  } as OwnershipEvent;
}
