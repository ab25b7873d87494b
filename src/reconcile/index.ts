/**
 * Reconciliation of a worktree's local projection with the durable record (docs/git-projection.md#reconciliation, #offline-claims).
 * The library talks to the service only through a ReconcilePort: http-port.ts implements one over
 * the authenticated HTTP API (what the CLI uses), service-port.ts one directly on Temporal and
 * PostgreSQL for the service host (each imported separately so git-only callers load neither).
 */
export { classify, type Classification, isOlderOwnership, sameProjection } from './classify';
export {
  type BindOutcome,
  type ProvisionalSubmission,
  type ProvisionalSummary,
  type ReconcileKind,
  type ReconcilePort,
  type ReconciliationEntry,
  ReconcileRefused,
  ReconcileUnavailable,
} from './port';
export { reconcile, type ReconcileOptions, type ReconcileResult } from './reconcile';
export { inspectWorktree, type WorktreeInfo } from './worktree';
