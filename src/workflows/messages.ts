import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  AcceptHandoffInput,
  BindPlanInput,
  CancelHandoffInput,
  ClaimInput,
  ConversationBoundInput,
  HandoffInput,
  HeartbeatInput,
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

/** The `projection` query: the durable record plus what only the live workflow knows. */
export type OwnershipView = OwnershipRecord & { liveness: LivenessState; projectionSync: ProjectionSync };

export const claimUpdate = defineUpdate<OwnershipView, [ClaimInput]>('claim');
export const handoffUpdate = defineUpdate<OwnershipView, [HandoffInput]>('handoff');
export const acceptHandoffUpdate = defineUpdate<OwnershipView, [AcceptHandoffInput]>('acceptHandoff');
export const cancelHandoffUpdate = defineUpdate<OwnershipView, [CancelHandoffInput]>('cancelHandoff');
export const releaseUpdate = defineUpdate<OwnershipView, [ReleaseInput]>('release');
export const reclaimUpdate = defineUpdate<OwnershipView, [ReclaimInput]>('reclaim');
export const submitUpdate = defineUpdate<OwnershipView, [SubmitInput]>('submit');
export const bindPlanUpdate = defineUpdate<OwnershipView, [BindPlanInput]>('bindPlan');
export const renameBranchUpdate = defineUpdate<OwnershipView, [RenameBranchInput]>('renameBranch');

export const heartbeatSignal = defineSignal<[HeartbeatInput]>('heartbeat');
export const landedSignal = defineSignal<[LandedInput]>('landed');
export const worktreeRemovedSignal = defineSignal<[WorktreeRemovedInput]>('worktreeRemoved');
export const conversationBoundSignal = defineSignal<[ConversationBoundInput]>('conversationBound');

export const projectionQuery = defineQuery<OwnershipView | null>('projection');
export const eventsQuery = defineQuery<OwnershipEvent[], [number]>('events');
