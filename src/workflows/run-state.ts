import type { LivenessView } from '../domain/decide';
import type { OwnershipEvent } from '../domain/events';
import { livenessAfter } from '../domain/liveness';
import type { WorktreeRef } from '../domain/identity';
import type { OwnershipRecord } from '../domain/projection';
import type { OwnershipSettings } from '../domain/settings';
import type { Seal } from '../domain/seal';
import type { SealRules } from './seal';
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
  /** the signal ids the previous run remembered, with their seals' expiry, and its floor (seal.ts): a copied signal acts once across runs too */
  signals?: { ids: Array<[string, number]>; floorExp: number | null };
}

export interface OwnershipWorkflowInput {
  ownershipId: string;
  worktree: WorktreeRef;
  settings: OwnershipSettings;
  carried?: CarriedState | null;
  /**
   * 'durable': the live memo is published only while the log holds the whole record (publish.ts
   * liveLoop), one memo change per message instead of two. Absent in runs started before it
   * (docs/workflow-versioning.md, changes keyed on what a message carries): those publish on every
   * change, as their histories hold.
   */
  liveMemo?: 'durable';
  /** sealed by the starting service process, or by the worker's codec for a continue-as-new (seal.ts startRefused) */
  seal?: Seal;
}

export interface RunState {
  readonly ownershipId: string;
  readonly worktree: WorktreeRef;
  readonly settings: OwnershipSettings;
  /** the live memo follows the durable record only (OwnershipWorkflowInput.liveMemo) */
  readonly liveMemoDurable: boolean;
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
  /** the branch the host confirmed for the claim it verified: another claim's branch is verified again */
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
   * The log may be ahead of this run: a workflow task that wrote its events to PostgreSQL was never
   * recorded by Temporal (a server crash), so the log names an owner this run never heard of. The
   * durable-log loop reads the log's tail and adopts it.
   */
  resync: { wanted: boolean; checkedEpoch: number; reads: number };
  /** a first claim never came: whether the log was asked before the run gives up */
  abandonChecked: boolean;
  /** Messages the log settled as refused before their events were written (the API refused or gave up on them): id -> reason code. */
  readonly refusedMessages: Map<string, string>;
  /** Messages the log holds as applied at a seq this run may not have among its recent events. */
  readonly appliedMessages: Set<string>;
  /** the seal rules of this run (seal.ts sealRulesOfRun) */
  readonly sealRules: SealRules;
  /** signal ids seen in this run (and carried), each until its seal expires */
  readonly signalIds: Map<string, number>;
  /** a signal whose seal expires no later than this was forgotten to stay bounded: one no younger is refused */
  signalFloorExp: number | null;
}

export function startRun(input: OwnershipWorkflowInput, sealRules: SealRules): RunState {
  const { settings, worktree } = input;
  const carried = input.carried ?? null;
  const liveness: LivenessState = carried?.liveness ?? {
    status: 'unowned',
    verdict: null,
    lastHeartbeatAt: null,
    checkedAt: null,
    leaseTtlMs: settings.leaseTtlMs,
  };
  liveness.leaseTtlMs ??= settings.leaseTtlMs;
  return {
    ownershipId: input.ownershipId,
    worktree,
    settings,
    liveMemoDurable: input.liveMemo === 'durable',
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
    abandonChecked: false,
    refusedMessages: new Map(),
    appliedMessages: new Set(),
    sealRules,
    signalIds: new Map(carried?.signals?.ids ?? []),
    signalFloorExp: carried?.signals?.floorExp ?? null,
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
    ...(s.sealRules === 'v2' ? { signals: { ids: [...s.signalIds].filter(([, e]) => e >= Date.now()), floorExp: s.signalFloorExp } } : {}),
  };
}

export const now = (): string => new Date(Date.now()).toISOString();

/** Whether the log holds the whole record: nothing emitted here that PostgreSQL does not hold yet. */
export const drainedToLog = (s: RunState): boolean => s.pending.length === 0 && s.sync.durableSeq >= (s.record?.seq ?? 0);

export const livenessView = (s: RunState): LivenessView => ({ status: s.liveness.status, verdict: s.liveness.verdict });

/**
 * The view the run gives out: of the record the log holds (durable), never of events still on
 * their way to it; `r` for a view of another record (a decision as it was taken).
 */
export function view(s: RunState, r: OwnershipRecord | null = s.durableRecord): OwnershipView | null {
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
