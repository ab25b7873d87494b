import { existsSync } from 'node:fs';
import { ApplicationFailure } from '@temporalio/activity';
import type { Pool } from 'pg';
import type { OwnershipRecord } from '../domain/projection';
import { appendEvents } from '../store/event-store';
import { readExecutorConversation } from '../store/bindings';
import { applyLocalProjection } from '../git/projection';
import { preserveWip } from '../git/wip';
import { assertUnderAllowedRoots, PathRefusal } from '../git/paths';
import type { LivenessAuthority } from './liveness';
import type { HostActivities, StoreActivities } from './types';

export type { HostActivities, StoreActivities } from './types';

/** Store activities: the durable log and the executor bindings, on the main task queue. */
export function createStoreActivities(deps: { pool: Pool }): StoreActivities {
  return {
    async persistEvents(workflowId, events) {
      return appendEvents(deps.pool, workflowId, events);
    },
    async readExecutorConversation(workerId) {
      return readExecutorConversation(deps.pool, workerId);
    },
  };
}

/** Git activities for the worktrees of one host; they refuse any path outside its allowed roots. */
export function createHostActivities(deps: { allowedRoots: string[]; authority: LivenessAuthority }): HostActivities {
  const guardPath = async (p: string): Promise<string> => {
    try {
      return await assertUnderAllowedRoots(p, deps.allowedRoots);
    } catch (err) {
      if (err instanceof PathRefusal) throw ApplicationFailure.nonRetryable(err.message, err.code);
      throw err;
    }
  };
  return {
    async applyLocalProjection(record: OwnershipRecord) {
      const worktreePath = await guardPath(record.worktreePath);
      if (record.state === 'closed' || record.worktreeRemoved) {
        // The lifecycle is over: drop the keys and locks if the worktree is still there.
        if (existsSync(worktreePath)) await applyLocalProjection(worktreePath, null, { gitLock: false, clearIfSeqAtMost: record.seq });
        return { localSeq: record.seq, result: 'cleared' as const };
      }
      const held = record.state === 'active' || record.state === 'handoff_pending' || record.state === 'stale' || record.state === 'submitted';
      const owner = record.owner;
      const result = await applyLocalProjection(
        worktreePath,
        owner
          ? {
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
              claimedAt: record.claimedAt ?? record.lastSeenAt ?? new Date(0).toISOString(),
              lastSeenAt: record.lastSeenAt ?? record.claimedAt ?? new Date(0).toISOString(),
            }
          : null,
        { gitLock: held },
      );
      return { localSeq: record.seq, result };
    },
    async preserveWip(worktreePath, ownershipId, seq) {
      return preserveWip(await guardPath(worktreePath), ownershipId, seq);
    },
    async checkSessionLiveness(owner) {
      return deps.authority.check(owner);
    },
  };
}
