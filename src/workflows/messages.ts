import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  AcceptHandoffInput,
  BindPlanInput,
  CancelHandoffInput,
  ClaimInput,
  ConversationBoundInput,
  EndHoldInput,
  GrantHoldInput,
  HandoffInput,
  HeartbeatInput,
  HoldHeartbeatInput,
  LandedInput,
  ReclaimInput,
  ReleaseInput,
  RenameBranchInput,
  SubmitInput,
  WorktreeRemovedInput,
} from '../domain/commands';
import type { OwnershipEvent } from '../domain/events';
import type { OwnershipRecord } from '../domain/projection';

/** Messages of the ownership workflow, declared once: the client and the workflow both import this. */

export interface LivenessState {
  status: 'live' | 'silent' | 'stale' | 'unowned';
  verdict: 'alive' | 'dead' | 'unknown' | null;
  lastHeartbeatAt: string | null;
  checkedAt: string | null;
  /** the current owner's lease */
  leaseTtlMs: number;
}

export interface ProjectionSync {
  hostId: string;
  /** last seq written into the worktree's local projection */
  localSeq: number;
  /** last seq durable in PostgreSQL */
  durableSeq: number;
  error: string | null;
  /** HEAD and ahead/behind the base branch, as the host agent last saw them (observability only) */
  branch?: { head: string; base: string | null; ahead: number | null; behind: number | null; at: string } | null;
}

/**
 * Whether the worktree's own projection (what its hooks enforce) has caught up with the record:
 * `pending` means the hooks may still let the previous owner through; `failed` that the host
 * refused it (projectionSync.error says why).
 */
export type ProjectionState = 'applied' | 'pending' | 'failed';

/** Whether the worktree's hooks enforce the record at `seq` yet, from the projection's progress. */
export function projectionOf(sync: Pick<ProjectionSync, 'localSeq' | 'error'>, seq: number): ProjectionState {
  if (sync.error) return 'failed';
  return sync.localSeq >= seq ? 'applied' : 'pending';
}

/** The memo key under which the workflow publishes its LiveState. */
export const LIVE_MEMO = 'live';

/** What only the running workflow knows, published as its memo (publish.ts liveLoop): no query needed to read it. */
export interface LiveState {
  ownershipId: string;
  /** the seq of the record the view is of: the durable one */
  seq: number;
  liveness: LivenessState;
  projectionSync: ProjectionSync;
  projection: ProjectionState;
}

/** The `projection` query: the durable record plus what only the live workflow knows. */
export type OwnershipView = OwnershipRecord & { liveness: LivenessState; projectionSync: ProjectionSync; projection: ProjectionState };

export const claimUpdate = defineUpdate<OwnershipView, [ClaimInput]>('claim');
export const handoffUpdate = defineUpdate<OwnershipView, [HandoffInput]>('handoff');
export const acceptHandoffUpdate = defineUpdate<OwnershipView, [AcceptHandoffInput]>('acceptHandoff');
export const cancelHandoffUpdate = defineUpdate<OwnershipView, [CancelHandoffInput]>('cancelHandoff');
export const releaseUpdate = defineUpdate<OwnershipView, [ReleaseInput]>('release');
export const reclaimUpdate = defineUpdate<OwnershipView, [ReclaimInput]>('reclaim');
export const submitUpdate = defineUpdate<OwnershipView, [SubmitInput]>('submit');
export const bindPlanUpdate = defineUpdate<OwnershipView, [BindPlanInput]>('bindPlan');
export const renameBranchUpdate = defineUpdate<OwnershipView, [RenameBranchInput]>('renameBranch');
/** The owner gives a child session a hold under its tenure; the child, the parent or an admin ends it (docs/ownership-record.md#child-holds). */
export const grantHoldUpdate = defineUpdate<OwnershipView, [GrantHoldInput]>('grantHold');
export const endHoldUpdate = defineUpdate<OwnershipView, [EndHoldInput]>('endHold');

export const heartbeatSignal = defineSignal<[HeartbeatInput]>('heartbeat');
/** A child's heartbeat: renews its hold's own lease (RunState.holdHeard), never the parent's. */
export const holdHeartbeatSignal = defineSignal<[HoldHeartbeatInput]>('holdHeartbeat');
export const landedSignal = defineSignal<[LandedInput]>('landed');
export const worktreeRemovedSignal = defineSignal<[WorktreeRemovedInput]>('worktreeRemoved');
export const conversationBoundSignal = defineSignal<[ConversationBoundInput]>('conversationBound');

export const projectionQuery = defineQuery<OwnershipView | null>('projection');
/** No argument: every recent event the workflow holds; a seq: only those after it. */
export const eventsQuery = defineQuery<OwnershipEvent[], [afterSeq?: number]>('events');

/**
 * What each query answers, for a person in the Temporal UI's Queries tab or reading
 * `temporal workflow metadata`. This SDK's defineQuery takes no description, so the handlers pass
 * these to setHandler; a description is not part of the workflow's history.
 */
export const QUERY_DESCRIPTIONS = {
  projection:
    "The ownership now (no argument): the record (owner session, worker, epoch, state, lineage, pending handoff) plus what only the running workflow knows: the owner's liveness and lease, how far the worktree's git projection has caught up, and whether its hooks enforce the current owner.",
  events:
    'The recent events of this ownership, oldest first (ownership.claimed, ownership.handoff_started, ownership.reclaimed, ...). No argument: all the workflow holds; a number: only those after that seq. The complete log, kept after the workflow is gone, is in PostgreSQL (GET /v1/history).',
} as const;
