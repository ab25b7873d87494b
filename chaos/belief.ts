import type { AnswerSummary } from './answer';

/** What a chaos driver believes of a worktree's ownership, from the answers it got: often behind, which is the point. */
export interface OwnerBelief {
  ownershipId: string | null;
  state: string | null;
  epoch: number;
  seq: number;
  ownerSession: string | null;
}

/**
 * Takes a view answer into `b`, unless it is an older view of the lifecycle `b` already follows
 * (answers arrive out of order under concurrency). True when taken.
 */
export function believeView(b: OwnerBelief, v: AnswerSummary): boolean {
  if (!v.ownershipId || v.state === undefined) return false;
  if (v.ownershipId === b.ownershipId && (v.seq ?? 0) < b.seq) return false;
  b.ownershipId = v.ownershipId;
  b.state = v.state;
  b.epoch = v.epoch ?? b.epoch;
  b.seq = v.seq ?? b.seq;
  b.ownerSession = v.ownerSession ?? null;
  return true;
}
