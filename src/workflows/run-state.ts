import { patched } from '@temporalio/workflow';
import type { LivenessView } from '../domain/decide';
import type { OwnershipEvent } from '../domain/events';
import { livenessAfter } from '../domain/liveness';
import type { WorktreeRef } from '../domain/identity';
import type { OwnershipRecord } from '../domain/projection';
import type { OwnershipSettings } from '../domain/settings';
import { projectionOf, type LivenessState, type OwnershipView, type ProjectionSync } from './messages';

/**
 * What one run of an ownership workflow knows, in one object the concern modules share: the
 * record and the durable log's position, liveness, the local projection's sync, and the run's
 * bookkeeping. Only `carried` crosses continue-as-new; everything else is rebuilt.
 */

/** State carried across continue-as-new: everything the next run needs, nothing it can rebuild. */
export interface CarriedState {
  record: OwnershipRecord;
  /** The fold of the events PostgreSQL holds: what `record` is rebuilt on if the log overrides us. */
  durableRecord: OwnershipRecord | null;
  recentEvents: OwnershipEvent[];
  liveness: LivenessState;
  projectionSync: ProjectionSync;
  lastHeartbeatMs: number;
  lastHeartbeatLoggedMs: number;
}

export interface OwnershipWorkflowInput {
  ownershipId: string;
  worktree: WorktreeRef;
  settings: OwnershipSettings;
  carried?: CarriedState | null;
}

/**
 * Every behaviour change since the first release, behind one patch per release: a run started by
 * this code records one marker (each patch costs a marker and a search-attribute upsert per run),
 * and a history from before it asks each change's own patch, exactly as it was recorded.
 */
export interface Patches {
  /** changes up to ownership-v3 */
  since(patch: string): boolean;
  /** changes since ownership-v3 (v4 fixtures and earlier replay without them) */
  sinceV4(patch: string): boolean;
  /** changes since ownership-v4 (v5 fixtures and earlier replay without them) */
  sinceV5(patch: string): boolean;
  /** changes since ownership-v5 (v6 fixtures and earlier replay without them) */
  sinceV6(patch: string): boolean;
  /** changes since ownership-v6 (v7 fixtures and earlier replay without them) */
  sinceV7(patch: string): boolean;
  /** changes since ownership-v7 (v10 fixtures and earlier replay without them) */
  sinceV8(patch: string): boolean;
  /** changes since ownership-v8 (v10 fixtures and earlier replay without them) */
  sinceV9(patch: string): boolean;
}

/** Called first in a run, so the markers lead its history as they always have. */
export function openPatches(): Patches {
  const v9 = patched('ownership-v9');
  const v8 = v9 || patched('ownership-v8');
  const v7 = v8 || patched('ownership-v7');
  const v6 = v7 || patched('ownership-v6');
  const v5 = v6 || patched('ownership-v5');
  const v4 = v5 || patched('ownership-v4');
  const v3 = v4 || patched('ownership-v3');
  return { since: (p) => v3 || patched(p), sinceV4: (p) => v4 || patched(p), sinceV5: (p) => v5 || patched(p), sinceV6: (p) => v6 || patched(p), sinceV7: (p) => v7 || patched(p), sinceV8: (p) => v8 || patched(p), sinceV9: (p) => v9 || patched(p) };
}

export interface RunState {
  readonly ownershipId: string;
  readonly worktree: WorktreeRef;
  readonly settings: OwnershipSettings;
  readonly patches: Patches;
  readonly startedMs: number;
  record: OwnershipRecord | null;
  durableRecord: OwnershipRecord | null;
  recentEvents: OwnershipEvent[];
  readonly liveness: LivenessState;
  readonly sync: ProjectionSync;
  lastHeartbeatMs: number;
  lastHeartbeatLoggedMs: number;
  /** emitted, not yet handed to the durable log */
  pending: OwnershipEvent[];
  /** bumped on every change the run loop must look at */
  wake: number;
  updatesThisRun: number;
  /** A claim between its validator and its decision: other sessions are refused meanwhile. */
  claimInFlight: string | null;
  /** the repository root the worktree's own host reported (a foreign host's first bind) */
  verifiedRepoRoot: string | null;
  verifiedOnHost: boolean;
  /** the branch the host confirmed for the claim it verified (branch-on-host-v1) */
  verifiedBranch: string | null;
  /** Events the log overrode (see adoption.ts): the handlers that emitted them decide again. */
  readonly lost: Set<OwnershipEvent>;
  /** How a signal's message is decided again when its event was overridden. */
  readonly redoOf: Map<OwnershipEvent, () => void>;
  /** the search attributes last upserted, serialised */
  publishedAttributes: string;
  /** The run is draining to continue as new: new updates are refused (retry shortly) so it can. */
  draining: boolean;
  /**
   * The log may be ahead of this run (log-resync-v1): a workflow task that wrote its events to
   * PostgreSQL was never recorded by Temporal (a server crash), so the log names an owner this
   * run never heard of. The durable-log loop reads the log's tail and adopts it.
   */
  resync: { wanted: boolean; checkedEpoch: number; reads: number };
  /** log-resync-v1 is in this run's history (or being written now) */
  readonly logResync: boolean;
  /** a first claim never came: whether the log was asked before the run gives up (log-resync-v1) */
  abandonChecked: boolean;
  /**
   * Owner and state changes are projected by a local activity when this run's worker is on the
   * worktree's host (projection-here-v1); false once it said it is not, for the rest of the run.
   */
  projectHere: boolean;
  /** the highest seq an owner-changing update waits to see written here before it answers */
  hereFor: number;
  /**
   * A submit and a landing are projected here too, not only owner changes (projection-here-states-v1):
   * a marker instead of an activity task and the workflow task for its result.
   */
  readonly projectStatesHere: boolean;
  /** projections running here as local activities: no update completes while one runs (see counted) */
  hereInFlight: number;
  /** OwnershipSessions, every session of the lineage, is published (lineage-sessions-attribute-v1) */
  readonly lineageAttribute: boolean;
  /** at a lease's end, the heartbeat the API recorded is read first (heartbeats-from-store-v1) */
  readonly heartbeatsInStore: boolean;
  /**
   * Updates carry their message id into their events, and are answered from the log's event
   * bearing it (message-ids-v1): see fromLog in act.ts.
   */
  readonly messageIds: boolean;
  /** Messages the log settled as refused before their events were written (the API refused or gave up on them): id -> reason code. */
  readonly refusedMessages: Map<string, string>;
  /** Messages the log holds as applied at a seq this run may not have among its recent events. */
  readonly appliedMessages: Set<string>;
  /**
   * The log is written, and every store read made, by ordinary activities, never local ones
   * (log-by-activity-v1; see storeOf in activities.ts). Nothing is projected here then: the host
   * agent writes every projection.
   */
  readonly logByActivity: boolean;
  /**
   * Signals count only with a valid service seal (sealed-signals-v1; updates are checked by their
   * validators, which never run on replay, so they need no patch): see seal.ts.
   */
  readonly sealedSignals: boolean;
}

