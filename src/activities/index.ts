import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { Pool } from '../store/db';
import type { OwnershipRecord } from '../domain/projection';
import type { OwnershipSettings } from '../domain/settings';
import { appendEvents, readEvents, SecondLiveOwner } from '../store/event-store';
import { readExecutorConversation } from '../store/bindings';
import { readHeartbeat } from '../store/heartbeats';
import { confineDirs } from '../git/confine';
import { GitSideError } from '../git/errors';
import { applyRecord, type TenureHashes } from '../git/record';
import { anyTenureHashWords, holdTenureHashWords, tenureHashWords } from '../keys/tenure';
import { isFinalHostError } from '../domain/host-errors';
import { keyringKeys, type MessageKeyring } from '../keys/message-seal';
import { identifyWorktree, worktreeDirs } from '../git/repo';
import { checkedOutBranch } from '../git/head';
import { checkNamedBranch } from '../domain/branch';
import { describeBranch } from '../git/status';
import { preserveWip, wipSize } from '../git/wip';
import { preserveLateWork } from '../git/late';
import { failedRemoval, projectedOwnership, removalResult, removeWorktree } from '../git/removal';
import { worktreePresence } from '../git/presence';
import { mergeOwnership } from '../domain/removal';
import { assertUnderAllowedRoots, PathRefusal } from '../git/paths';
import type { LivenessAuthority } from './liveness';
import { type CarriedTenure, tenureHashesFor } from '../host/carried-tenure';
import type { HostActivities, InspectedWorktree, Persisted, ProjectionWritten, StoreActivities } from './types';
import { isHeldState } from '../domain/states';

export type { HostActivities, InspectedWorktree, Persisted, ProjectionWritten, StoreActivities } from './types';

/**
 * The log write's shortcut to the worktree: in a process that is also the host agent of the
 * worktree's host (npm start, a one-host deployment), the write projects the record it made
 * durable before it answers, so the workflow schedules no projection activity of its own (one
 * workflow task and one activity less per change). Anything but a clean write of the run's batch,
 * a worktree of another host, or a projection that fails or is slow leaves it to the workflow's
 * projection loop on the host agent's queue, as before.
 */
export interface LocalProjector {
  hostId: string;
  project(record: OwnershipRecord): Promise<ProjectionWritten>;
}

/** Events that change nothing the worktree's hooks enforce: their projection is not worth the answer's wait. */
const OFF_THE_PATH: ReadonlySet<string> = new Set(['ownership.plan_bound']);

/** How long the log write waits for its shortcut projection before it answers without it. */
const INLINE_PROJECTION_MS = 1_000;
/** The shortcut never queues behind another writer for long: the projection loop is patient instead. */
const INLINE_LOCK_WAIT_MS = 250;

