/**
 * Host activity failures no retry changes. The host agent fails these at once (src/activities/index.ts)
 * and the workflow's retry policy names them too (src/workflows/activities.ts): one list, so an
 * agent and a workflow never disagree on whether a refusal is worth another attempt.
 */
export const FINAL_HOST_ERRORS = [
  // the path, before any git runs (src/git/paths.ts PathRefusal)
  'path_outside_allowed_roots',
  'path_not_found',
  // what git says of the worktree (src/git/errors.ts GitSideError)
  'not_a_worktree',
  'git_too_old',
  'worktree_missing',
  'projection_conflict',
  'worktree_config_unsafe',
  'invalid_argument',
  // the branch a first claim names against git's (src/domain/branch.ts checkNamedBranch)
  'branch_mismatch',
  'detached_head',
] as const;

export type FinalHostError = (typeof FINAL_HOST_ERRORS)[number];

export function isFinalHostError(type: string): boolean {
  return (FINAL_HOST_ERRORS as readonly string[]).includes(type);
}
