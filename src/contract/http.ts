import { z } from 'zod';
import { AttemptSchema, CommitReportSchema, LateAttemptSchema } from './attributions';
import { RefusedMessageRowSchema } from './history-rows';
import { OverrideRowSchema } from './history-rows';
import { TENURE_SECRET } from '../domain/tenure';
import { LeaseTtlMs } from '../domain/commands';
import { LandingReceiptSchema, RemovedReceiptSchema } from '../domain/events';
import {
  BranchName,
  FreeText,
  FULL_SHA,
  IdString,
  IsoTimeInput,
  OwnerSchema,
  OwnershipIdSchema,
  PathString,
  ProcessIdentitySchema,
  StorableText,
} from '../domain/identity';
import { OwnershipRecordSchema, OwnershipStateSchema, OWNERSHIP_STATES } from '../domain/projection';
import { LineageLinkSchema, LIST_MAX_LIMIT } from './lookups';
import { ObserverViewSchema } from './observers';

/**
 * The wire contract of the HTTP API and the MCP tools: request bodies and queries (validated),
 * responses (serialised and documented), all as zod schemas, which are also the TypeScript types
 * and the OpenAPI document. Bodies never carry a principal or a conversation: the principal comes
 * from the bearer token, the conversation from the executor binding (docs/identities.md).
 */

const Path = PathString;
const Branch = BranchName;
const Epoch = z.number().int().positive();
// Full object ids, as the ownership's commands take them (src/domain/commands.ts): an abbreviation passed here and was refused there.
const Sha = z.string().regex(FULL_SHA, 'a full lowercase hex commit id (40 or 64 digits)');

// --- requests ------------------------------------------------------------------------------------

/** The agent worker, named in a body: an admin must; an executor may, but only its own. */
const WorkerNaming = {
  worker: z
    .strictObject({ workerId: IdString, runId: IdString.nullable().optional() })
    .optional()
    .describe('admin: the agent worker to act for; executors act for their own'),
  workerId: IdString.optional().describe('the same as worker.workerId'),
  runId: IdString.nullable().optional().describe('the same as worker.runId'),
};

/** resolveWorker refuses `worker` beside `workerId` or `runId` (invalid_input): the document says so. */
const ONE_WORKER_SPELLING = { not: { required: ['worker'], anyOf: [{ required: ['workerId'] }, { required: ['runId'] }] } };

const NewOwnerBody = {
  ...WorkerNaming,
  executionSessionId: IdString,
  runtime: IdString.optional().describe("the executor's runtime; default: the executor binding's executor, else `unknown`"),
  parentExecutionSessionId: IdString.nullable().optional(),
  // Its start time is written to the log as given: storable text only (with a NUL the log's write failed and the bind answered 503).
  process: ProcessIdentitySchema.extend({ startTime: StorableText(1, 64) })
    .nullable()
    .optional()
    .describe('the session process, for the local liveness authority'),
  leaseTtlMs: LeaseTtlMs.optional().describe('this owner’s heartbeat lease; default: the server’s OD_LEASE_TTL_MS'),
};

/** Bind (docs/operations.md, Bind). */
export const BindBodySchema = z
  .strictObject({
    ...NewOwnerBody,
    repoRoot: Path.optional().describe('checked, never trusted: git on the worktree’s host says what the root is; another one is refused (repo_root_mismatch)'),
    worktreePath: Path,
    branch: Branch.optional().describe(
      'checked, never trusted: the branch git has checked out in the worktree is the one recorded; another one is refused (branch_mismatch), a detached HEAD too (detached_head). Default: git’s. Required when hostId names another host (its agent checks it)',
    ),
    lane: FreeText.nullable().optional(),
    planRef: FreeText.nullable().optional(),
    requestId: IdString.nullable().optional(),
    hostId: IdString.optional().describe('the host that holds the worktree; default: the API host'),
  })
  .meta({
    description: 'ownership.bind (docs/operations.md, Bind). Naming a conversation is refused: it comes from the executor binding.',
    ...ONE_WORKER_SPELLING,
  });
