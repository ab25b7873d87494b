import type { OwnershipRecord } from '../domain/projection';
import type { ReconciliationBody } from '../contract/reconcile';

/**
 * How reconciliation talks to the service. Defined here, implemented outside: over the
 * authenticated HTTP API (http-port.ts: what every CLI command uses), or directly on Temporal and
 * PostgreSQL (service-port.ts: the service itself, tests and admin tooling on the service host).
 * Reconciliation itself never knows which.
 */
export interface ReconcilePort {
  /** The durable record governing this worktree now (the latest lifecycle), or null when the service knows none. */
  durable(worktreePath: string): Promise<OwnershipRecord | null>;
  /** Submits a provisional claim as a bind by its session. A refusal is an answer, not an error. */
  bind(req: ProvisionalSubmission): Promise<BindOutcome>;
  /** Records the reconciliation durably (proposed `ownership.reconciled` event). Optional. */
  recordReconciliation?(entry: ReconciliationEntry): Promise<void>;
}

/** A provisional claim (docs/git-projection.md#offline-claims) as submitted to the service: never a conversation. */
export interface ProvisionalSubmission {
  repoRoot: string;
  worktreePath: string;
  branch: string;
  executionSessionId: string;
  runtime: string;
  /**
   * The worker the claim names (claim --offline --worker), null when none. It grants nothing: the
   * HTTP port binds as its token's worker and refuses a claim naming another (`worker_mismatch`).
   */
  worker: { workerId: string; runId: string | null } | null;
  lane: string | null;
  planRef: string | null;
  idempotencyKey: string | null;
  claimedAt: string;
}

export type BindOutcome =
  | { ok: true; record: OwnershipRecord }
  /** `code` is a reason code (worktree_owned, ownership_closed, worktree_mismatch, ...). */
  | { ok: false; code: string; details?: Record<string, unknown> };

export type ReconcileKind =
  /** local projection agrees with the durable record */
  | 'in_sync'
  /** neither side knows an owner */
  | 'unowned'
  /** local was missing or behind (lower seq, older ownership): rewritten from the durable record */
  | 'rehydrated'
  /** local names another ownership than the durable one (and is not simply older) */
  | 'stale'
  /** local is unreadable, or disagrees with the durable record at the same or a higher seq */
  | 'corrupt'
  /** a provisional claim was bound by the service: the real projection replaced it */
  | 'submitted'
  /** a provisional claim lost to the durable owner (or was refused) */
  | 'conflict';

export interface ProvisionalSummary {
  executionSessionId: string;
  runtime: string;
  idempotencyKey: string | null;
  claimedAt: string;
}

/** What the proposed `ownership.reconciled` event carries: ids and seqs only, no payloads. */
export interface ReconciliationEntry {
  worktreePath: string;
  kind: ReconcileKind;
  /** Why, for non-trivial kinds: missing, older_seq, older_ownership, locks, unparseable, same_seq_mismatch, ahead_of_durable, other_ownership, unknown_to_service, or a refusal code. */
  reason: string | null;
  repaired: boolean;
  ownershipId: string | null;
  localOwnershipId: string | null;
  localSeq: number | null;
  durableSeq: number | null;
  provisional: ProvisionalSummary | null;
  at: string;
}

/** The service could not be asked (network, Temporal, PostgreSQL): nothing was decided. */
export class ReconcileUnavailable extends Error {
  constructor(readonly causeMessage: string) {
    super(`unavailable: ${causeMessage}`);
    this.name = 'ReconcileUnavailable';
  }
}

/**
 * The service refused the caller itself (no token, an unknown token, a principal that may not do
 * this): nothing was decided and nothing was written; the same call with another token may succeed.
 */
export class ReconcileRefused extends Error {
  constructor(
    /** a reason code: unauthenticated, forbidden, worker_mismatch */
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ReconcileRefused';
  }
}

// A body the route accepts (src/contract/reconcile.ts) is an entry reconcile produces, and the other way round.
const _bodyIsEntry = (b: ReconciliationBody): ReconciliationEntry => b;
const _entryFits = (e: ReconciliationEntry & { kind: ReconciliationBody['kind'] }): Omit<ReconciliationBody, 'kind'> => e;
void _bodyIsEntry;
void _entryFits;