/** Store activities: the durable log and the executor bindings, on the main task queue. */
export function createStoreActivities(deps: {
  pool: Pool;
  settings?: Partial<OwnershipSettings> | null;
  local?: LocalProjector | null;
  /** The service key: with it, the answer carries the record's tenure hash for the host agent (Persisted.tenure). */
  keyring?: MessageKeyring | null;
}): StoreActivities {
  const settings = deps.settings ?? null;
  const local = deps.local ?? null;
  const keys = deps.keyring ? keyringKeys(deps.keyring) : null;
  const carriedFor = (record: OwnershipRecord | null): CarriedTenure | undefined => {
    if (keys === null || record === null || record.owner === null || !isHeldState(record.state)) return undefined;
    const tenure = { ownershipId: record.ownershipId, epoch: record.epoch, executionSessionId: record.owner.executionSessionId };
    // Each live child hold's words beside the owner's (src/git/record.ts writes those of the record's epoch only).
    const holds = (record.holds ?? [])
      .filter((h) => h.epoch === record.epoch)
      .map((h) => ({
        holdId: h.holdId,
        executionSessionId: h.executionSessionId,
        tenureHash: holdTenureHashWords(keys, { ...tenure, holdId: h.holdId, executionSessionId: h.executionSessionId }),
      }));
    return { ...tenure, tenureHash: tenureHashWords(keys, tenure), ...(holds.length > 0 ? { holds } : {}) };
  };
  return {
    async persistEvents(workflowId, events, base) {
      let written;
      try {
        written = await appendEvents(deps.pool, workflowId, events, base);
      } catch (err) {
        // The one refusal the log makes (a second live owner of the worktree): final, typed with its reason code.
        if (err instanceof SecondLiveOwner) throw ApplicationFailure.nonRetryable(err.message, err.code);
        throw err;
      }
      const { record, ...durable } = written;
      if (durable.ahead) return durable;
      const tenure = carriedFor(record);
      const appended: Persisted = tenure ? { ...durable, tenure } : durable;
      if (!local || record === null || record.seq !== events.at(-1)?.seq || record.hostId !== local.hostId) return appended;
      // Nothing the worktree's hooks enforce changed (a lane or plan): not on the answer's path, the projection loop writes it after.
      if (events.every((e) => OFF_THE_PATH.has(e.type))) return appended;
      const projected = await projectWithin(local, record, INLINE_PROJECTION_MS);
      return projected ? { ...appended, projected } : appended;
    },
    async readLogTail(ownershipId, afterSeq) {
      return readEvents(deps.pool, ownershipId, afterSeq);
    },
    async readHeartbeat(ownershipId) {
      return readHeartbeat(deps.pool, ownershipId);
    },
    async readExecutorConversation(workerId) {
      return readExecutorConversation(deps.pool, workerId);
    },
    async readSettings() {
      return settings;
    },
  };
}

/** The shortcut's projection, or null when it failed or took longer than `ms` (the projection loop then writes it). */
async function projectWithin(local: LocalProjector, record: OwnershipRecord, ms: number): Promise<Persisted['projected'] | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)));
  try {
    const out = await Promise.race([local.project(record).catch(() => null), late]);
    return out === null ? null : { localSeq: out.localSeq, ...(out.branch !== undefined ? { branch: out.branch } : {}) };
  } finally {
    clearTimeout(timer);
  }
}

/** The activity's failure for an error of the git side: reason codes as ApplicationFailure types. */
function hostFailure(err: unknown, rename: Partial<Record<string, string>> = {}): unknown {
  if (err instanceof CancelledFailure || err instanceof ApplicationFailure) return err;
  if (err instanceof PathRefusal) return ApplicationFailure.nonRetryable(err.message, rename[err.code] ?? err.code);
  if (err instanceof GitSideError) {
    const type = rename[err.code] ?? err.code;
    return isFinalHostError(err.code) ? ApplicationFailure.nonRetryable(err.message, type) : ApplicationFailure.retryable(err.message, type);
  }
  return err;
}

/** Attempts of a projection write that wait for the late work to be preserved (preserveLateFirst). */
const LATE_PRESERVE_ATTEMPTS = 3;

/** The running activity's context, or null when called directly (tests, scripts). */
function activityContext(): Context | null {
  try {
    return Context.current();
  } catch {
    return null;
  }
}

/**
 * Runs `fn` while heartbeating every 2 s, so the workflow's heartbeat timeout (not the much longer
 * start-to-close) notices a task that never reached the agent: one dispatched to a poll whose
 * answer a broken link lost is retried seconds after the link returns, not a minute later.
 */
async function heartbeating<T>(fn: () => Promise<T>): Promise<T> {
  const ctx = activityContext();
  const timer = ctx === null ? null : setInterval(() => ctx.heartbeat(), 2_000);
  try {
    return await fn();
  } finally {
    if (timer !== null) clearInterval(timer);
  }
}

/**
 * The local projection's write, with the checks every path to it makes: what the host agent's
 * applyLocalProjection runs, and the log write's shortcut (createLocalProjector).
 */