export type BindBody = z.infer<typeof BindBodySchema>;
export type WorkerNamingBody = Pick<BindBody, 'worker' | 'workerId' | 'runId'>;

export const AcceptHandoffBodySchema = z.strictObject({ ...NewOwnerBody, handoffId: IdString }).meta(ONE_WORKER_SPELLING);
export type AcceptHandoffBody = z.infer<typeof AcceptHandoffBodySchema>;

export const ReclaimBodySchema = z
  .strictObject({ ...NewOwnerBody, force: z.boolean().optional(), reason: FreeText.nullable().optional() })
  .meta(ONE_WORKER_SPELLING);
export type ReclaimBody = z.infer<typeof ReclaimBodySchema>;

const OwnerOnly = { executionSessionId: IdString, epoch: Epoch };

export const HeartbeatBodySchema = z.strictObject({ ...OwnerOnly });
export type HeartbeatBody = z.infer<typeof HeartbeatBodySchema>;
export const HandoffBodySchema = z.strictObject({
  ...OwnerOnly,
  toExecutionSessionId: IdString,
  toWorkerId: IdString.optional().describe('the successor’s agent worker: only its executor may accept; default the owner’s own worker'),
  reason: FreeText.nullable().optional(),
});
export type HandoffBody = z.infer<typeof HandoffBodySchema>;
export const CancelHandoffBodySchema = z.strictObject({ ...OwnerOnly });
export type CancelHandoffBody = z.infer<typeof CancelHandoffBodySchema>;
export const ReleaseBodySchema = z.strictObject({ ...OwnerOnly, reason: FreeText.nullable().optional() });
export type ReleaseBody = z.infer<typeof ReleaseBodySchema>;
export const SubmitBodySchema = z.strictObject({ ...OwnerOnly, head: Sha.nullable().optional() });
export type SubmitBody = z.infer<typeof SubmitBodySchema>;
export const PlanBodySchema = z.strictObject({
  ...OwnerOnly,
  lane: FreeText.nullable().optional(),
  planRef: FreeText.nullable().optional(),
  requestId: IdString.nullable().optional(),
});
export type PlanBody = z.infer<typeof PlanBodySchema>;
export const RenameBranchBodySchema = z.strictObject({ ...OwnerOnly, from: Branch, to: Branch });
export type RenameBranchBody = z.infer<typeof RenameBranchBodySchema>;

/** POST /v1/ownerships/{id}/holds: the owner gives a child session a hold under its tenure (docs/ownership-record.md#child-holds). */
export const GrantHoldBodySchema = z.strictObject({
  ...OwnerOnly,
  childExecutionSessionId: IdString.describe('the child session the hold is for: one hold per child, at most 8 per ownership (holds_exhausted)'),
  runtime: IdString.nullable().optional().describe('the child’s agent runtime, for people (who, history)'),
  leaseTtlMs: LeaseTtlMs.optional().describe('the child’s own lease: silent this long, its hold ends; default: the server’s OD_LEASE_TTL_MS'),
});
export type GrantHoldBody = z.infer<typeof GrantHoldBodySchema>;
/** A child's heartbeat (its own session, the parent epoch the hold lives under): renews the hold's lease only. */
export const HoldHeartbeatBodySchema = z.strictObject({ ...OwnerOnly });
export type HoldHeartbeatBody = z.infer<typeof HoldHeartbeatBodySchema>;
/** A hold ends: the child or the parent naming its own session and the hold's epoch, or an admin with force and a reason. */
export const EndHoldBodySchema = z.strictObject({
  ...OwnerOnly,
  force: z.boolean().optional().describe('admin only, with a reason: end the hold whoever holds'),
  reason: FreeText.nullable().optional(),
});
export type EndHoldBody = z.infer<typeof EndHoldBodySchema>;

const LandingFields = { sourceHead: Sha, landedBranch: Branch, landedHead: Sha, landedAt: IsoTimeInput };
export const LandedBodySchema = z.strictObject({ ...LandingFields });
export type LandedBody = z.infer<typeof LandedBodySchema>;

