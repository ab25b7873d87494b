/** Codes callers branch on; messages stay short and never echo paths or owner data they were not given. */
export type GitSideErrorCode =
  | 'git_too_old'
  | 'git_failed'
  | 'not_a_worktree'
  /** the worktree directory, or the private git dir its `.git` file names, is gone: retrying cannot help */
  | 'worktree_missing'
  /** the projection on disk belongs to another live ownership; only an explicit repair replaces it */
  | 'projection_conflict'
  /** another process held the worktree's writer lock for longer than the bounded wait: retry */
  | 'projection_busy'
  | 'worktree_config_unsafe'
  | 'projection_corrupt'
  | 'lock_corrupt'
  | 'invalid_argument'
  | 'guard_script_missing';

export class GitSideError extends Error {
  readonly code: GitSideErrorCode;

  constructor(code: GitSideErrorCode, reason: string) {
    super(`${code}: ${reason}`);
    this.name = 'GitSideError';
    this.code = code;
  }
}
