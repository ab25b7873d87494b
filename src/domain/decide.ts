import type {
  AcceptHandoffInput,
  EndHoldInput,
  GrantHoldInput,
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
import { MAX_HOLDS, type EventDraft, type Hold } from './events';
import { checkNoHolds, endHoldsWithTenure, holdEnded, holdsOf } from './hold';
import type { AgentWorkerRef, Conversation, Owner, Principal } from './identity';
import { ownerSummary, type OwnershipRecord } from './projection';
import { refusal, type Refusal } from './reasons';
import { isEndedState } from './states';

/**
 * The state machine (docs/ownership-record.md, States) as pure decisions: (record, command) -> events or a refusal.
 * Validators call these to refuse before anything enters history; handlers call them again after
 * any await, because state may have moved meanwhile.
 */

export type Decision = { events: EventDraft[] } | Refusal;

/** Liveness as the workflow knows it; not part of the durable record. */
export interface LivenessView {
  status: 'live' | 'silent' | 'stale' | 'unowned';
  verdict: 'alive' | 'dead' | 'unknown' | null;
}

function actor(sessionId: string | null, principal: Principal) {
  return { actorSessionId: sessionId, principal: `${principal.kind}:${principal.id}` };
}

/**
 * An executor principal may act only for its own agent worker, and, when its token is bound to a
 * run, only for that run.
 */
function checkPrincipalWorker(principal: Principal, worker: (Pick<AgentWorkerRef, 'workerId'> & { runId?: string | null }) | null | undefined): Refusal | null {
  if (principal.kind === 'admin' || principal.kind === 'system') return null;
  if (principal.kind !== 'executor') return refusal('forbidden');
  if (!principal.workerId || principal.workerId !== worker?.workerId) return refusal('worker_mismatch');
  if (principal.runId && worker.runId !== undefined && worker.runId !== null && worker.runId !== principal.runId) return refusal('worker_mismatch');
  return null;
}

/** A message that names a lifecycle must reach that lifecycle (see commands.ts `Addressed`). */
function checkAddressed(r: OwnershipRecord | null, input: { ownershipId?: string | undefined }): Refusal | null {
  if (input.ownershipId === undefined) return null;
  if (!r || r.seq === 0) return refusal('not_found');
  return r.ownershipId === input.ownershipId ? null : refusal('ownership_mismatch');
}

/** The worker a pending handoff was offered to: events from before handoffs named one meant the owner's own. */
export function handoffSuccessorWorker(r: OwnershipRecord): string | null {
  return r.handoff?.toWorkerId ?? r.worker?.workerId ?? null;
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
export function checkOwner(r: OwnershipRecord | null, sessionId: string, epoch: number, principal: Principal, ownershipId?: string): Refusal | null {
  if (!r) return refusal('not_found');
  const misaddressed = checkAddressed(r, { ownershipId });
  if (misaddressed) return misaddressed;
  if (isEndedState(r.state)) return refusal('ownership_closed', { state: r.state });
  if (!r.owner || r.owner.executionSessionId !== sessionId) return refusal('not_owner', { owner: ownerSummary(r) });
  if (epoch !== r.epoch) return refusal('stale_epoch', { currentEpoch: r.epoch });
  return checkPrincipalWorker(principal, r.worker);
}

/** Bind/claim. Replays by the live owner are idempotent: no events, same record. */
export function decideClaim(r: OwnershipRecord | null, input: ClaimInput, conversation: Conversation | null): Decision {
  const denied = checkPrincipalWorker(input.principal, input.worker);
  if (denied) return denied;
  if (input.ownershipId !== undefined && r && r.seq > 0 && r.ownershipId !== input.ownershipId) return refusal('ownership_mismatch');
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
  if (isEndedState(r.state)) return refusal('ownership_closed', { state: r.state });
  if (input.branch !== r.branch) return refusal('worktree_mismatch', { branch: r.branch });
  if (r.state === 'released') return claimed(r.epoch + 1, 'after_release', r.owner?.executionSessionId ?? null);
  // A replay is the same session of the same worker: naming the owner's session is not enough.
  if (
    r.owner?.executionSessionId === input.executionSessionId &&
    r.worker?.workerId === input.worker.workerId &&
    (r.state === 'active' || r.state === 'handoff_pending' || r.state === 'submitted')
  ) {
    return { events: [] };
  }
  return refusal('worktree_owned', { owner: ownerSummary(r) });
}

export function decideHandoff(r: OwnershipRecord | null, input: HandoffInput, handoffId: string, expiresAt: string): Decision {
  const denied = checkOwner(r, input.executionSessionId, input.epoch, input.principal, input.ownershipId);
  if (denied) return denied;
  // A retry of the handoff that is pending (its first answer lost in doubt) is answered, not refused.
  const h = r!.handoff;
  if (r!.state === 'handoff_pending' && h && h.toExecutionSessionId === input.toExecutionSessionId && (h.toWorkerId ?? null) === (input.toWorkerId ?? null))
    return { events: [] };
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
          toWorkerId: input.toWorkerId,
          reason: input.reason ?? null,
          expiresAt,
        },
      },
    ],
  };
}

