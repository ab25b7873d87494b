/**
 * Stable reason codes. Every refusal anywhere (workflow validators, store, git side, HTTP, CLI)
 * carries one of these; clients branch on them, so they never change meaning once published.
 */
/** The refusal of a run that is continuing as new (validators while it drains; the client at the seam): callers try again. */
export const CONTINUING_AS_NEW = 'the ownership is continuing as new; retry shortly';

export const REASONS = {
  invalid_input: 'the message does not match its schema',
  unknown_field: 'the message carries a field that is not part of its schema',
  nil_uuid: 'the nil UUID is not a conversation identity',
  conversation_mismatch: 'conversation URL and id name different conversations',
  conversation_forbidden: 'a bind may not name a conversation; it comes from the executor binding',
  conversation_taken: 'this conversation is already bound to another worker',
  observation_too_old: 'the observation is older than the accepted window',
  observation_in_future: 'the observation is dated in the future',
  sequence_not_increasing: 'the observation sequence did not increase for this session generation',
  worktree_owned: 'another live session owns this worktree',
  not_owner: 'the caller is not the current owner',
  stale_epoch: 'the epoch presented is not the current one',
  invalid_state: 'the ownership is not in a state that allows this',
  ownership_closed: 'the ownership lifecycle has ended',
  not_a_worktree: 'the path is not the top directory of a git worktree',
  worktree_missing: 'the worktree (or its private git dir) no longer exists on its host',
  projection_conflict: "the worktree's local projection belongs to another live ownership; only an explicit repair replaces it",
  not_found: 'no such ownership',
  owner_alive: 'the owner session is alive; reclaim refused',
  liveness_unknown: 'the owner session liveness is unknown; only a forced admin reclaim may proceed',
  force_requires_admin: 'force is reserved to admin principals',
  force_requires_reason: 'forcing needs a reason',
  no_pending_handoff: 'no handoff is pending',
  handoff_mismatch: 'the handoff id or successor does not match the pending handoff',
  path_outside_allowed_roots: 'the path is not under a configured allowed root',
  path_not_found: 'the path does not exist',
  worktree_mismatch: 'the message names a different worktree than this ownership',
  ownership_mismatch: 'the message names another lifecycle (ownershipId) than the one governing this worktree now',
  repo_root_mismatch: 'the repository root given does not match the one git reports for this worktree',
  branch_mismatch: 'the branch named is not the one git has checked out in this worktree',
  detached_head: 'the worktree has no branch checked out (HEAD is detached): an ownership records the branch git names',
  ambiguous: 'more than one ownership matches; name the ownership (ownershipId) instead',
  process_not_session:
    "the process identity given is not the session's own process on this host (pid 1, a process that ended, another process or another session's): its liveness could never be judged",
  host_unavailable: 'the host that holds the worktree did not answer in time; nothing changed',
  unauthenticated: 'missing or unknown bearer token',
  message_unsealed: 'the message carries no valid service seal: only service processes (the API, with the service key) may message an ownership',
  forbidden: 'the principal may not perform this operation',
  worker_mismatch: 'an executor may act only for its own worker',
  unavailable: 'a backing service is unavailable; retry later',
  unlanded_commits: "commits of the worktree's branch landed nowhere and no ref preserves them: removing it could lose them",
  dirty_files: 'the worktree has uncommitted or untracked files and no snapshot of them can be taken: removing it would lose them',
  snapshot_failed: "the snapshot of the worktree's uncommitted and untracked files failed: nothing was removed",
  removal_in_progress: 'another removal of this worktree is running; ask again once it has answered',
  holds_live: 'child sessions hold under this tenure: end their holds first (details.children names them)',
  holds_exhausted: 'this ownership has as many child holds as it may; end one first',
  worktree_present: "git on the worktree's host still has the worktree: its removal is not recorded",
  internal: 'an unexpected failure; see the service log',
} as const;

export type ReasonCode = keyof typeof REASONS;

/** A refusal as data: pure modules return it, boundaries turn it into their own error shape. */
export interface Refusal {
  code: ReasonCode;
  message: string;
  /** Safe, non-secret context (e.g. the owner summary for worktree_owned). Never echoes the payload. */
  details?: Record<string, unknown>;
}

export function refusal(code: ReasonCode, details?: Record<string, unknown>, message?: string): Refusal {
  return { code, message: message ?? REASONS[code], ...(details ? { details } : {}) };
}

export function isRefusal(x: unknown): x is Refusal {
  return typeof x === 'object' && x !== null && 'code' in x && typeof (x as Refusal).code === 'string' && (x as Refusal).code in REASONS;
}
