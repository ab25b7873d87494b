import { OwnershipError } from '../../contract/refusal';
import { startSealRequest } from '../../domain/seal';
import { removalWorkflowId } from '../../ids/workflow-id';
import { PRESENCE_TIMEOUT_MS } from '../../domain/removal';
import type { worktreePresenceWorkflow } from '../../workflows/removal';
import { withTemporal, type ServiceDeps } from './context';

/**
 * A caller's word that a worktree is gone (`worktree-removed`), checked with git on the worktree's
 * host before anything is recorded (docs/cleanup.md#told-removals): a worktree still there is
 * refused with `worktree_present`, and a host that cannot be asked with `host_unavailable`; either
 * way nothing is written. Concurrent checks of one worktree share one workflow.
 */
export async function vouchRemoved(deps: ServiceDeps, at: { ownershipId: string; hostId: string; worktreePath: string }): Promise<void> {
  const seen = await deps.hostPresence?.of(at.hostId);
  if (seen?.agent === 'away')
    throw new OwnershipError('host_unavailable', undefined, { hostId: at.hostId, hostAgent: 'away', hostAgentSeenAgoMs: seen.seenAgoMs });
  const presence = await withTemporal(
    deps,
    async () => {
      try {
        return await deps.temporal.workflow.execute<typeof worktreePresenceWorkflow>('worktreePresenceWorkflow', {
          workflowId: removalWorkflowId(at.hostId, at.worktreePath).replace(/^removal\//, 'presence/'),
          taskQueue: deps.client.taskQueue,
          args: [{ ...at, seal: startSealRequest(Date.now()) }],
          workflowExecutionTimeout: PRESENCE_TIMEOUT_MS + 5_000,
          workflowIdReusePolicy: 'ALLOW_DUPLICATE',
          workflowIdConflictPolicy: 'USE_EXISTING',
          staticSummary: `is ${at.worktreePath} on ${at.hostId} gone?`,
        });
      } catch (err) {
        throw asRefusal(err, at.hostId) ?? err;
      }
    },
    PRESENCE_TIMEOUT_MS + 10_000,
  );
  if (presence.present)
    throw new OwnershipError('worktree_present', `git on ${at.hostId} still has the worktree (${presence.detail}); nothing was recorded`, {
      hostId: at.hostId,
      presence: presence.detail,
    });
}

export /** A host activity's final refusal (its type is the reason code) as the caller's; a timeout as host_unavailable. */
function asRefusal(err: unknown, hostId: string): OwnershipError | null {
  const causes: unknown[] = [];
  for (let e: unknown = err; e instanceof Error && causes.length < 5; e = (e as { cause?: unknown }).cause) causes.push(e);
  for (const e of causes) {
    const type = (e as { type?: unknown }).type;
    if (
      typeof type === 'string' &&
      ['path_outside_allowed_roots', 'path_not_found', 'not_a_worktree', 'invalid_argument', 'worktree_config_unsafe'].includes(type)
    ) {
      return new OwnershipError(
        type === 'invalid_argument' || type === 'worktree_config_unsafe' ? 'not_a_worktree' : (type as 'not_a_worktree'),
        (e as Error).message,
      );
    }
    if ((e as { timeoutType?: unknown }).timeoutType !== undefined) return new OwnershipError('host_unavailable', undefined, { hostId });
  }
  return null;
}
