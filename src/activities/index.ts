import { ApplicationFailure } from '@temporalio/activity';
import type { Pool } from 'pg';
import type { OwnershipRecord } from '../domain/projection';
import { appendEvents } from '../store/event-store';
import { readExecutorConversation } from '../store/bindings';
import { applyRecord } from '../git/record';
import { describeBranch } from '../git/status';
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
      const result = await applyRecord(worktreePath, record);
      // Observability only: a failure to describe the branch never fails the projection.
      const branch = result === 'cleared' ? null : await describeBranch(worktreePath).catch(() => null);
      return { localSeq: record.seq, result, branch };
    },
    async preserveWip(worktreePath, ownershipId, seq) {
      return preserveWip(await guardPath(worktreePath), ownershipId, seq);
    },
    async checkSessionLiveness(owner) {
      return deps.authority.check(owner);
    },
  };
}
