import type { Hold } from '../../domain/events';
import { checkNoHolds } from '../../domain/hold';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { OwnershipError } from '../../contract/refusal';
import type { HostRemovalRequest, RemovalRecord, RemoveWorktreeBody, RemoveWorktreeResponse } from '../../contract/removal';
import type { Principal } from '../../domain/identity';
import { isFreeState } from '../../domain/states';
import { holdsWorktree, REMOVAL_TIMEOUT_MS, removedReceipt, type OwnershipFact } from '../../domain/removal';
import { removalWorkflowId } from '../../ids/workflow-id';
import { startSealRequest } from '../../domain/seal';
import { getOwnership, latestOwnershipAt } from '../../store/lookups';
import type { worktreeRemovalWorkflow } from '../../workflows/removal';
import { asRefusal } from './presence';
import { authorizeForWorker } from '../../auth/policy';
import { authorizeOp, redact, throwRefusal, withTemporal, type ServiceDeps } from './context';
import { liveOf } from './live';
import { release } from './ownerships';
import { signalAndAwait } from './signalled';

/**
 * POST /v1/worktrees/remove (docs/cleanup.md#through-the-api): the orchestrator's lossless removal.
 * The service supplies what only it knows (the ownership's state, its owner's liveness, its landing
 * receipts), the worktree's host agent decides under the rule and removes (src/workflows/removal.ts),
 * and the removal is recorded on the ownership (`worktree_removed` with the receipt).
 *
 * An owner removing its own worktree names its session and epoch: the ownership is released first
 * through the owner's own release, which the workflow checks as any other, so nothing here decides
 * who the owner is. Anyone else meets the rule: a worktree another session holds stays.
 */
export async function removeWorktree(deps: ServiceDeps, principal: Principal, body: RemoveWorktreeBody): Promise<RemoveWorktreeResponse> {
  authorizeOp(principal, 'removeWorktree');
  const hostId = body.hostId ?? deps.client.hostId;
  const worktreePath = await deps.client.normalize(body.worktreePath);
  const dryRun = body.dryRun === true;
  let found = await latestOwnershipAt(deps.pool, { hostId, worktreePath });
  // An executor acts for its own worker: the worktrees its worker's sessions owned (or nobody did).
  if (principal.kind === 'executor' && found !== null)
    throwRefusal(authorizeForWorker(principal, found.record.worker?.workerId ?? null, found.record.worker?.runId ?? null));

  // A host whose agent is away cannot decide: answered now, not after the removal's bound.
  const seen = await deps.hostPresence?.of(hostId);
  if (seen?.agent === 'away') throw new OwnershipError('host_unavailable', undefined, { hostId, hostAgent: 'away', hostAgentSeenAgoMs: seen.seenAgoMs });

  // Child sessions hold under the owner's tenure: refused now, naming them, before any release is tried.
  if (found !== null) throwRefusal(checkNoHolds(found.record));

  let released: string | null = null;
  const owned = found !== null && holdsWorktree(factOf(found.record));
  const callerNamesOwner =
    owned && body.executionSessionId !== undefined && body.executionSessionId === found!.record.owner?.executionSessionId && body.epoch !== undefined;
  if (callerNamesOwner && !dryRun) {
    await release(deps, principal, found!.record.ownershipId, {
      executionSessionId: body.executionSessionId!,
      epoch: body.epoch!,
      reason: 'removing the worktree',
    });
    released = found!.record.ownershipId;
    found = await latestOwnershipAt(deps.pool, { hostId, worktreePath });
  }

  const record = found?.record ?? null;
  const live = record !== null && holdsWorktree(factOf(record)) ? await liveOf(deps, { workflowId: found!.workflowId, ownershipId: record.ownershipId }) : null;
  const request: HostRemovalRequest = {
    hostId,
    worktreePath,
    ownership: record === null ? null : factOf(record),
    liveness: live?.liveness.verdict ?? 'unknown',
    // A dry run releases nothing: an owner's dry run is answered as the removal after its release would be.
    // Only the ownership released here: a session that bound the worktree since is someone else's.
    callerIsOwner: (released !== null && record?.ownershipId === released) || (dryRun && callerNamesOwner),
    receipts: (record?.landings ?? []).map((l) => ({ sourceHead: l.sourceHead, landedHead: l.landedHead, landedBranch: l.landedBranch })),
    targets: [...new Set([...(body.targets ?? []), ...(record?.landings ?? []).map((l) => l.landedBranch)])].slice(0, 20),
    dryRun,
    deleteBranch: body.deleteBranch === true,
  };

  const result = await onHost(deps, request);
  if (result.status === 'removed' && record !== null && found !== null) {
    result.record = await recordRemoval(deps, principal, { workflowId: found.workflowId, ownershipId: record.ownershipId }, result);
  }
  const ok = result.status === 'removed' || result.status === 'would_remove';
  return redact(principal, { ok, dryRun, hostId, released, result });
}

