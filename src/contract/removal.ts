import { z } from 'zod';
import { BranchName, IdString, PathString } from '../domain/identity';
import { SealSchema } from '../domain/seal';
import { OwnershipFactSchema, RemovalFactsSchema, RemovalReceiptSchema } from '../domain/removal';

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

/**
 * `od-worktree gc --dry-run --json` (or `--rank`): each verdict ranked by what removing the worktree
 * would lose (docs/cleanup.md#ranked-by-what-removal-would-lose; measured by src/cli/commands/gc.ts).
 */
export const GcRankRowSchema = z.strictObject({
  rank: z.number().int().positive(),
  worktree: z.string(),
  verdict: z.enum(['remove', 'removed', 'stays', 'held', 'failed']),
  /** removing it loses nothing: every commit is accounted for and the files are (or would be) in a snapshot */
  lossless: z.boolean(),
  /** what removal would lose, for people ("nothing", "2 unlanded commits, 1 dirty file") */
  loses: z.string(),
  dirtyFiles: z.number().int().nonnegative(),
  unlandedCommits: z.number().int().nonnegative(),
  /** more unlanded commits than were counted (the rule stops at 2000) */
  unlandedTruncated: z.boolean(),
  /** commits of HEAD on no remote-tracking branch; null: the repository has no remote */
  unpushedCommits: z.number().int().nonnegative().nullable(),
  /** bytes of the worktree's files (its .git file and nested repositories not counted); at least this when capped */
  sizeBytes: z.number().int().nonnegative(),
  sizeCapped: z.boolean(),
  /** the newest change among its files, its index and its HEAD's reflog; null when none could be read */
  lastActivity: z.string().nullable(),
});
export type GcRankRow = z.infer<typeof GcRankRowSchema>;

export const GcRankedOutputSchema = GcOutputSchema.extend({ ranking: z.array(GcRankRowSchema) });
export type GcRankedOutput = z.infer<typeof GcRankedOutputSchema>;

/** Branch names whose tips count as landed besides main, master, trunk and the receipts' (`--target`). */
const Targets = z.array(BranchName).max(20);

/**
 * POST /v1/worktrees/remove (and the MCP tool `ownership.remove_worktree`): the orchestrator's lossless
 * removal, decided and done on the worktree's host by its agent. An owner names its session and
 * epoch: its ownership is released first (the owner's own release, checked as any release), and
 * the worktree is then removed under the same rule as anyone's.
 */
export const RemoveWorktreeBodySchema = z.strictObject({
  worktreePath: PathString.describe('the worktree, as bind names it'),
  hostId: IdString.optional().describe("the worktree's host (default: the API's)"),
  executionSessionId: IdString.optional().describe('the owner session, when the caller holds the worktree: it is released first'),
  epoch: z.number().int().positive().optional().describe("the owner's epoch, with executionSessionId"),
  dryRun: z.boolean().optional().describe('decide and say; change nothing (no release, no snapshot, no removal)'),
  deleteBranch: z.boolean().optional().describe('also delete the branch when every commit is accounted for and no other worktree has it checked out'),
  targets: Targets.optional().describe('more branches whose commits count as landed'),
});
export type RemoveWorktreeBody = z.infer<typeof RemoveWorktreeBodySchema>;

export const RemoveWorktreeResponseSchema = z.strictObject({
  ok: z.boolean(),
  dryRun: z.boolean(),
  hostId: z.string(),
  /** the caller's ownership this call released before the removal, or null */
  released: z.string().nullable(),
  result: RemovalResultSchema,
});
export type RemoveWorktreeResponse = z.infer<typeof RemoveWorktreeResponseSchema>;

/** What the API hands the worktree's host agent (the removal workflow's input and its activity's). */
export const HostRemovalRequestSchema = z.strictObject({
  hostId: IdString,
  worktreePath: z.string(),
  /** the service's record of the worktree's ownership; the host merges its local projection in */
  ownership: OwnershipFactSchema.nullable(),
  liveness: z.enum(['alive', 'dead', 'unknown']),
  /** the caller's ownership was released by this call: the projection may still show it held */
  callerIsOwner: z.boolean(),
  receipts: z.array(z.strictObject({ sourceHead: z.string(), landedHead: z.string(), landedBranch: z.string() })).max(200),
  targets: Targets,
  dryRun: z.boolean(),
  deleteBranch: z.boolean(),
  /** the API's seal on the removal's start (src/workflows/seal.ts startRefused) */
  seal: SealSchema.optional(),
});
export type HostRemovalRequest = z.infer<typeof HostRemovalRequestSchema>;

/** What git on the worktree's host says of a worktree someone reports removed (src/git/presence.ts). */
export interface WorktreePresence {
  present: boolean;
  /** `on_disk`: git still finds the worktree at its path; `gone`: nothing there is that worktree */
  detail: 'on_disk' | 'gone';
}
