import { z } from 'zod';
import { IdString, IsoTimeInput, OwnershipIdSchema, PathString } from '../domain/identity';

/**
 * Wire contract of POST /v1/reconciliations and GET /v1/principal. A reconciliation entry is an
 * audit line of what `od-worktree reconcile` found and did: ids, seqs and kinds only, every string
 * bounded, no free text (a refusal is named by its reason code, never by its message).
 */

/** Kinds reconcile logs: the ones that found a difference (in_sync and unowned are not logged). */
export const LOGGED_RECONCILE_KINDS = ['rehydrated', 'stale', 'corrupt', 'submitted', 'conflict'] as const;

/** A reason is a snake_case code: a classification reason or a refusal code. */
const ReasonCode = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'a snake_case reason code');
/** The `integer` columns of the reconciliations table. */
const Seq = z.number().int().min(0).max(2_147_483_647);

export const ProvisionalSummarySchema = z.strictObject({
  executionSessionId: IdString,
  runtime: IdString,
  idempotencyKey: IdString.nullable(),
  claimedAt: IsoTimeInput,
});

export const ReconciliationBodySchema = z
  .strictObject({
    worktreePath: PathString,
    kind: z.enum(LOGGED_RECONCILE_KINDS),
    reason: ReasonCode.nullable(),
    repaired: z.boolean(),
    ownershipId: OwnershipIdSchema.nullable().describe('the durable ownership of the worktree when reconciled; must be one of this worktree'),
    localOwnershipId: IdString.nullable().describe('what the local projection named (a provisional claim has a prov_ id)'),
    localSeq: Seq.nullable(),
    durableSeq: Seq.nullable(),
    provisional: ProvisionalSummarySchema.nullable(),
    at: IsoTimeInput,
  })
  .describe('One reconciliation of a worktree’s local projection with the durable record (od-worktree reconcile)');
export type ReconciliationBody = z.infer<typeof ReconciliationBodySchema>;

export const ReconciliationRecordedSchema = z.strictObject({ recorded: z.literal(true) });

/** Who the bearer token is: lets a client act as its token's worker without guessing it. */
export const CallerSchema = z.strictObject({
  kind: z.enum(['executor', 'landing', 'admin', 'reader']),
  id: z.string(),
  workerId: z.string().nullable(),
  runId: z.string().nullable(),
});
export type Caller = z.infer<typeof CallerSchema>;