export function decideAcceptHandoff(r: OwnershipRecord | null, input: AcceptHandoffInput, conversation: Conversation | null): Decision {
  const denied = checkPrincipalWorker(input.principal, input.worker) ?? checkAddressed(r, input);
  if (denied) return denied;
  if (!r) return refusal('not_found');
  const tenure = r.lineage.at(-1);
  if (
    r.state === 'active' &&
    r.owner?.executionSessionId === input.executionSessionId &&
    r.worker?.workerId === input.worker.workerId &&
    tenure?.via === 'handoff' &&
    tenure.epoch === r.epoch &&
    (tenure.handoffId === undefined || tenure.handoffId === input.handoffId)
  ) {
    return { events: [] }; // replayed accept of the same handoff, by the session AND the worker that accepted
  }
  if (r.state !== 'handoff_pending' || !r.handoff) return refusal('no_pending_handoff');
  if (r.handoff.handoffId !== input.handoffId || r.handoff.toExecutionSessionId !== input.executionSessionId) {
    return refusal('handoff_mismatch');
  }
  // The offer names a worker: another worker's executor naming the successor's session is refused.
  if (handoffSuccessorWorker(r) !== input.worker.workerId) return refusal('handoff_mismatch');
  return {
    events: [
      // The children held under the tenure that is handed off: the successor grants its own.
      ...endHoldsWithTenure(r),
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
  const denied = checkOwner(r, input.executionSessionId, input.epoch, input.principal, input.ownershipId);
  if (denied) return denied;
  if (r!.state !== 'handoff_pending' || !r!.handoff) return refusal('no_pending_handoff');
  return {
    events: [
      {
        type: 'ownership.handoff_cancelled',
        ...actor(input.executionSessionId, input.principal),
        data: { handoffId: r!.handoff.handoffId, reason: 'cancelled' },
      },
    ],
  };
}

export function decideHandoffTimeout(r: OwnershipRecord, now: string): Decision {
  if (r.state !== 'handoff_pending' || !r.handoff || r.handoff.expiresAt > now) return { events: [] };
  return {
    events: [
      { type: 'ownership.handoff_cancelled', actorSessionId: null, principal: 'system:workflow', data: { handoffId: r.handoff.handoffId, reason: 'timeout' } },
    ],
  };
}

export function decideRelease(r: OwnershipRecord | null, input: ReleaseInput): Decision {
  if (
    r?.state === 'released' &&
    r.owner?.executionSessionId === input.executionSessionId &&
    r.epoch === input.epoch &&
    !checkAddressed(r, input) &&
    !checkPrincipalWorker(input.principal, r.worker)
  ) {
    return { events: [] }; // replayed release, by the owner's own worker
  }
  const denied = checkOwner(r, input.executionSessionId, input.epoch, input.principal, input.ownershipId) ?? checkNoHolds(r);
  if (denied) return denied;
  if (r!.state === 'submitted') return refusal('invalid_state', { state: r!.state });
  return {
    events: [
      {
        type: 'ownership.released',
        ...actor(input.executionSessionId, input.principal),
        data: { executionSessionId: input.executionSessionId, epoch: input.epoch, reason: input.reason ?? null },
      },
    ],
  };
}

/**
 * Reclaim needs proof of death (state stale) or an admin's explicit force with a reason.
 * A silent owner the authority calls alive, or cannot judge, is never taken without force.
 */
/** The caller's reclaim is the last owner change of an active record, by the same session and worker. */
export function isReclaimReplay(r: OwnershipRecord | null, input: ReclaimInput): boolean {
  const tenure = r?.lineage.at(-1);
  return (
    r?.state === 'active' &&
    r.owner?.executionSessionId === input.executionSessionId &&
    r.worker?.workerId === input.worker.workerId &&
    tenure?.epoch === r.epoch &&
    (tenure.via === 'reclaim' || tenure.via === 'forced_reclaim')
  );
}

/** A forced reclaim is an admin's, with a reason, whatever the record says: a request without them is refused even as a replay. */
export function checkForce(input: ReclaimInput): Refusal | null {
  if (!input.force) return null;
  if (input.principal.kind !== 'admin') return refusal('force_requires_admin');
  if (!input.reason || input.reason.trim() === '') return refusal('force_requires_reason');
  return null;
}

export function checkReclaim(r: OwnershipRecord | null, input: ReclaimInput, liveness: LivenessView): Refusal | null {
  const denied = checkPrincipalWorker(input.principal, input.worker) ?? checkAddressed(r, input);
  if (denied) return denied;
  if (!r) return refusal('not_found');
  if (isEndedState(r.state)) return refusal('ownership_closed', { state: r.state });
  const improper = checkForce(input);
  if (improper) return improper;
  if (r.owner?.executionSessionId === input.executionSessionId) return refusal('invalid_input', { field: 'executionSessionId' });
  if (input.force) return null;
  // A dead owner's children may be alive: the worktree is theirs to finish or let go of first.
  const held = checkNoHolds(r);
  if (held) return held;
  if (r.state === 'stale') return null;
  if (r.state === 'released') return refusal('invalid_state', { state: r.state, hint: 'claim a released worktree' });
  // Silent past its lease and not (yet) proven alive: nobody can say it is alive, so the refusal
  // says liveness is unknown (an owner on a host that is cut off stays so until the host is back).
  if (liveness.verdict === 'unknown' || (liveness.status === 'silent' && liveness.verdict === null))
    return refusal('liveness_unknown', { owner: ownerSummary(r), liveness: liveness.status });
  return refusal('owner_alive', { owner: ownerSummary(r), liveness: liveness.status });
}

export function decideReclaim(r: OwnershipRecord | null, input: ReclaimInput, liveness: LivenessView, conversation: Conversation | null): Decision {
  // A retry of a reclaim that took effect (its first answer lost in doubt): the caller owns it now.
  if (!checkPrincipalWorker(input.principal, input.worker) && !checkAddressed(r, input) && !checkForce(input) && isReclaimReplay(r, input))
    return { events: [] };
  const denied = checkReclaim(r, input, liveness);
  if (denied) return denied;
  const prev = r!.owner ?? null;
  const owner = newOwner(input, conversation);
  return {
    events: [
      ...endHoldsWithTenure(r),
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
  if (
    r?.state === 'submitted' &&
    r.owner?.executionSessionId === input.executionSessionId &&
    r.epoch === input.epoch &&
    !checkAddressed(r, input) &&
    !checkPrincipalWorker(input.principal, r.worker)
  ) {
    return { events: [] };
  }
  const denied = checkOwner(r, input.executionSessionId, input.epoch, input.principal, input.ownershipId);
  if (denied) return denied;
  if (r!.state !== 'active') return refusal('invalid_state', { state: r!.state });
  return {
    events: [
      {
        type: 'ownership.submitted',
        ...actor(input.executionSessionId, input.principal),
        data: { executionSessionId: input.executionSessionId, epoch: input.epoch, head: input.head ?? null },
      },
    ],
  };
}

export function decideBindPlan(r: OwnershipRecord | null, input: BindPlanInput): Decision {
  const denied = checkOwner(r, input.executionSessionId, input.epoch, input.principal, input.ownershipId);
  if (denied) return denied;
  const next = { lane: input.lane ?? r!.lane, planRef: input.planRef ?? r!.planRef, requestId: input.requestId ?? r!.requestId };
  if (next.lane === r!.lane && next.planRef === r!.planRef && next.requestId === r!.requestId) return { events: [] };
  return { events: [{ type: 'ownership.plan_bound', ...actor(input.executionSessionId, input.principal), data: next }] };
}

export function decideRenameBranch(r: OwnershipRecord | null, input: RenameBranchInput): Decision {
  if (
    r &&
    r.branch === input.to &&
    r.branchNames.includes(input.from) &&
    !checkOwner(r, input.executionSessionId, input.epoch, input.principal, input.ownershipId)
  ) {
    return { events: [] };
  }
  const denied = checkOwner(r, input.executionSessionId, input.epoch, input.principal, input.ownershipId);
  if (denied) return denied;
  if (r!.branch !== input.from) return refusal('worktree_mismatch', { branch: r!.branch });
  return { events: [{ type: 'ownership.branch_renamed', ...actor(input.executionSessionId, input.principal), data: { from: input.from, to: input.to } }] };
}

/** Landing is idempotent on (ownershipId, landedHead). The receipt names the owner at landing time. */
export function decideLanded(r: OwnershipRecord | null, input: LandedInput): Decision {
  if (!r || r.seq === 0) return refusal('not_found');
  if (input.principal.kind !== 'landing' && input.principal.kind !== 'admin') return refusal('forbidden');
  const misaddressed = checkAddressed(r, input);
  if (misaddressed) return misaddressed;
  if (r.landings.some((l) => l.landedHead === input.landedHead)) return { events: [] };
  if (r.state === 'closed') return refusal('ownership_closed', { state: r.state });
  return {
    events: [
      ...endHoldsWithTenure(r),
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
  const misaddressed = checkAddressed(r, input);
  if (misaddressed) return misaddressed;
  if (r.worktreeRemoved) return { events: [] };
  return {
    events: [
      {
        type: 'ownership.worktree_removed',
        actorSessionId: null,
        principal: `${input.principal.kind}:${input.principal.id}`,
        // The receipt only when there is one: a told removal's event is what it always was.
        data: {
          reason: input.reason ?? null,
          ...(input.receipt !== undefined ? { receipt: input.receipt } : {}),
          ...(input.forced ? { forced: true as const } : {}),
        },
      },
    ],
  };
}

/**
 * The binding is the home of the owner's conversation (src/domain/attributes.ts); the record's copy
 * follows it here. A missing conversation is filled. The identity never moves (docs/identities.md: a
 * different conversation is not taken), but a newer title of the same conversation is display-only
 * and is recorded, so `who` shows it (`refreshTitle`; false for histories from before it).
 */
export function decideConversationBound(
  r: OwnershipRecord | null,
  workerId: string,
  conversation: Conversation | null,
  opts: { refreshTitle?: boolean } = {},
): Decision {
  if (!r || !r.owner || !conversation || isEndedState(r.state)) return { events: [] };
  if (r.worker?.workerId !== workerId) return { events: [] };
  const held = r.owner.conversation;
  if (held && !(opts.refreshTitle !== false && refreshesTitle(r, conversation))) return { events: [] };
  const bound: Conversation = held ? { ...held, title: conversation.title } : conversation;
  return {
    events: [
      {
        type: 'ownership.conversation_bound',
        actorSessionId: r.owner.executionSessionId,
        principal: 'system:executor-binding',
        data: { executionSessionId: r.owner.executionSessionId, conversation: bound, worker: r.worker },
      },
    ],
  };
}

/** The binding holds a newer title of the conversation the owner already has (the workflow gates this for old histories). */
export function refreshesTitle(r: OwnershipRecord | null, conversation: Conversation | null): boolean {
  const held = r?.owner?.conversation;
  return !!held && !!conversation?.title && held.conversationId === conversation.conversationId && held.title !== conversation.title;
}

export function decideGrantHold(r: OwnershipRecord | null, input: GrantHoldInput, now: string, defaultLeaseTtlMs: number): Decision {
  const denied = checkOwner(r, input.executionSessionId, input.epoch, input.principal, input.ownershipId);
  if (denied) return denied;
  const record = r!;
  const same = holdsOf(record).find((h) => h.holdId === input.holdId);
  if (same !== undefined) {
    // The same grant again (an answer lost in doubt): granted, nothing new. Another child under that id is a mistake.
    return same.executionSessionId === input.childExecutionSessionId ? { events: [] } : refusal('invalid_input', { field: 'holdId' });
  }
  if (record.state !== 'active') return refusal('invalid_state', { state: record.state });
  if (input.childExecutionSessionId === input.executionSessionId) return refusal('invalid_input', { field: 'childExecutionSessionId' });
  if (holdsOf(record).some((h) => h.executionSessionId === input.childExecutionSessionId))
    return refusal('invalid_input', { field: 'childExecutionSessionId', hint: 'this session already holds' });
  if (holdsOf(record).length >= MAX_HOLDS) return refusal('holds_exhausted', { max: MAX_HOLDS });
  const hold: Hold = {
    holdId: input.holdId,
    executionSessionId: input.childExecutionSessionId,
    parentExecutionSessionId: input.executionSessionId,
    epoch: record.epoch,
    grantedAt: now,
    leaseTtlMs: input.leaseTtlMs ?? defaultLeaseTtlMs,
    runtime: input.runtime ?? null,
  };
  return {
    events: [
      { type: 'ownership.hold_granted', actorSessionId: input.executionSessionId, principal: `${input.principal.kind}:${input.principal.id}`, data: { hold } },
    ],
  };
}

export function decideEndHold(r: OwnershipRecord | null, input: EndHoldInput): Decision {
  if (!r) return refusal('not_found');
  const hold = holdsOf(r).find((h) => h.holdId === input.holdId);
  if (hold === undefined) return refusal('not_found', { holdId: input.holdId });
  const principal = `${input.principal.kind}:${input.principal.id}`;
  if (input.force === true) {
    if (input.principal.kind !== 'admin') return refusal('force_requires_admin');
    if (!input.reason?.trim()) return refusal('force_requires_reason');
    return { events: [holdEnded(hold, 'forced', input.reason, input.executionSessionId, principal)] };
  }
  const byChild = input.executionSessionId === hold.executionSessionId;
  if (byChild) {
    if (input.epoch !== hold.epoch) return refusal('stale_epoch', { currentEpoch: hold.epoch });
  } else {
    const denied = checkOwner(r, input.executionSessionId, input.epoch, input.principal, input.ownershipId);
    if (denied) return denied;
  }
  return { events: [holdEnded(hold, 'released', input.reason ?? null, input.executionSessionId, principal)] };
}
