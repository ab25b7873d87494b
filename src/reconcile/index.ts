/**
 * Reconciliation of a worktree's local projection with the durable record (spec §9, §14.2, §14.5).
 * The library talks to the service only through a ReconcilePort; service-port.ts implements one on
 * the typed client and PostgreSQL (imported separately so git-only callers do not load Temporal).
 */
export { classify, type Classification, isOlderOwnership, sameProjection } from './classify';
export {
  type BindOutcome,
  type ProvisionalSubmission,
  type ProvisionalSummary,
  type ReconcileKind,
  type ReconcilePort,
  type ReconciliationEntry,
  ReconcileUnavailable,
} from './port';
export { reconcile, type ReconcileOptions, type ReconcileResult } from './reconcile';
export { inspectWorktree, type WorktreeInfo } from './worktree';
