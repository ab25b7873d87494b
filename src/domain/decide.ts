import type {
  AcceptHandoffInput,
  BindPlanInput,
  CancelHandoffInput,
  ClaimInput,
  HandoffInput,
  LandedInput,
  ReclaimInput,
  ReleaseInput,
  RenameBranchInput,
  SubmitInput,
  WorktreeRemovedInput,
} from './commands';
import type { EventDraft } from './events';
import type { Conversation, Owner, Principal } from './identity';
import { ownerSummary, type OwnershipRecord } from './projection';
import { refusal, type Refusal } from './reasons';

/**
 * The state machine of ARCHITECTURE §3 as pure decisions: (record, command) -> events or a refusal.
 * Validators call these to refuse before anything enters history; handlers call them again after
 * any await, because state may have moved meanwhile.
 */

export type Decision = { events: EventDraft[] } | Refusal;

/** Liveness as the workflow knows it; not part of the durable record. */
export interface LivenessView {
  status: 'live' | 'silent' | 'stale' | 'unowned';
  verdict: 'alive' | 'dead' | 'unknown' | null;
}

const ENDED = new Set(['landed', 'closed']);

function actor(sessionId: string | null, principal: Principal) {
  return { actorSessionId: sessionId, principal: `${principal.kind}:${principal.id}` };
}

/** An executor principal may act only for its own agent worker. */
function checkPrincipalWorker(principal: Principal, workerId: string | null | undefined): Refusal | null {
  if (principal.kind === 'admin' || principal.kind === 'system') return null;
  if (principal.kind !== 'executor') return refusal('forbidden');
  if (!principal.workerId || principal.workerId !== workerId) return refusal('worker_mismatch');
  return null;
}

function newOwner(input: ClaimInput | AcceptHandoffInput | ReclaimInput, conversation: Conversation | null): Owner {
  return {
    executionSessionId: input.executionSessionId,
    runtime: input.runtime,
    parentExecutionSessionId: input.parentExecutionSessionId ?? null,
    conversation,
    worker: input.worker,
    process: input.process ?? null,
  };
}

/** Owner-only messages: the right session, the current epoch, its own worker, and a live lifecycle. */
export function checkOwner(r: OwnershipRecord | null, sessionId: string, epoch: number, principal: Principal): Refusal | null {
  if (!r) return refusal('not_found');
  if (ENDED.has(r.state)) return refusal('ownership_closed', { state: r.state });
  if (!r.owner || r.owner.executionSessionId !== sessionId) return refusal('not_owner', { owner: ownerSummary(r) });
  if (epoch !== r.epoch) return refusal('stale_epoch', { currentEpoch: r.epoch });
  return checkPrincipalWorker(principal, r.worker?.workerId);
}

/** Bind/claim. Replays by the live owner are idempotent: no events, same record. */
export function decideClaim(r: OwnershipRecord | null, input: ClaimInput, conversation: Conversation | null): Decision {
  const denied = checkPrincipalWorker(input.principal, input.worker.workerId);
  if (denied) return denied;
  const claimed = (epoch: number, via: 'bind' | 'after_release', previous: string | null): Decision => ({
    events: [
      {
        type: 'ownership.claimed',
        ...actor(input.executionSessionId, input.principal),
        data: {
          owner: newOwner(input, conversation),
          epoch,
          via,
          handoffId: null,
          previousExecutionSessionId: previous,
          lane: input.lane ?? null,
          planRef: input.planRef ?? null,
          requestId: input.requestId ?? null,
        },
      },
    ],
  });
  if (!r || r.seq === 0) return claimed(1, 'bind', null);
  if (ENDED.has(r.state)) return refusal('ownership_closed', { state: r.state });
  if (input.branch !== r.branch) return refusal('worktree_mismatch', { branch: r.branch });
  if (r.state === 'released') return claimed(r.epoch + 1, 'after_release', r.owner?.executionSessionId ?? null);
  if (r.owner?.executionSessionId === input.executionSessionId && (r.state === 'active' || r.state === 'handoff_pending' || r.state === 'submitted')) {
    return { events: [] };
  }
  return refusal('worktree_owned', { owner: ownerSummary(r) });
}

export function decideHandoff(r: OwnershipRecord | null, input: HandoffInput, handoffId: string, expiresAt: string): Decision {
  const denied = checkOwner(r, input.executionSessionId, input.epoch, input.principal);
  if (denied) return denied;
  if (r!.state !== 'active') return refusal('invalid_state', { state: r!.state });
  if (input.toExecutionSessionId === input.executionSessionId) return refusal('invalid_input', { field: 'toExecutionSessionId' });
  return {
    events: [
      {
        type: 'ownership.handoff_started',
        ...actor(input.executionSessionId, input.principal),
        data: {
          handoffId,
          fromExecutionSessionId: input.executionSessionId,
          toExecutionSessionId: input.toExecutionSessionId,
          reason: input.reason ?? null,
          expiresAt,
        },
      },
    ],
  };
}