/** A landing (docs/events.md, Landing receipts): the landing controller names the ownership, or the source branch of a repository. */
export const LandingBodySchema = z
  .strictObject({ ownershipId: OwnershipIdSchema.optional(), repoRoot: Path.optional(), sourceBranch: Branch.optional(), ...LandingFields })
  .superRefine((b, ctx) => {
    if (b.ownershipId === undefined && (b.repoRoot === undefined || b.sourceBranch === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['ownershipId'], message: 'name ownershipId, or repoRoot and sourceBranch' });
    }
  })
  .meta({
    description: 'a landing receipt (docs/events.md, Landing receipts)',
    anyOf: [{ required: ['ownershipId'] }, { required: ['repoRoot', 'sourceBranch'] }],
  });
export type LandingBody = z.infer<typeof LandingBodySchema>;

export const WorktreeRemovedBodySchema = z.strictObject({
  reason: FreeText.nullable().optional(),
  receipt: RemovedReceiptSchema.optional().describe('what a lossless removal kept (od-worktree remove sends it): recorded in the event'),
  force: z.boolean().optional().describe("admin only, with a reason: record the removal without git on the worktree's host agreeing (recorded as forced)"),
});
export type WorktreeRemovedBody = z.infer<typeof WorktreeRemovedBodySchema>;

/** POST /v1/ownerships/{id}/tenure: the tenure secret again, for the session that holds it now. */
export const TenureBodySchema = z.strictObject({
  executionSessionId: IdString.describe('the session that holds the ownership now; any other is refused (not_owner)'),
  worker: z
    .strictObject({ workerId: IdString, runId: IdString.nullable().optional() })
    .optional()
    .describe('the agent worker the caller acts for: must be the owner’s (worker_mismatch); executors act for their own'),
});
export type TenureBody = z.infer<typeof TenureBodySchema>;

/** POST /v1/ownerships/{id}/override (admin): a person steps into an owned worktree, recorded with why. */
export const OverrideBodySchema = z.strictObject({
  reason: StorableText(1, 500).describe('why a person must step into the owner’s worktree: recorded, shown in history'),
});
export type OverrideBody = z.infer<typeof OverrideBodySchema>;

export const OwnershipParamsSchema = z.strictObject({ id: OwnershipIdSchema });
export const HoldParamsSchema = z.strictObject({ id: OwnershipIdSchema, holdId: IdString });

/**
 * Exactly one selector among `keys` (`repoRoot` may narrow a branch). The refusal's fields are
 * the ones to look at: every selector when none was named, the ones named when several were.
 * selectorJson says the same in JSON Schema, for the document.
 */
function oneSelector<T extends Record<string, unknown>>(keys: readonly (keyof T & string)[]) {
  return (q: T, ctx: z.RefinementCtx) => {
    const given = keys.filter((k) => q[k] !== undefined);
    const message = `name exactly one of ${keys.join(', ')}`;
    if (given.length === 0) for (const k of keys) ctx.addIssue({ code: 'custom', path: [k], message });
    else if (given.length > 1) for (const k of given) ctx.addIssue({ code: 'custom', path: [k], message });
    if (q.repoRoot !== undefined && q.branch === undefined)
      ctx.addIssue({ code: 'custom', path: ['repoRoot'], message: 'repoRoot narrows a branch lookup only' });
  };
}

/** oneSelector's rule as JSON Schema: one branch per selector, each excluding the others (and repoRoot but beside branch). */
function selectorJson(keys: readonly string[]) {
  return {
    oneOf: keys.map((k) => ({
      required: [k],
      not: { anyOf: [...keys.filter((o) => o !== k), ...(k === 'branch' ? [] : ['repoRoot'])].map((o) => ({ required: [o] })) },
    })),
  };
}

export const GetQuerySchema = z
  .strictObject({ ownershipId: OwnershipIdSchema.optional(), worktreePath: Path.optional(), branch: Branch.optional(), repoRoot: Path.optional() })
  .superRefine(oneSelector(['ownershipId', 'worktreePath', 'branch']))
  .meta({
    description: 'ownership.get (docs/operations.md, Lookups): one of ownershipId, worktreePath, branch (+ repoRoot)',
    ...selectorJson(['ownershipId', 'worktreePath', 'branch']),
  });
