import { z } from 'zod';
import { refusal, type Refusal } from './reasons';
import { isHeldState } from './states';

/** What the host agent reports about a worktree's branch for observability (docs/ownership-record.md#the-live-view, `projectionSync.branch`): never authoritative. */
export const BranchStatusSchema = z.strictObject({
  head: z.string(),
  base: z.string().nullable(),
  ahead: z.number().int().nullable(),
  behind: z.number().int().nullable(),
  at: z.string(),
});
export type BranchStatus = z.infer<typeof BranchStatusSchema>;

/**
 * The branch of an ownership is the one git has checked out in its worktree, never the caller's
 * word: an executor naming another worktree's branch would otherwise make landings by branch
 * (POST /v1/landings with sourceBranch) land that worktree's work on its own ownership. Pure: the
 * client (local worktrees), the host agent (a worktree on its host) and the rename route all judge
 * with this one rule.
 *
 * `named`: what the caller said (undefined: nothing, git's branch is taken). `actual`: what git
 * says, null for a detached HEAD, which no ownership can record (an event's branch is a name).
 */
export function checkNamedBranch(named: string | undefined, actual: string | null): Refusal | null {
  if (actual === null) return refusal('detached_head');
  if (named !== undefined && named !== actual) return refusal('branch_mismatch', { branch: actual });
  return null;
}

/** An ownership that has (or had) a branch name in a repository, as landing resolution weighs it. */
export interface BranchCandidate {
  ownershipId: string;
  state: string;
  /** the name is its branch now (not one it was renamed from) */
  holdsNow: boolean;
}

/**
 * Which ownership a landing by (repository, branch name) lands on. Never "the latest" among
 * several: a name held by more than one is `ambiguous` and the landing controller names the
 * ownership instead. In order, the first tier with anyone in it decides: the live holders (held
 * states), then the holders that are not closed (released, landed), then the ownerships the name
 * was renamed away from (not closed). Only closed ones left: the most recent, which refuses the
 * landing itself (ownership_closed). `candidates` most recent first.
 */
export function pickLandingSource<C extends BranchCandidate>(candidates: readonly C[]): { one: C } | { ambiguous: C[] } | null {
  const open = (c: C) => c.state !== 'closed';
  const tiers = [
    candidates.filter((c) => c.holdsNow && isHeldState(c.state)),
    candidates.filter((c) => c.holdsNow && open(c)),
    candidates.filter((c) => !c.holdsNow && open(c)),
  ];
  for (const tier of tiers) {
    if (tier.length === 1) return { one: tier[0]! };
    if (tier.length > 1) return { ambiguous: tier };
  }
  return candidates[0] ? { one: candidates[0] } : null;
}