export function decideAcceptHandoff(r: OwnershipRecord | null, input: AcceptHandoffInput, conversation: Conversation | null): Decision {
  const denied = checkPrincipalWorker(input.principal, input.worker.workerId);
  if (denied) return denied;
  if (!r) return refusal('not_found');
  if (r.state === 'active' && r.owner?.executionSessionId === input.executionSessionId && r.lineage.at(-1)?.via === 'handoff') {
    return { events: [] }; // replayed accept
  }
  if (r.state !== 'handoff_pending' || !r.handoff) return refusal('no_pending_handoff');
  if (r.handoff.handoffId !== input.handoffId || r.handoff.toExecutionSessionId !== input.executionSessionId) {
    return refusal('handoff_mismatch');
  }
  return {
    events: [
      {
        type: 'ownership.claimed',
        ...actor(input.executionSessionId, input.principal),
        data: {
          owner: newOwner(input, conversation),
          epoch: r.epoch + 1,
          via: 'handoff',
          handoffId: input.handoffId,
          previousExecutionSessionId: r.owner?.executionSessionId ?? null,
          lane: null,
          planRef: null,
          requestId: null,
        },
      },
    ],
  };
}

export function decideCancelHandoff(r: OwnershipRecord | null, input: CancelHandoffInput): Decision {
  const denied = checkOwner(r, input.executionSessionId, input.epoch, input.principal);
  if (denied) return denied;
  if (r!.state !== 'handoff_pending' || !r!.handoff) return refusal('no_pending_handoff');
  return {
    events: [{ type: 'ownership.handoff_cancelled', ...actor(input.executionSessionId, input.principal), data: { handoffId: r!.handoff.handoffId, reason: 'cancelled' } }],
  };
}

export function decideHandoffTimeout(r: OwnershipRecord, now: string): Decision {
  if (r.state !== 'handoff_pending' || !r.handoff || r.handoff.expiresAt > now) return { events: [] };
  return {
    events: [{ type: 'ownership.handoff_cancelled', actorSessionId: null, principal: 'system:workflow', data: { handoffId: r.handoff.handoffId, reason: 'timeout' } }],
  };
}

export function decideRelease(r: OwnershipRecord | null, input: ReleaseInput): Decision {
  if (r?.state === 'released' && r.owner?.executionSessionId === input.executionSessionId && r.epoch === input.epoch) {
    return { events: [] }; // replayed release
  }
  const denied = checkOwner(r, input.executionSessionId, input.epoch, input.principal);
  if (denied) return denied;
  if (r!.state === 'submitted') return refusal('invalid_state', { state: r!.state });
  return {
    events: [
      { type: 'ownership.released', ...actor(input.executionSessionId, input.principal), data: { executionSessionId: input.executionSessionId, epoch: input.epoch, reason: input.reason ?? null } },
    ],
  };
}

/**
 * Reclaim needs proof of death (state stale) or an admin's explicit force with a reason.
 * A silent owner the authority calls alive, or cannot judge, is never taken without force.
 */
export function checkReclaim(r: OwnershipRecord | null, input: ReclaimInput, liveness: LivenessView): Refusal | null {
  const denied = checkPrincipalWorker(input.principal, input.worker.workerId);
  if (denied) return denied;
  if (!r) return refusal('not_found');
  if (ENDED.has(r.state)) return refusal('ownership_closed', { state: r.state });
  if (r.owner?.executionSessionId === input.executionSessionId) return refusal('invalid_input', { field: 'executionSessionId' });
  if (input.force) {
    if (input.principal.kind !== 'admin') return refusal('force_requires_admin');
    if (!input.reason || input.reason.trim() === '') return refusal('force_requires_reason');
    return null;
  }
  if (r.state === 'stale') return null;
  if (r.state === 'released') return refusal('invalid_state', { state: r.state, hint: 'claim a released worktree' });
  if (liveness.verdict === 'unknown') return refusal('liveness_unknown', { owner: ownerSummary(r) });
  return refusal('owner_alive', { owner: ownerSummary(r), liveness: liveness.status });
}