export type GetQuery = z.infer<typeof GetQuerySchema>;

export const HistoryQuerySchema = z
  .strictObject({
    ownershipId: OwnershipIdSchema.optional(),
    worktreePath: Path.optional(),
    branch: Branch.optional(),
    repoRoot: Path.optional(),
    landedCommit: z
      .string()
      .regex(/^[0-9a-fA-F]{7,64}$/, 'a commit id: 7 to 64 hex digits')
      .optional(),
  })
  .superRefine(oneSelector(['ownershipId', 'worktreePath', 'branch', 'landedCommit']))
  .meta({
    description: 'ownership.history (docs/operations.md, Lookups): one of ownershipId, worktreePath, branch (+ repoRoot), landedCommit',
    ...selectorJson(['ownershipId', 'worktreePath', 'branch', 'landedCommit']),
  });
export type HistoryQuery = z.infer<typeof HistoryQuerySchema>;

const States = z.preprocess(
  (v) => (typeof v === 'string' ? v.split(',').filter(Boolean) : v),
  z.array(OwnershipStateSchema).min(1).max(OWNERSHIP_STATES.length),
);
const Bool = z.preprocess((v) => (v === 'true' || v === '1' ? true : v === 'false' || v === '0' ? false : v), z.boolean());

export const ListQuerySchema = z
  .strictObject({
    repoRoot: Path.optional(),
    state: States.optional().describe('one state, several (repeated or comma-separated)'),
    limit: z.coerce.number().int().min(1).max(LIST_MAX_LIMIT).optional(),
    cursor: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,512}$/)
      .optional()
      // x-opaque: no value but one the server issued is accepted, however well-formed (a generator leaves it out).
      .meta({ description: 'the nextCursor of the previous page, as issued: any other value is invalid_input', 'x-opaque': true }),
    liveness: Bool.optional().describe('also ask each live ownership its liveness (live, silent, stale)'),
  })
  .describe('ownership.list (docs/operations.md, Lookups)');
export type ListQuery = z.infer<typeof ListQuerySchema>;

export const ProvenanceParamsSchema = z.strictObject({ sha: z.string().regex(/^[0-9a-fA-F]{7,64}$/, 'a commit id: 7 to 64 hex digits') });
export const ProvenanceQuerySchema = z.strictObject({ repo: Path.describe('the repository the commit is in (path on the API host)') });

// --- responses -----------------------------------------------------------------------------------

/** A conversation as a caller sees it: URL and title read "[redacted]" when the principal may not see them. */
export const WireConversationSchema = z.strictObject({
  provider: z.string(),
  conversationId: z.string(),
  conversationUrl: z.string(),
  title: z.string().nullable().optional(),
  observedAt: z.string(),
});
const WireOwnerSchema = OwnerSchema.extend({ conversation: WireConversationSchema.nullable() });
export const WireReceiptSchema = LandingReceiptSchema.extend({ conversation: WireConversationSchema.nullable() });

/** The durable record (docs/ownership-record.md) as served. */
export const WireRecordSchema = OwnershipRecordSchema.extend({ owner: WireOwnerSchema.nullable(), landings: z.array(WireReceiptSchema) });
export type WireRecord = z.infer<typeof WireRecordSchema>;

export const LivenessSchema = z.strictObject({
  status: z.enum(['live', 'silent', 'stale', 'unowned']),
  verdict: z.enum(['alive', 'dead', 'unknown']).nullable(),
  lastHeartbeatAt: z.string().nullable(),
  checkedAt: z.string().nullable(),
  leaseTtlMs: z.number().int(),
});
export type Liveness = z.infer<typeof LivenessSchema>;

export const BranchStatusWireSchema = z.strictObject({
  head: z.string(),
  base: z.string().nullable(),
  ahead: z.number().int().nullable(),
  behind: z.number().int().nullable(),
  at: z.string(),
});
export type BranchStatusWire = z.infer<typeof BranchStatusWireSchema>;
export const ProjectionSyncSchema = z.strictObject({
  hostId: z.string(),
  localSeq: z.number().int(),
  durableSeq: z.number().int(),
  error: z.string().nullable(),
  branch: BranchStatusWireSchema.nullable().optional(),
});

