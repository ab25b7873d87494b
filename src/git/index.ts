export { GitSideError, type GitSideErrorCode } from './errors';
export { guardCheck, type GuardReason, type GuardResult, installHooks, type InstalledHooks, type InstallHooksOptions, GUARDED_HOOKS } from './guard';
export { clearLock, LOCK_FILE, type LockJson, LockJsonSchema, lockFromProjection, lockWorktree, readLock, unlockWorktree, worktreeLockReason, writeLock } from './lock';
export { assertUnderAllowedRoots, normalizePath, PathRefusal, type PathRefusalCode } from './paths';
export {
  applyLocalProjection,
  type ApplyOptions,
  GIT_LOCK_PREFIX,
  gitLockReason,
  isLiveState,
  type LocalProjection,
  LocalProjectionSchema,
  NON_LIVE_STATES,
  PROJECTION_KEYS,
  readProjection,
  writeProjection,
  type WriteOptions,
} from './projection';
export { preserveWip, wipRef } from './wip';
