import { z } from 'zod';
import { AgentWorkerRefSchema, IsoTime } from '../domain/identity';
import { AuthorSchema } from './attributions';
import { CommitIdSchema } from './lookups';

/** A landed commit's provenance (src/provenance/provenance.ts answers it): landed commit -> source branch/worktree -> session -> worker -> conversation. */

export const ProvenanceInputSchema = z.strictObject({ repoPath: z.string().min(1).max(4096), sha: CommitIdSchema });
export type ProvenanceInput = z.input<typeof ProvenanceInputSchema>;

export const ProvenanceSchema = z.strictObject({
  commit: z.string(),
  landedHead: z.string(),
  landedBranch: z.string(),
  landedAt: IsoTime,
  sourceBranch: z.string(),
  sourceHead: z.string(),
  worktreePath: z.string(),
  executionSessionId: z.string().nullable(),
  worker: AgentWorkerRefSchema.nullable(),
  conversation: z.strictObject({ conversationId: z.string(), conversationUrl: z.string(), title: z.string().nullable() }).nullable(),
  ownershipId: z.string(),
  /** how the commit was placed: the landed head itself, inside the landed range, or one of the pre-land commits the landing brought */
  via: z.enum(['landed_head', 'range', 'pre_land']),
  /** a receipt the landing controller sent, or one `od-worktree landings scan` inferred (method: how) */
  // Optional only for values built before these existed; provenance() always sets them.
  receiptKind: z.enum(['receipt', 'inferred']).optional(),
  inferredMethod: z.string().nullable().optional(),
  /**
   * Who wrote it, oldest first: for a squash or merge commit every pre-land commit it brought, for
   * a rebased or cherry-picked copy its original, for a pre-land commit itself. Empty when the
   * landing's commits are not known (recorded before this existed, objects gone).
   */
  authors: z.array(AuthorSchema).optional(),
  /** Who landed it: the landing principal and the owner session at that moment (the receipt's). */
  lander: z.strictObject({ principal: z.strictObject({ kind: z.string(), id: z.string() }).nullable(), executionSessionId: z.string().nullable() }).optional(),
});
export type Provenance = z.infer<typeof ProvenanceSchema>;
