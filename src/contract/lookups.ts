import { z } from 'zod';
import { OwnershipEventSchema, type OwnershipEvent } from '../domain/events';
import { BranchName, IsoTime, OwnershipIdSchema, PathString } from '../domain/identity';
import { OWNERSHIP_STATES, OwnershipRecordSchema, OwnershipStateSchema } from '../domain/projection';

/** The lookups' inputs and answers (ownership.get / list / history), served by src/store/lookups.ts. */

/** A full or abbreviated (>= 7 hex digits) commit id, as people paste them. */
export const CommitIdSchema = z
  .string()
  .regex(/^[0-9a-fA-F]{7,64}$/, 'a commit id: 7 to 64 hex digits')
  .transform((s) => s.toLowerCase());

const ByOwnershipId = z.strictObject({ ownershipId: OwnershipIdSchema });
const ByWorktreePath = z.strictObject({ worktreePath: PathString });
const ByBranch = z.strictObject({ branch: BranchName, repoRoot: PathString.optional() });
const ByLandedCommit = z.strictObject({ landedCommit: CommitIdSchema });
const ByLane = z.strictObject({ lane: z.string().min(1).max(500), repoRoot: PathString.optional() });

export const GetOwnershipInputSchema = z.union([ByOwnershipId, ByWorktreePath, ByBranch, ByLane]);
export type GetOwnershipInput = z.input<typeof GetOwnershipInputSchema>;

export const HistoryInputSchema = z.union([ByOwnershipId, ByWorktreePath, ByBranch, ByLandedCommit]);
export type HistoryInput = z.input<typeof HistoryInputSchema>;

export const LIST_DEFAULT_LIMIT = 50;
export const LIST_MAX_LIMIT = 500;

export const ListOwnershipsInputSchema = z.strictObject({
  repoRoot: PathString.optional(),
  state: z.union([OwnershipStateSchema, z.array(OwnershipStateSchema).min(1).max(OWNERSHIP_STATES.length)]).optional(),
  limit: z.number().int().min(1).max(LIST_MAX_LIMIT).default(LIST_DEFAULT_LIMIT),
  cursor: z.string().min(1).max(512).nullable().optional(),
});
export type ListOwnershipsInput = z.input<typeof ListOwnershipsInputSchema>;

export const OwnershipListSchema = z.strictObject({
  items: z.array(OwnershipRecordSchema),
  nextCursor: z.string().nullable(),
});
export type OwnershipList = z.infer<typeof OwnershipListSchema>;

/** One link of the owner chain: who held the worktree from `at`, how they got it, and from whom. */
export const LineageLinkSchema = z.strictObject({
  executionSessionId: z.string(),
  runtime: z.string(),
  epoch: z.number().int(),
  via: z.enum(['bind', 'handoff', 'after_release', 'reclaim', 'forced_reclaim']),
  at: IsoTime,
  previousExecutionSessionId: z.string().nullable(),
  conversationId: z.string().nullable(),
});
export type LineageLink = z.infer<typeof LineageLinkSchema>;

// The event union is built from a mapped list, so its inferred type is too loose to be useful;
// the runtime schema is the real one (for OpenAPI), the static type is the domain's union.
const EventOutSchema = OwnershipEventSchema as unknown as z.ZodType<OwnershipEvent>;

export const OwnershipHistoryEntrySchema = z.strictObject({
  ownershipId: z.string(),
  record: OwnershipRecordSchema,
  events: z.array(EventOutSchema),
  lineage: z.array(LineageLinkSchema),
});
export type OwnershipHistoryEntry = z.infer<typeof OwnershipHistoryEntrySchema>;

export const OwnershipHistorySchema = z.strictObject({ ownerships: z.array(OwnershipHistoryEntrySchema) });
export type OwnershipHistory = z.infer<typeof OwnershipHistorySchema>;

/** How many ownerships one history answer carries at most (a branch name like `main` may match many). */
export const HISTORY_MAX_OWNERSHIPS = 200;
