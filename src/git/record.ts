import { existsSync } from 'node:fs';
import type { OwnershipRecord } from '../domain/projection';
import { isHeldState } from '../domain/states';
import type { HoldTenure, Tenure } from '../domain/tenure';
import { GitSideError } from './errors';
import { applyLocalProjection, type LocalProjection } from './projection';

/** States in which the owner holds the worktree, so git's worktree lock is kept (remove/prune refuse). */
export { HELD_STATES } from '../domain/states';

export interface LocalTarget {
  /** null: the worktree should carry no projection (lifecycle over, or never owned). */
  projection: LocalProjection | null;
  gitLock: boolean;
  /** The lifecycle ended (closed, or its worktree was removed): clear, guarded by the record's seq. */
  ended: boolean;
}

/**
 * The `overdeck.owner.tenure-hash` words of a tenure (src/keys/tenure.ts tenureHashWords), or null
 * when the writer cannot derive them. Given by the caller: the host agent derives them from the
 * service key it was started with, reconcile from the key when it can read it. Asked too for each
 * live child hold (a HoldTenure: it has a `holdId`), whose words are holdTenureHashWords' and
 * never the owner's: an implementation tells the two apart by `holdId` (src/domain/tenure.ts isHoldTenure).
 */
export type TenureHashes = (tenure: Tenure | HoldTenure) => string | null;

/** For callers that compare or check what does not depend on the tenure proof (classification, the lock JSON). */
export const NO_TENURE_HASHES: TenureHashes = () => null;

/**
 * The local projection a durable record stands for: the one mapping from the service's record to
 * the worktree's config keys, lock JSON and git lock, shared by the host agent's activity and by
 * `od-worktree reconcile` so both always write the same thing for the same record. The tenure
 * hash is written while an owner holds the worktree, with each live child hold's beside it; a free
 * worktree asks nobody for a proof.
 */
export function localProjectionOf(record: OwnershipRecord, tenureHashes: TenureHashes): LocalTarget {
  if (record.state === 'closed' || record.worktreeRemoved) return { projection: null, gitLock: false, ended: true };
  const owner = record.owner;
  if (!owner) return { projection: null, gitLock: false, ended: false };
  const epochZero = new Date(0).toISOString();
  const held = isHeldState(record.state);
  const tenureHash = held ? tenureHashes({ ownershipId: record.ownershipId, epoch: record.epoch, executionSessionId: owner.executionSessionId }) : null;
  // A child holds only beside the owner's proof and under its epoch: a hold of an older epoch, or
  // one whose words the writer does not have, is not written, and the gate refuses its session.
  const holds =
    tenureHash === null
      ? []
      : (record.holds ?? []).flatMap((h) => {
          if (h.epoch !== record.epoch) return [];
          const words = tenureHashes({ ownershipId: record.ownershipId, epoch: h.epoch, holdId: h.holdId, executionSessionId: h.executionSessionId });
          return words === null ? [] : [{ holdId: h.holdId, executionSessionId: h.executionSessionId, tenureHash: words }];
        });
  return {
    projection: {
      ownershipId: record.ownershipId,
      executionSessionId: owner.executionSessionId,
      runtime: owner.runtime,
      conversationId: owner.conversation?.conversationId ?? null,
      conversationUrl: owner.conversation?.conversationUrl ?? null,
      workerId: record.worker?.workerId ?? null,
      runId: record.worker?.runId ?? null,
      lane: record.lane,
      planRef: record.planRef,
      epoch: record.epoch,
      seq: record.seq,
      state: record.state,
      claimedAt: record.claimedAt ?? record.lastSeenAt ?? epochZero,
      lastSeenAt: record.lastSeenAt ?? record.claimedAt ?? epochZero,
      ...(tenureHash !== null ? { tenureHash } : {}),
      ...(holds.length > 0 ? { holds } : {}),
    },
    gitLock: held,
    ended: false,
  };
}

export interface ApplyRecordOptions {
  /** Replace whatever is on disk (explicit repair). */
  force?: boolean;
  /** Compare-and-swap on the seq read before deciding (see WriteOptions.expectSeq). */
  expectSeq?: number | null;
  /** The worktree and both of its git dirs must resolve under one of these (WriteOptions.allowedRoots). */
  allowedRoots?: readonly string[];
  /** Bounded wait for the worktree's writer lock (WriteOptions.lockWaitMs). */
  lockWaitMs?: number;
}

/**
 * Brings the worktree's local artefacts to a durable record, exactly as the host agent does
 * (createHostActivities().applyLocalProjection): 'cleared' for an ended lifecycle (a worktree that
 * is gone is fine), else 'written' or 'skipped' (older than what is on disk). Without force or
 * expectSeq, another live ownership's projection is never replaced (`projection_conflict`) and a
 * clear leaves any other ownership's projection alone.
 */
export async function applyRecord(
  worktreePath: string,
  record: OwnershipRecord,
  tenureHashes: TenureHashes,
  opts: ApplyRecordOptions = {},
): Promise<'written' | 'skipped' | 'cleared'> {
  const target = localProjectionOf(record, tenureHashes);
  const cas = {
    ...(opts.force === true ? { force: true } : {}),
    ...(opts.expectSeq !== undefined ? { expectSeq: opts.expectSeq } : {}),
    ...(opts.allowedRoots !== undefined ? { allowedRoots: opts.allowedRoots } : {}),
    ...(opts.lockWaitMs !== undefined ? { lockWaitMs: opts.lockWaitMs } : {}),
  };
  if (target.ended) {
    if (!existsSync(worktreePath)) return 'cleared';
    try {
      const res = await applyLocalProjection(worktreePath, null, {
        gitLock: false,
        clearIfSeqAtMost: record.seq,
        clearOwnershipId: record.ownershipId,
        ...cas,
      });
      return res === 'skipped' ? 'skipped' : 'cleared';
    } catch (err) {
      // Its private git dir is gone too: nothing left to clear.
      if (err instanceof GitSideError && err.code === 'worktree_missing') return 'cleared';
      throw err;
    }
  }
  return applyLocalProjection(worktreePath, target.projection, { gitLock: target.gitLock, ...cas });
}
