import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import { startRefused } from './seal';
import type { HostActivities } from '../activities/types';
import type { HostRemovalRequest, RemovalResult } from '../contract/removal';
import { FINAL_HOST_ERRORS } from '../domain/host-errors';
import { hostTaskQueue } from '../domain/queues';
import { REMOVAL_TIMEOUT_MS } from '../domain/removal';

/**
 * One lossless removal (POST /v1/worktrees/remove), done by the worktree's host agent on its own
 * queue: a workflow of its own, so the removal is in the Temporal UI beside the ownership it ends,
 * and the API never runs git for another host. The ownership workflow stays as it is: the API
 * records `worktree_removed` with the receipt once this answers `removed`.
 *
 * One attempt: the host activity snapshots before it removes, and a second attempt after a lost
 * answer would find no worktree and say so (`not_a_worktree`), which is the truth, not a retry's
 * success. Its bound is the caller's: the API waits for it and no longer.
 */
export async function worktreeRemovalWorkflow(request: HostRemovalRequest): Promise<RemovalResult> {
  // Only the API starts a removal, sealed (seal.ts): a raw client's `callerIsOwner` or made-up receipts remove nothing.
  const problem = startRefused(request, request.ownership?.ownershipId ?? '', 'worktreeRemovalWorkflow');
  if (problem !== null) throw ApplicationFailure.nonRetryable(`the removal's start is not sealed by a service process (${problem})`, 'message_unsealed');
  const { removeWorktree } = proxyActivities<Pick<HostActivities, 'removeWorktree'>>({
    taskQueue: hostTaskQueue(request.hostId),
    scheduleToCloseTimeout: REMOVAL_TIMEOUT_MS,
    retry: { maximumAttempts: 1, nonRetryableErrorTypes: [...FINAL_HOST_ERRORS] },
  });
  const { seal: _seal, ...asked } = request;
  return removeWorktree(asked);
}