/**
 * Whether the worktree's hooks enforce the record on its host, and whether that host's agent is
 * there to make them: `pending` will be enforced within moments; `not_enforced` waits for a host
 * that is away (cut off, its agent stopped): until it is back its hooks keep the record they last
 * had, so the previous owner may still pass them there (docs/operations.md#when-a-host-is-away).
 */
export const EnforcementSchema = z
  .strictObject({
    hostId: z.string(),
    state: z.enum(['enforced', 'pending', 'not_enforced', 'failed']),
    hostAgent: z.enum(['up', 'away']),
    hostAgentSeenAgoMs: z.number().int().nullable().describe('since the host agent last beat, when it beats at all'),
  })
  .describe('whether the hooks on the worktree’s host enforce this record, and whether that host’s agent is there');
export type Enforcement = z.infer<typeof EnforcementSchema>;

/** The live view: the record plus what only the workflow knows (null when served from PostgreSQL after the lifecycle ended). */
export const OwnershipViewSchema = WireRecordSchema.extend({
  liveness: LivenessSchema.nullable(),
  projectionSync: ProjectionSyncSchema.nullable(),
  projection: z
    .enum(['applied', 'pending', 'failed'])
    .nullable()
    .optional()
    .describe('whether the worktree’s hooks enforce this record yet: pending means the previous owner may still pass them; null when served from PostgreSQL'),
  enforcement: EnforcementSchema.nullable().optional(),
});
export type OwnershipViewOut = z.infer<typeof OwnershipViewSchema>;

/**
 * The proof of a tenure (src/keys/tenure.ts): the owner runs git with `env`, and the hooks and
 * the git gate accept a mutation only with a secret whose SHA-256 the worktree's projection holds.
 * Derived from the service key and the tenure, never stored: asking again answers the same.
 */
export const TenureSchema = z
  .strictObject({
    secret: z.string().regex(TENURE_SECRET).describe('OVERDECK_TENURE_SECRET: keep it to the session; anyone holding it passes as the owner'),
    epoch: z.number().int(),
    executionSessionId: z.string(),
    env: z
      .strictObject({ OVERDECK_EXECUTION_SESSION_ID: z.string(), OVERDECK_EPOCH: z.string(), OVERDECK_TENURE_SECRET: z.string() })
      .describe('the environment to run git (and the agent) with in the worktree'),
  })
  .describe('the tenure proof the worktree’s hooks ask for');
export type TenureOut = z.infer<typeof TenureSchema>;

/** bind, accept-handoff and reclaim: the live view, and the new owner's tenure proof (null when the answer's owner is not the session the call was for). */
export const ClaimResponseSchema = OwnershipViewSchema.extend({
  tenure: TenureSchema.nullable().describe('the proof for the session the call was for, when it holds the ownership after the call; null otherwise'),
});
export type ClaimResponse = z.infer<typeof ClaimResponseSchema>;

/** POST /v1/ownerships/{id}/holds: the live view, the hold's id, and the child's tenure proof (null when the answer holds no such hold). */
export const GrantHoldResponseSchema = OwnershipViewSchema.extend({
  holdId: z.string().describe('the hold: the message’s (a retry with the same Idempotency-Key names the same hold)'),
  tenure: TenureSchema.nullable().describe('the child’s proof, scoped to the ownership, the parent’s epoch and this hold; never stored'),
});
export type GrantHoldResponse = z.infer<typeof GrantHoldResponseSchema>;

/** POST /v1/ownerships/{id}/override: recorded first (overrideId), then the current owner's tenure handed to the person. */
export const OverrideResponseSchema = z.strictObject({
  overrideId: z.string(),
  ownershipId: z.string(),
  epoch: z.number().int(),
  owner: z.strictObject({ executionSessionId: z.string(), workerId: z.string().nullable() }),
  tenure: TenureSchema,
});
export type OverrideResponse = z.infer<typeof OverrideResponseSchema>;

