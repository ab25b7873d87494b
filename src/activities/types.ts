import type { CarriedTenure } from '../host/carried-tenure';
import type { HostRemovalRequest, RemovalResult, WorktreePresence } from '../contract/removal';
import type { OwnershipEvent } from '../domain/events';
import type { Conversation, Owner } from '../domain/identity';
import type { OwnershipRecord } from '../domain/projection';
import type { OwnershipSettings } from '../domain/settings';
import type { BranchStatus } from '../domain/branch';
import type { Appended } from '../store/event-store';

/** A local projection written: the seq it holds now, and the branch's status beside it (null once cleared). */
export interface ProjectionWritten {
  localSeq: number;
  result: 'written' | 'skipped' | 'cleared';
  branch?: BranchStatus | null;
}

/**
 * The log write's answer. `projected`: the worker is also the worktree's host agent and wrote the
 * record it made durable into the worktree before answering (src/activities createLocalProjector),
 * so the run has no projection of that record left to ask its host for.
 */
export type Persisted = Appended & {
  projected?: { localSeq: number; branch?: BranchStatus | null };
  /**
   * The tenure hash of the record the write made durable, computed here on the control plane,
   * which holds the service key, for the host agent to write as given (src/host/carried-tenure.ts):
   * so a host agent needs no key. A digest, never the secret. Absent when nobody holds the worktree.
   */
  tenure?: CarriedTenure;
};

/** The durable store, on the workflow's worker: the log's two are local activities, the reads ordinary ones (src/workflows/activities.ts). */
export interface StoreActivities {
  /**
   * Appends events idempotently and folds them into the PostgreSQL projection, in one transaction
   * (src/store/event-store.ts); answers `ahead` instead, writing nothing, when the log already holds
   * other events from the batch's first seq. Non-retryable `worktree_owned` when they would make a
   * second live ownership of the worktree. `base`, the record the log folds to before the batch (the
   * workflow's durable record), makes the write one round trip; without it the row is read first.
   */
  persistEvents(workflowId: string, events: OwnershipEvent[], base?: OwnershipRecord | null): Promise<Persisted>;
  /** The log's events past `afterSeq`, in order: what a run that may have lost a task's write must read before it refuses anything. */
  readLogTail(ownershipId: string, afterSeq: number): Promise<OwnershipEvent[]>;
  /** The owner's last heartbeat as the API recorded it (src/store/heartbeats.ts), or null. */
  readHeartbeat(ownershipId: string): Promise<{ executionSessionId: string; epoch: number; ageMs: number } | null>;
  /** The conversation the agent worker's executor observed, or null (docs/identities.md#executor-binding). */
  readExecutorConversation(workerId: string): Promise<Conversation | null>;
  /** The worker's configured ownership settings, null when it was started without any (src/domain/settings.ts). */
  readSettings(): Promise<Partial<OwnershipSettings> | null>;
}

export type LivenessVerdict = 'alive' | 'dead' | 'unknown';

/** What the host's git says a worktree is: canonical top, repository root (src/git/repo.ts identifyWorktree), branch. */
export interface InspectedWorktree {
  worktreePath: string;
  repoRoot: string;
  /** checked-out branch without refs/heads/; null when HEAD is detached */
  branch: string | null;
}

/**
 * Activities that must run on the host holding the worktree (task queue `ownership-host-<hostId>`).
 * Each refuses, as a non-retryable ApplicationFailure typed with the reason code, a worktree that
 * is not (with both of its git dirs) under the host's allowed roots (`path_outside_allowed_roots`).
 */
export interface HostActivities {
  /**
   * Writes the local projection; reports the branch's head and ahead/behind while the worktree
   * exists. Non-retryable `projection_conflict` when another live ownership's projection is on
   * disk, `worktree_missing` when the worktree is gone; retryable `projection_busy` when another
   * writer held the worktree's lock past the bounded wait.
   */
  applyLocalProjection(record: OwnershipRecord, carried?: CarriedTenure): Promise<ProjectionWritten>;
  /** Heartbeats while git runs and kills git when cancelled; non-retryable `worktree_missing` for a worktree that is gone. */
  preserveWip(worktreePath: string, ownershipId: string, seq: number): Promise<{ ref: string; sha: string; files?: number; bytes?: number } | null>;
  /**
   * Non-retryable `path_outside_allowed_roots`, `path_not_found` or `not_a_worktree`; with
   * `claimedBranch` (the branch a first claim would record), non-retryable `branch_mismatch` when
   * git has another branch checked out, `detached_head` when none.
   */
  inspectWorktree(worktreePath: string, claimedBranch?: string): Promise<InspectedWorktree>;
  checkSessionLiveness(owner: Owner): Promise<{ verdict: LivenessVerdict; detail: string | null }>;
  /**
   * Lossless removal (src/git/removal.ts, the rule in src/domain/removal.ts) on the service's facts
   * merged with the worktree's local projection. Non-retryable `path_outside_allowed_roots`,
   * `path_not_found`, `not_a_worktree`, `invalid_argument` (the main worktree); a git step that
   * fails once the rule said remove is the answer `failed`, never `removed`.
   */
  removeWorktree(request: HostRemovalRequest): Promise<RemovalResult>;
  /**
   * Whether git on this host still has the worktree (src/git/presence.ts): asked before a caller's
   * word that it was removed is recorded. Non-retryable `path_outside_allowed_roots`.
   */
  worktreePresence(worktreePath: string): Promise<WorktreePresence>;
}
