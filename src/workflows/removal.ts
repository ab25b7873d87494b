import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import { startRefused } from './seal';
import type { HostActivities } from '../activities/types';
import type { HostRemovalRequest, RemovalResult, WorktreePresence } from '../contract/removal';
import { FINAL_HOST_ERRORS } from '../domain/host-errors';
import { hostTaskQueue } from '../domain/queues';
import { PRESENCE_TIMEOUT_MS, REMOVAL_TIMEOUT_MS } from '../domain/removal';

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

export interface PresenceRequest {
  hostId: string;
  ownershipId: string;
  worktreePath: string;
  seal?: unknown;
}

/**
 * Before the service records a caller's word that a worktree is gone (`worktree-removed`), git on
 * the worktree's host is asked (src/git/presence.ts): a workflow of its own because only the
 * host's agent may run git there, and so the check shows in the Temporal UI beside the ownership.
 * Read-only, so retried within its bound; sealed like every start (only the API asks).
 */
export async function worktreePresenceWorkflow(request: PresenceRequest): Promise<WorktreePresence> {
  const problem = startRefused(request, request.ownershipId, 'worktreePresenceWorkflow');
  if (problem !== null) throw ApplicationFailure.nonRetryable(`the presence check's start is not sealed by a service process (${problem})`, 'message_unsealed');
  const { worktreePresence } = proxyActivities<Pick<HostActivities, 'worktreePresence'>>({
    taskQueue: hostTaskQueue(request.hostId),
    scheduleToCloseTimeout: PRESENCE_TIMEOUT_MS,
    startToCloseTimeout: PRESENCE_TIMEOUT_MS / 2,
    retry: { initialInterval: '200ms', nonRetryableErrorTypes: [...FINAL_HOST_ERRORS] },
  });
  return worktreePresence(request.worktreePath);
}