function projectionWriter(deps: {
  allowedRoots: string[];
  /** null: a host agent without the service key, which writes only tenure hashes carried to it (src/host/carried-tenure.ts) */
  keyring: MessageKeyring | null;
  lockWaitMs?: number | undefined;
  /**
   * Never write past late work that could not be preserved. The host agent's activity goes on
   * without it after its first attempts; the log write's shortcut runs inside another activity,
   * whose attempts say nothing of the snapshot's, so it gives the write to the agent instead.
   */
  lateWorkFirstAlways?: boolean;
}): (record: OwnershipRecord, carried?: unknown) => Promise<ProjectionWritten> {
  const roots = deps.allowedRoots;
  const keys = deps.keyring === null ? null : keyringKeys(deps.keyring);
  const derive: TenureHashes | null = keys === null ? null : (t) => anyTenureHashWords(keys, t);
  const lockWait = deps.lockWaitMs === undefined ? {} : { lockWaitMs: deps.lockWaitMs };
  /**
   * An older tenure's late work is kept before a newer projection ends it (src/git/late.ts). A
   * failure fails the write (retried) for the first attempts; after that the projection goes on
   * without it, so the newer owner's enforcement is never hostage to a snapshot (the late commits
   * stay on the branch and in the journal). The activity heartbeats all along (heartbeating), so
   * the snapshot gets no heartbeat of its own.
   */
  const preserveLateFirst = async (worktreePath: string, record: OwnershipRecord): Promise<void> => {
    const ctx = activityContext();
    try {
      await preserveLateWork(worktreePath, record, {
        allowedRoots: roots,
        ...(ctx === null ? {} : { signal: ctx.cancellationSignal }),
      });
    } catch (err) {
      if (deps.lateWorkFirstAlways || ctx === null || ctx.info.attempt < LATE_PRESERVE_ATTEMPTS || ctx.cancellationSignal.aborted) throw err;
      ctx.log.warn('late work of the older tenure not preserved; writing the projection without it', {
        worktreePath,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  };
  return async (record: OwnershipRecord, carried?: unknown) => {
    try {
      const tenureHashes = tenureHashesFor(record, carried, derive);
      const worktreePath = await assertUnderAllowedRoots(record.worktreePath, roots);
      // Observability only (a failure to describe the branch never fails the projection), and
      // independent of the write: asked beside it, so its git processes add no time of their own;
      // only once the worktree's git dirs are known to be under the roots (git reads their config).
      const dirs = await worktreeDirs(worktreePath).catch(() => null);
      const described = (dirs === null ? Promise.resolve(null) : confineDirs(dirs, roots).then(() => describeBranch(worktreePath))).catch(() => null);
      await preserveLateFirst(worktreePath, record);
      const result = await applyRecord(worktreePath, record, tenureHashes, { allowedRoots: roots, ...lockWait });
      const branch = result === 'cleared' ? null : await described;
      return { localSeq: record.seq, result, branch };
    } catch (err) {
      throw hostFailure(err);
    }
  };
}

/**
 * This host's projection writer for the log write's shortcut (createStoreActivities): the host
 * agent's checks and write, a short wait for the worktree's writer lock, then `afterWrite` (the
 * journal shipper, as after the agent's own writes).
 */
export function createLocalProjector(deps: {
  hostId: string;
  allowedRoots: string[];
  keyring: MessageKeyring;
  afterWrite?: (record: OwnershipRecord) => void;
}): LocalProjector {
  const write = projectionWriter({ allowedRoots: deps.allowedRoots, keyring: deps.keyring, lockWaitMs: INLINE_LOCK_WAIT_MS, lateWorkFirstAlways: true });
  return {
    hostId: deps.hostId,
    async project(record) {
      const out = await write(record);
      deps.afterWrite?.(record);
      return out;
    },
  };
}

/**
 * Git activities for the worktrees of one host. Each checks the path given against the allowed
 * roots, then (in src/git) that the worktree's private and common git dirs resolve under them too,
 * and writes only through those resolved directories.
 */
export function createHostActivities(deps: {
  allowedRoots: string[];
  authority: LivenessAuthority;
  /**
   * The deployment's service key: every live owner's projection carries the hashes of its tenure
   * secret under each key (src/keys/tenure.ts), which the API derives from the same keys. null: a
   * host agent that holds no key, and writes only the hashes the control plane carries in the
   * activity's input (src/host/carried-tenure.ts).
   */
  keyring: MessageKeyring | null;
  /** Bounded wait for a worktree's cross-process writer lock (default: src/git/writer-lock.ts). */
  projectionLockWaitMs?: number;
}): HostActivities {
  const roots = deps.allowedRoots;
  const applyProjection = projectionWriter({ allowedRoots: roots, keyring: deps.keyring, lockWaitMs: deps.projectionLockWaitMs });
  return {
    async applyLocalProjection(record: OwnershipRecord, carried?: CarriedTenure) {
      return heartbeating(() => applyProjection(record, carried));
    },
    async preserveWip(worktreePath, ownershipId, seq) {
      const ctx = activityContext();
      try {
        const wt = await assertUnderAllowedRoots(worktreePath, roots);
        const made = await preserveWip(wt, ownershipId, seq, {
          allowedRoots: roots,
          // An ordinary activity on the host agent's queue: it heartbeats while git runs, within the workflow's heartbeat timeout (hostWip).
          ...(ctx === null ? {} : { signal: ctx.cancellationSignal, heartbeat: () => ctx.heartbeat() }),
        });
        if (made === null) return null;
        // Its size, for who and history: what the snapshot holds beyond HEAD.
        const size = await wipSize(wt, made.sha);
        return { ref: made.ref, sha: made.sha, ...(size ?? {}) };
      } catch (err) {
        // A cancelled activity reports the cancellation, whatever the killed git printed.
        if (ctx?.cancellationSignal.aborted === true && ctx.cancellationSignal.reason instanceof Error) throw ctx.cancellationSignal.reason;
        throw hostFailure(err);
      }
    },
    async inspectWorktree(worktreePath, claimedBranch): Promise<InspectedWorktree> {
      try {
        const p = await assertUnderAllowedRoots(worktreePath, roots, { mustExist: true });
        const id = await identifyWorktree(p);
        if (id.bare && id.isMain) throw new GitSideError('not_a_worktree', 'a bare repository has no worktree to own');
        await confineDirs(id, roots);
        const branch = await checkedOutBranch(id);
        // The branch a claim would record is git's on this host (src/domain/branch.ts): no retry changes that.
        const wrong = claimedBranch === undefined ? null : checkNamedBranch(claimedBranch, branch);
        if (wrong)
          throw ApplicationFailure.create({ type: wrong.code, message: wrong.message, nonRetryable: true, details: wrong.details ? [wrong.details] : [] });
        return { worktreePath: id.worktreePath, repoRoot: id.repoRoot, branch };
      } catch (err) {
        // The contract names three codes: a worktree whose git dir is gone is not a worktree.
        throw hostFailure(err, { worktree_missing: 'not_a_worktree' });
      }
    },
    async checkSessionLiveness(owner) {
      return deps.authority.check(owner);
    },
    async removeWorktree(req) {
      let dirs;
      try {
        const p = await assertUnderAllowedRoots(req.worktreePath, roots, { mustExist: true });
        dirs = await worktreeDirs(p);
        await confineDirs(dirs, roots);
        if (dirs.isMain) throw new GitSideError('invalid_argument', 'the main worktree of a repository is never removed');
      } catch (err) {
        throw hostFailure(err, { worktree_missing: 'not_a_worktree' });
      }
      // The hooks' record counts as much as the service's: a projection holding the worktree keeps it.
      const ownership = mergeOwnership(await projectedOwnership(dirs.worktreePath), req.ownership);
      try {
        const outcome = await removeWorktree(dirs.worktreePath, {
          ownership,
          // Released by this very call: the owner's, only while the projection names that ownership.
          callerIsOwner: req.callerIsOwner && ownership !== null && ownership.ownershipId === req.ownership?.ownershipId,
          liveness: req.liveness,
          sources: { branches: req.targets, receipts: req.receipts },
          dryRun: req.dryRun,
          deleteBranch: req.deleteBranch,
          allowedRoots: roots,
        });
        return removalResult(dirs.worktreePath, outcome);
      } catch (err) {
        if (err instanceof GitSideError || err instanceof PathRefusal) return failedRemoval(dirs.worktreePath, err);
        throw err;
      }
    },
    async worktreePresence(worktreePath) {
      try {
        return await worktreePresence(worktreePath, roots);
      } catch (err) {
        throw hostFailure(err);
      }
    },
  };
}
