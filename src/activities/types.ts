import type { OwnershipEvent } from '../domain/events';
import type { Conversation, Owner } from '../domain/identity';
import type { OwnershipRecord } from '../domain/projection';
import type { BranchStatus } from '../git/status';

/** Activities on the main task queue (local activities of the workflow): the durable store. */
export interface StoreActivities {
  /**
   * Appends events idempotently and folds them into the PostgreSQL projection, in one transaction.
   * `replaced`: events already recorded under the same seq with other content; the log wins.
   */
  persistEvents(workflowId: string, events: OwnershipEvent[]): Promise<{ durableSeq: number; replaced: OwnershipEvent[] }>;
  /** The conversation the agent worker's executor observed, or null (ARCHITECTURE §5). */
  readExecutorConversation(workerId: string): Promise<Conversation | null>;
}

export type LivenessVerdict = 'alive' | 'dead' | 'unknown';

/** Activities that must run on the host holding the worktree (task queue `ownership-host-<hostId>`). */
export interface HostActivities {
  /** Writes the local projection; reports the branch's head and ahead/behind while the worktree exists. */
  applyLocalProjection(record: OwnershipRecord): Promise<{ localSeq: number; result: 'written' | 'skipped' | 'cleared'; branch?: BranchStatus | null }>;
  preserveWip(worktreePath: string, ownershipId: string, seq: number): Promise<{ ref: string; sha: string } | null>;
  checkSessionLiveness(owner: Owner): Promise<{ verdict: LivenessVerdict; detail: string | null }>;
}
