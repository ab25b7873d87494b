import { z } from 'zod';

/** The wire shapes of commit attributions and refused attempts (no store, no git: the API schemas and the CLI load them). */

/** hold: a child session's commit under a live hold of the owner's tenure (docs/ownership-record.md#child-holds) */
export const AttributionViaSchema = z.enum(['session', 'owner_at_time', 'hold', 'unknown']);
export type AttributionVia = z.infer<typeof AttributionViaSchema>;

/** attributed: the record confirms one worktree's report; disputed: reports contradict the record or each other; unowned: no tenure held the worktree; unknown: held, but who committed is not known */
export const AttributionStatusSchema = z.enum(['attributed', 'disputed', 'unowned', 'unknown']);
export type AttributionStatusOut = z.infer<typeof AttributionStatusSchema>;

export const TenureFactsSchema = z.strictObject({
  ownershipId: z.string().nullable(),
  epoch: z.number().int().nullable(),
  executionSessionId: z.string().nullable(),
  workerId: z.string().nullable(),
  conversationId: z.string().nullable(),
});

/** One worktree's journal reporting a commit (docs/git-projection.md#whom-a-commit-is-attributed-to): what its line claimed against what the record says. */
export const CommitReportSchema = z.strictObject({
  commit: z.string(),
  /** the commit's status now, from every report of it */
  status: AttributionStatusSchema,
  /** this report's verdict when it was shipped */
  verdict: AttributionStatusSchema,
  /** a stable code (docs/reason-codes.md#commit-attribution); null when attributed */
  reason: z.string().nullable(),
  at: z.string(),
  /** the worktree whose journal reported it (the shipper's, never the line's word) */
  worktreePath: z.string(),
  ref: z.string(),
  claimed: TenureFactsSchema,
  /** the tenure the ownership log says held the worktree (null: none did) */
  recorded: TenureFactsSchema.nullable(),
});
export type CommitReport = z.infer<typeof CommitReportSchema>;

export const AuthorSchema = z.strictObject({
  commit: z.string(),
  via: AttributionViaSchema,
  ownershipId: z.string().nullable(),
  epoch: z.number().int().nullable(),
  executionSessionId: z.string().nullable(),
  workerId: z.string().nullable(),
  conversation: z.strictObject({ conversationId: z.string(), conversationUrl: z.string().nullable(), title: z.string().nullable() }).nullable(),
  /**
   * via hold: the hold the child (executionSessionId) committed under and the parent session that
   * granted it; the ownership, epoch, worker and conversation are the parent's. Absent otherwise.
   */
  hold: z.strictObject({ holdId: z.string(), parentExecutionSessionId: z.string() }).nullable().optional(),
  /** absent in answers of earlier versions (attributed, or unknown when via is) */
  status: AttributionStatusSchema.optional(),
  /** when not attributed: the reports that say why (claimed vs recorded) */
  reports: z.array(CommitReportSchema).optional(),
});
export type Author = z.infer<typeof AuthorSchema>;

export const AttemptSchema = z.strictObject({
  kind: z.enum(['ref_refused', 'wrapper_refused', 'hook_refused']),
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

/** A late commit and whom the journal's commit reports attribute it to now (commit_authorship), never the late_preserved line's word. */
export const LateCommitSchema = z.strictObject({
  commit: z.string(),
  status: AttributionStatusSchema,
  ownershipId: z.string().nullable(),
  epoch: z.number().int().nullable(),
  executionSessionId: z.string().nullable(),
});
export type LateCommit = z.infer<typeof LateCommitSchema>;

/**
 * Late work of an older tenure (docs/git-projection.md#late-work-of-an-older-tenure): what its
 * owner did in the worktree after a newer tenure began, before the host agent wrote the newer
 * projection, and the WIP ref the host agent preserved it under.
 */
export const LateAttemptSchema = z.strictObject({
  /** when the host agent's report of it was shipped */
  at: z.string(),
  ownershipId: z.string(),
  /** the older tenure's epoch, and its session as the ownership log names it */
  epoch: z.number().int(),
  executionSessionId: z.string(),
  ref: z.string(),
  sha: z.string(),
  /** HEAD when the snapshot was made (its first parent) */
  head: z.string().nullable(),
  /** the snapshot holds files that differ from that HEAD (uncommitted or untracked) */
  uncommitted: z.boolean(),
  /** the late commits, oldest first */
  commits: z.array(LateCommitSchema),
  /** late commits the report did not list (the ref holds them too) */
  moreCommits: z.number().int(),
  worktreePath: z.string(),
});
export type LateAttempt = z.infer<typeof LateAttemptSchema>;

const shown = (x: string | number | null): string => (x === null || x === '' ? 'unknown' : String(x));

function tenureText(t: z.infer<typeof TenureFactsSchema>): string {
  return `session ${shown(t.executionSessionId)}, ownership ${shown(t.ownershipId)}, epoch ${shown(t.epoch)}, worker ${shown(t.workerId)}, conversation ${shown(t.conversationId)}`;
}

/** One report for people: its verdict and reason, the worktree it came from, what it claimed and what the record says (history and provenance both print this). */
export function describeReport(r: CommitReport): string {
  const now = r.status === r.verdict ? '' : `; the commit is ${r.status} now`;
  const recorded = r.recorded ? tenureText(r.recorded) : 'no tenure held the worktree';
  return `${r.verdict}${r.reason ? ` (${r.reason})` : ''}${now}, reported by ${r.worktreePath}: claimed ${tenureText(r.claimed)}; recorded ${recorded}`;
}
