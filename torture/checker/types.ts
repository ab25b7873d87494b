/**
 * The promise under test, one check per clause; a violation names the check and what broke it.
 * The list is exported so a test can hold every kind to a doctored input that makes it fire.
 */
export const CHECK_NAMES = [
  'one_live_ownership',
  'one_workflow_per_worktree',
  'epochs',
  'seq_gap_free',
  'read_projection_matches_log',
  'handoff_successor_worker',
  'session_foreign_worker',
  'path_not_canonical',
  'acknowledged_in_log',
  'illegal_acknowledged',
  'refused_not_logged',
  'explained_event',
  'local_projection',
  'unparseable_event',
  /** two events of one lifecycle carry the same (messageId, type) */
  'duplicate_message',
  /** a 4xx answer whose message id an event of the log carries */
  'refused_yet_logged',
  /** a 5xx answer whose message id an event of the log carries */
  'unavailable_took_effect',
  /** a 2xx answer of an event-making write whose message id no event carries (and that is no replay) */
  'acknowledged_not_logged',
  /** after quiesce, a running workflow's projection query disagrees with the fold of the log */
  'live_vs_log',
  /** a WorkflowTaskFailed event in a history of the run (nondeterminism: TMPRL1100) */
  'failed_workflow_task',
  /** a history of the run does not replay against the workflow bundle (or could not be fetched) */
  'replay',
] as const;

export type CheckName = (typeof CHECK_NAMES)[number];

export interface Violation {
  check: CheckName;
  message: string;
  ownershipId?: string;
  seq?: number;
  /** the call (CallRecord.n) concerned */
  call?: number;
  worktree?: string;
  /** Temporal-side checks: the workflow (and run) concerned */
  workflowId?: string;
  runId?: string;
}