export function decideReclaim(r: OwnershipRecord | null, input: ReclaimInput, liveness: LivenessView, conversation: Conversation | null): Decision {
  const denied = checkReclaim(r, input, liveness);
  if (denied) return denied;
  const prev = r!.owner ?? null;
  const owner = newOwner(input, conversation);
  return {
    events: [
      {
        type: 'ownership.reclaimed',
        ...actor(input.executionSessionId, input.principal),
        data: {
          previousOwner: prev,
          owner,
          epoch: r!.epoch + 1,
          forced: input.force === true && r!.state !== 'stale',
          reason: input.reason ?? null,
          principal: input.principal,
        },
      },
    ],
  };
}

export function decideSubmit(r: OwnershipRecord | null, input: SubmitInput): Decision {
  if (r?.state === 'submitted' && r.owner?.executionSessionId === input.executionSessionId && r.epoch === input.epoch) return { events: [] };
  const denied = checkOwner(r, input.executionSessionId, input.epoch, input.principal);
  if (denied) return denied;
  if (r!.state !== 'active') return refusal('invalid_state', { state: r!.state });
  return {
    events: [{ type: 'ownership.submitted', ...actor(input.executionSessionId, input.principal), data: { executionSessionId: input.executionSessionId, epoch: input.epoch, head: input.head ?? null } }],
  };
}

export function decideBindPlan(r: OwnershipRecord | null, input: BindPlanInput): Decision {
  const denied = checkOwner(r, input.executionSessionId, input.epoch, input.principal);
  if (denied) return denied;
  const next = { lane: input.lane ?? r!.lane, planRef: input.planRef ?? r!.planRef, requestId: input.requestId ?? r!.requestId };
  if (next.lane === r!.lane && next.planRef === r!.planRef && next.requestId === r!.requestId) return { events: [] };
  return { events: [{ type: 'ownership.plan_bound', ...actor(input.executionSessionId, input.principal), data: next }] };
}

export function decideRenameBranch(r: OwnershipRecord | null, input: RenameBranchInput): Decision {
  if (r && r.branch === input.to && r.branchNames.includes(input.from)) return { events: [] };
  const denied = checkOwner(r, input.executionSessionId, input.epoch, input.principal);
  if (denied) return denied;
  if (r!.branch !== input.from) return refusal('worktree_mismatch', { branch: r!.branch });
  return { events: [{ type: 'ownership.branch_renamed', ...actor(input.executionSessionId, input.principal), data: { from: input.from, to: input.to } }] };
}

/** Landing is idempotent on (ownershipId, landedHead). The receipt names the owner at landing time. */
export function decideLanded(r: OwnershipRecord | null, input: LandedInput): Decision {
  if (!r || r.seq === 0) return refusal('not_found');
  if (input.principal.kind !== 'landing' && input.principal.kind !== 'admin') return refusal('forbidden');
  if (r.landings.some((l) => l.landedHead === input.landedHead)) return { events: [] };
  if (r.state === 'closed') return refusal('ownership_closed', { state: r.state });
  return {
    events: [
      {
        type: 'ownership.landed',
        actorSessionId: null,
        principal: `${input.principal.kind}:${input.principal.id}`,
        data: {
          receipt: {
            ownershipId: r.ownershipId,
            sourceBranch: r.branch,
            sourceHead: input.sourceHead,
            landedBranch: input.landedBranch,
            landedHead: input.landedHead,
            landedAt: input.landedAt,
            worktreePath: r.worktreePath,
            executionSessionId: r.owner?.executionSessionId ?? null,
            worker: r.worker,
            conversation: r.owner?.conversation ?? null,
          },
        },
      },
    ],
  };
}

export function decideWorktreeRemoved(r: OwnershipRecord | null, input: WorktreeRemovedInput): Decision {
  if (!r || r.seq === 0) return refusal('not_found');
  if (r.worktreeRemoved) return { events: [] };
  return { events: [{ type: 'ownership.worktree_removed', actorSessionId: null, principal: `${input.principal.kind}:${input.principal.id}`, data: { reason: input.reason ?? null } }] };
}

export function decideConversationBound(r: OwnershipRecord | null, workerId: string, conversation: Conversation | null): Decision {
  if (!r || !r.owner || !conversation || ENDED.has(r.state)) return { events: [] };
  if (r.worker?.workerId !== workerId) return { events: [] };
  if (r.owner.conversation?.conversationId === conversation.conversationId) return { events: [] };
  // The first binding is immutable (ARCHITECTURE §5): only a missing conversation gets filled.
  if (r.owner.conversation) return { events: [] };
  return {
    events: [
      {
        type: 'ownership.conversation_bound',
        actorSessionId: r.owner.executionSessionId,
        principal: 'system:executor-binding',
        data: { executionSessionId: r.owner.executionSessionId, conversation, worker: r.worker },
      },
    ],
  };
}
