import type { EventOf, OwnershipEvent } from '../src/domain/events';

/**
 * Synthetic but valid ownership events (they pass the event schemas and fold with `project`),
 * shaped like what the workflow emits for a bind, a plan change, a release and a worktree removal.
 */
export interface SyntheticIdentity {
  ownershipId: string;
  repoRoot: string;
  worktreePath: string;
  branch: string;
  hostId: string;
  executionSessionId: string;
  workerId: string;
}

function base(id: SyntheticIdentity, seq: number, at: string, principal: string | null) {
  return {
    ownershipId: id.ownershipId,
    seq,
    at,
    actor: { executionSessionId: id.executionSessionId, principal },
    repoRoot: id.repoRoot,
    worktreePath: id.worktreePath,
    branch: id.branch,
    hostId: id.hostId,
  };
}

export function claimed(id: SyntheticIdentity, at: string): EventOf<'ownership.claimed'> {
  return {
    ...base(id, 1, at, `executor:exec-${id.workerId}`),
    type: 'ownership.claimed',
    data: {
      owner: {
        executionSessionId: id.executionSessionId,
        runtime: 'codex-cli',
        parentExecutionSessionId: null,
        conversation: null,
        worker: { runId: `run-${id.workerId}`, workerId: id.workerId },
        process: null,
      },
      epoch: 1,
      via: 'bind',
      handoffId: null,
      previousExecutionSessionId: null,
      lane: 'bench',
      planRef: 'docs/plans/bench.md',
      requestId: null,
    },
  };
}

export function planBound(id: SyntheticIdentity, seq: number, at: string, lane: string): EventOf<'ownership.plan_bound'> {
  return {
    ...base(id, seq, at, `executor:exec-${id.workerId}`),
    type: 'ownership.plan_bound',
    data: { lane, planRef: 'docs/plans/bench.md', requestId: null },
  };
}

export function released(id: SyntheticIdentity, seq: number, at: string): EventOf<'ownership.released'> {
  return {
    ...base(id, seq, at, `executor:exec-${id.workerId}`),
    type: 'ownership.released',
    data: { executionSessionId: id.executionSessionId, epoch: 1, reason: 'done' },
  };
}

export function worktreeRemoved(id: SyntheticIdentity, seq: number, at: string): EventOf<'ownership.worktree_removed'> {
  return {
    ...base(id, seq, at, null),
    actor: { executionSessionId: null, principal: 'admin:bench' },
    type: 'ownership.worktree_removed',
    data: { reason: 'removed' },
  };
}

/** The life of one historical ownership ending in `state`. */
export function lifecycle(id: SyntheticIdentity, state: 'active' | 'released' | 'closed', t1: string, t2: string): OwnershipEvent[] {
  const events: OwnershipEvent[] = [claimed(id, t1)];
  if (state === 'released' || state === 'closed') events.push(released(id, 2, t2));
  if (state === 'closed') events.push(worktreeRemoved(id, 3, t2));
  return events;
}