export function startRun(input: OwnershipWorkflowInput, patches: Patches): RunState {
  const { settings, worktree } = input;
  const carried = input.carried ?? null;
  const liveness: LivenessState = carried?.liveness ?? { status: 'unowned', verdict: null, lastHeartbeatAt: null, checkedAt: null, leaseTtlMs: settings.leaseTtlMs };
  liveness.leaseTtlMs ??= settings.leaseTtlMs;
  return {
    ownershipId: input.ownershipId,
    worktree,
    settings,
    patches,
    startedMs: Date.now(),
    record: carried?.record ?? null,
    durableRecord: carried?.durableRecord ?? carried?.record ?? null,
    recentEvents: carried?.recentEvents ?? [],
    liveness,
    sync: carried?.projectionSync ?? { hostId: worktree.hostId, localSeq: 0, durableSeq: 0, error: null },
    lastHeartbeatMs: carried?.lastHeartbeatMs ?? 0,
    lastHeartbeatLoggedMs: carried?.lastHeartbeatLoggedMs ?? 0,
    pending: [],
    wake: 0,
    updatesThisRun: 0,
    claimInFlight: null,
    verifiedRepoRoot: null,
    verifiedOnHost: false,
    verifiedBranch: null,
    lost: new Set(),
    redoOf: new Map(),
    publishedAttributes: '',
    draining: false,
    resync: { wanted: false, checkedEpoch: -1, reads: 0 },
    logResync: patches.sinceV5('log-resync-v1'),
    abandonChecked: false,
    projectHere: patches.sinceV6('projection-here-v1') && !patches.sinceV8('log-by-activity-v1'),
    hereFor: 0,
    projectStatesHere: patches.sinceV7('projection-here-states-v1'),
    hereInFlight: 0,
    lineageAttribute: patches.sinceV6('lineage-sessions-attribute-v1'),
    heartbeatsInStore: patches.sinceV6('heartbeats-from-store-v1'),
    messageIds: patches.sinceV8('message-ids-v1'),
    refusedMessages: new Map(),
    appliedMessages: new Set(),
    logByActivity: patches.sinceV8('log-by-activity-v1'),
    sealedSignals: patches.sinceV9('sealed-signals-v1'),
  };
}

export function carry(s: RunState, record: OwnershipRecord): CarriedState {
  return {
    record,
    durableRecord: s.durableRecord,
    recentEvents: s.recentEvents,
    liveness: s.liveness,
    projectionSync: s.sync,
    lastHeartbeatMs: s.lastHeartbeatMs,
    lastHeartbeatLoggedMs: s.lastHeartbeatLoggedMs,
  };
}

export const now = (): string => new Date(Date.now()).toISOString();

export const livenessView = (s: RunState): LivenessView => ({ status: s.liveness.status, verdict: s.liveness.verdict });

/**
 * The view the run gives out: since message-ids-v1, of the record the log holds (durable), never of
 * events still on their way to it; `r` for a view of another record (a decision as it was taken).
 */
export function view(s: RunState, r: OwnershipRecord | null = s.messageIds ? s.durableRecord : s.record): OwnershipView | null {
  return r ? { ...r, liveness: { ...s.liveness }, projectionSync: { ...s.sync }, projection: projectionOf(s.sync, r.seq) } : null;
}

/** Liveness follows every event the record takes (src/domain/liveness.ts livenessAfter). */
export function followOwnerChange(s: RunState, e: OwnershipEvent): void {
  const move = livenessAfter(e, s.record);
  if (!move) return;
  if (move.heardAt !== undefined) {
    s.lastHeartbeatMs = Date.now();
    s.lastHeartbeatLoggedMs = Date.now();
    s.liveness.lastHeartbeatAt = move.heardAt;
  }
  s.liveness.status = move.status;
  s.liveness.verdict = move.verdict;
}
