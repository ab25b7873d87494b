/** Codes callers branch on; messages stay short and never echo paths or owner data they were not given. */
export type GitSideErrorCode =
  | 'git_too_old'
  | 'git_failed'
  | 'not_a_worktree'
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