/**
 * One ownership as lookups describe it: the record, its owner's liveness and the host agent's last
 * look at the branch (each null when unknown or not asked). The items of ownership.list and the
 * `ownership` of `od-worktree who --json` are this one shape. The two are optional only for
 * answers of earlier versions; this service always sends both.
 */
export const OwnershipItemSchema = WireRecordSchema.extend({
  liveness: LivenessSchema.nullable().optional(),
  branchStatus: BranchStatusWireSchema.nullable().optional(),
  enforcement: EnforcementSchema.nullable().optional(),
  // Only GET /v1/ownership/live (and so `who`) answers it: the worktree's live read-only observers (src/contract/observers.ts).
  observers: z.array(ObserverViewSchema).optional(),
});
export type OwnershipItem = z.infer<typeof OwnershipItemSchema>;
export const ListItemSchema = OwnershipItemSchema;
export const ListResponseSchema = z.strictObject({ items: z.array(ListItemSchema), nextCursor: z.string().nullable() });
export type ListResponse = z.infer<typeof ListResponseSchema>;

/** Events are documented loosely: their full union is in src/domain/events.ts. */
export const WireEventSchema = z.looseObject({ ownershipId: z.string(), seq: z.number().int(), type: z.string(), at: z.string() });
export const HistoryResponseSchema = z.strictObject({
  ownerships: z.array(
    z.strictObject({
      ownershipId: z.string(),
      record: WireRecordSchema,
      events: z.array(WireEventSchema),
      lineage: z.array(LineageLinkSchema),
      /** git moves refused by the hooks or the agent's git wrapper, from the worktree journal (docs/git-projection.md#the-journal) */
      attempts: z.array(AttemptSchema).optional(),
      /** an older tenure's work done after a newer one began, preserved under a WIP ref before the newer projection was written; each commit with whom it is attributed to (docs/git-projection.md#late-work-of-an-older-tenure) */
      lateAttempts: z.array(LateAttemptSchema).optional(),
      /** commits whose journal report names this ownership (recorded or claimed) and attributes nobody: disputed, unowned or unknown, claimed vs recorded (docs/git-projection.md#whom-a-commit-is-attributed-to) */
      disputes: z.array(CommitReportSchema).optional(),
      /** messages refused for want of the service's seal (a raw Temporal client): what they claimed, never believed (docs/guarantees.md#messages) */
      refusedMessages: z.array(RefusedMessageRowSchema).optional(),
      /** recorded overrides: a person stepped into the owner's worktree with its tenure (who, why, when, which epoch) */
      overrides: z.array(OverrideRowSchema).optional(),
    }),
  ),
});
export type HistoryResponse = z.infer<typeof HistoryResponseSchema>;

export const AcceptedSchema = z.strictObject({ accepted: z.literal(true) });

/** worktree-removed (202 either way): `recorded` once the log holds the removal, `accepted` when signalled but not yet durable. */
export const RemovalResponseSchema = z.strictObject({
  accepted: z.literal(true),
  status: z.enum(['recorded', 'accepted']).describe('recorded: the removal is durable; accepted: signalled, not yet durable'),
});
export type RemovalResponse = z.infer<typeof RemovalResponseSchema>;

export const LandingResponseSchema = z.strictObject({
  status: z.enum(['recorded', 'accepted']).describe('recorded: the receipt is durable; accepted: signalled, not yet durable'),
  ownershipId: z.string(),
  receipt: WireReceiptSchema.nullable(),
});
export type LandingResponse = z.infer<typeof LandingResponseSchema>;

export const ConversationReportResponseSchema = z.strictObject({
  workerId: z.string(),
  firstBound: z.boolean().describe('this observation became the worker’s conversation'),
  conflict: z.boolean().describe('a different conversation than the first binding (kept as firstConflict)'),
  conversation: WireConversationSchema.nullable().describe('the worker’s bound (first) conversation'),
  signalled: z.number().int().describe('active ownerships of the worker told to pick it up'),
});
export type ConversationReportResponse = z.infer<typeof ConversationReportResponseSchema>;

/** A body that names a conversation is refused outright (docs/identities.md, Conversation), before any other check. */
export function namesConversation(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).some((k) => /^conversation/i.test(k));
}