/** The service's record of an ownership as the removal rule takes it. */
function factOf(r: { ownershipId: string; state: string; owner: { executionSessionId: string } | null; holds?: readonly Hold[] | undefined }): OwnershipFact {
  const holds = (r.holds ?? []).map((h) => ({ holdId: h.holdId, executionSessionId: h.executionSessionId, runtime: h.runtime }));
  return {
    ownershipId: r.ownershipId,
    state: r.state,
    executionSessionId: r.owner?.executionSessionId ?? null,
    source: 'service',
    ...(holds.length > 0 ? { holds } : {}),
  };
}

/** One removal per worktree at a time (its workflow id); the caller waits for the host's answer, bounded. */
async function onHost(deps: ServiceDeps, request: HostRemovalRequest) {
  const workflowId = removalWorkflowId(request.hostId, request.worktreePath);
  const handle = await withTemporal(deps, async () => {
    try {
      return await deps.temporal.workflow.start<typeof worktreeRemovalWorkflow>('worktreeRemovalWorkflow', {
        workflowId,
        taskQueue: deps.client.taskQueue,
        args: [{ ...request, seal: startSealRequest(Date.now()) }],
        workflowExecutionTimeout: REMOVAL_TIMEOUT_MS + 10_000,
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        workflowIdConflictPolicy: 'FAIL',
        staticSummary: `${request.dryRun ? 'dry run: ' : ''}remove ${request.worktreePath} on ${request.hostId}`,
      });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) throw new OwnershipError('removal_in_progress', undefined, { workflowId });
      throw err;
    }
  });
  try {
    return await withTemporal(deps, () => handle.result(), REMOVAL_TIMEOUT_MS + 5_000);
  } catch (err) {
    throw asRefusal(err, request.hostId) ?? err;
  }
}

/** `worktree_removed` with the receipt, on the ownership's workflow while it runs; durable or accepted, or why not. */
async function recordRemoval(
  deps: ServiceDeps,
  principal: Principal,
  ref: { workflowId: string; ownershipId: string },
  result: RemoveWorktreeResponse['result'],
): Promise<RemovalRecord> {
  const current = await getOwnership(deps.pool, { ownershipId: ref.ownershipId });
  if (current === null) return { status: 'not_sent', detail: 'the ownership is gone' };
  if (current.worktreeRemoved) return { status: 'recorded', detail: ref.ownershipId };
  if (current.state === 'closed' || !isFreeState(current.state)) return { status: 'not_sent', detail: `the ownership is ${current.state}` };
  const receipt = result.receipt === null ? undefined : removedReceipt(result.receipt, result.branch?.status ?? null);
  try {
    const done = await signalAndAwait(
      deps,
      ref.ownershipId,
      (messageId) =>
        deps.client.worktreeRemoved(
          ref,
          { reason: `removed by ${principal.kind} through the service`, ...(receipt ? { receipt } : {}), principal },
          { messageId },
        ),
      async () => ((await getOwnership(deps.pool, { ownershipId: ref.ownershipId }))?.worktreeRemoved === true ? true : null),
    );
    return { status: done ? 'recorded' : 'accepted', detail: ref.ownershipId };
  } catch (err) {
    return { status: 'failed', detail: err instanceof OwnershipError ? err.code : 'unavailable' };
  }
}
