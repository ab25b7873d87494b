export { GitSideError, type GitSideErrorCode } from './errors';
export { guardCheck, type GuardReason, type GuardResult, installHooks, type InstalledHooks, type InstallHooksOptions, GUARDED_HOOKS } from './guard';
export {
  clearLock,
  LOCK_FILE,
  type LockJson,
  LockJsonSchema,
  lockFromProjection,
  lockWorktree,
  readLock,
  unlockWorktree,
  worktreeLockReason,
  writeLock,
} from './lock';
export { assertUnderAllowedRoots, normalizePath, PathRefusal, type PathRefusalCode } from './paths';
export {
  applyLocalProjection,
  type ApplyOptions,
  clearSupersededProvisional,
  GIT_LOCK_PREFIX,
  gitLockReason,
  isLiveState,
  type LocalProjection,
  LocalProjectionSchema,
  NON_LIVE_STATES,
  PROJECTION_KEYS,
  PROVISIONAL_CONFLICT_STATE,
  PROVISIONAL_STATE,
  readProjection,
  readSupersededProvisional,
  SUPERSEDED_PROVISIONAL_FILE,
  writeProjection,
  type WriteOptions,
} from './projection';
export { isProvisional, newIdempotencyKey, offlineClaim, type OfflineClaimInput, type OfflineClaimOutcome, provisionalOwnershipId } from './provisional';
export { applyRecord, type ApplyRecordOptions, HELD_STATES, localProjectionOf, type LocalTarget, NO_TENURE_HASHES, type TenureHashes } from './record';
export { identifyWorktree, pinnedGit, type WorktreeDirs, worktreeDirs, type WorktreeIdentity } from './repo';
export { confineDirs } from './confine';
export { DEFAULT_LOCK_WAIT_MS, withWriterLock, WRITER_LOCK_DIR, type WriterLockOptions } from './writer-lock';
export { preserveWip, type PreserveWipOptions, wipRef } from './wip';
