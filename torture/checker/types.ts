/** The promise under test, one check per clause; a violation names the check and what broke it. */
export type CheckName =
  | 'one_live_ownership'
  | 'one_workflow_per_worktree'
  | 'epochs'
  | 'seq_gap_free'
  | 'read_projection_matches_log'
  | 'handoff_successor_worker'
  | 'session_foreign_worker'
  | 'path_not_canonical'
  | 'acknowledged_in_log'
  | 'illegal_acknowledged'
  | 'refused_not_logged'
  | 'explained_event'
  | 'local_projection'
  | 'unparseable_event';

export interface Violation {
  check: CheckName;
  message: string;
  ownershipId?: string;
  seq?: number;
  /** the call (CallRecord.n) concerned */
  call?: number;
  worktree?: string;
}
