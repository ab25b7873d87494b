import type { Persisted } from '../activities/types';
import type { LivenessView } from '../domain/decide';
import type { OwnershipEvent } from '../domain/events';
import { livenessAfter } from '../domain/liveness';
import type { WorktreeRef } from '../domain/identity';
import type { OwnershipRecord } from '../domain/projection';
import type { OwnershipSettings } from '../domain/settings';
import type { Seal } from '../domain/seal';
import { projectionOf, type LivenessState, type OwnershipView, type ProjectionSync } from './messages';

/**
 * What one run of an ownership workflow knows, in one object the concern modules share: the
 * record and the durable log's position, liveness, the local projection's sync, what it answered,
 * and the run's bookkeeping. Only `carried` crosses continue-as-new; everything else is rebuilt.
 */

/** State carried across continue-as-new: everything the next run needs, nothing it can rebuild. */
export interface CarriedState {
  record: OwnershipRecord;
  /** the last events, each with the message id that caused it: a retried id is answered from them */
  recentEvents: OwnershipEvent[];
  liveness: LivenessState;
  projectionSync: ProjectionSync;
  lastHeartbeatMs: number;
  lastHeartbeatLoggedMs: number;
  /** message ids refused after they were accepted, with the code: a retry in the next run is refused alike */
  refusals: Array<[string, string]>;
  /** the signal ids the previous run remembered, with their seals' expiry, and its floor (seal.ts): a copied signal acts once across runs too */
  signals: { ids: Array<[string, number]>; floorExp: number | null };
  /** when each live child hold was last heard from (absent: runs from before holds, or none) */
  holdHeard?: Array<[string, number]>;
}

export interface OwnershipWorkflowInput {
  ownershipId: string;
  worktree: WorktreeRef;
  settings: OwnershipSettings;
  carried?: CarriedState | null;
  /** sealed by the starting service process, or by the worker's codec for a continue-as-new (seal.ts startRefused) */
  seal?: Seal;
}

export interface RunState {
  readonly ownershipId: string;
  readonly worktree: WorktreeRef;
  readonly settings: OwnershipSettings;
  readonly startedMs: number;
  /** the record as decided: durableRecord plus what is on its way to the log */
  record: OwnershipRecord | null;
  /** the fold of what the log holds */
  durableRecord: OwnershipRecord | null;
  recentEvents: OwnershipEvent[];
  readonly liveness: LivenessState;
  readonly sync: ProjectionSync;
  lastHeartbeatMs: number;
  lastHeartbeatLoggedMs: number;
  /** emitted, not yet handed to the durable log */
  pending: OwnershipEvent[];
  /**
   * events that did not become durable, with what their messages get: a reason code (the log
   * refused them: one live owner per worktree), or LOG_AHEAD (the log held a lost task's events
   * there, which the run adopted: decided again)
   */
  readonly refusedEvents: WeakMap<OwnershipEvent, string>;
  /** what decides a signal's events again when they were dropped for the log's own (durable-log.ts adopt) */
  readonly redo: WeakMap<OwnershipEvent, () => void>;
  /** reads of the log's tail asked for, and done (durable-log.ts readTail) */
  tailWanted: number;
  tailRead: number;
  /** how many times the run adopted the log's events as its own */
  adoptions: number;
  /**
   * A log activity has answered in this worker's copy of the run while it ran live (not replaying):
   * since then, nothing this copy has not seen is in the log. Memory only; it steers validators
   * alone (which leave nothing in history when they refuse), never a command.
   */
  logSeenLive: boolean;
  /** message ids refused after acceptance (act.ts counted), oldest first, bounded */
  readonly refusals: Map<string, string>;
  /** bumped on every change the run loop must look at */
  wake: number;
  updatesThisRun: number;
  /** A claim between its validator and its decision: other sessions are refused meanwhile. */
  claimInFlight: string | null;
  /** what the worktree's own host reported for a foreign host's first bind: its repository root and the branch it confirmed */
  verified: { repoRoot: string; branch: string } | null;
  /** the search attributes last upserted, serialised */
  publishedAttributes: string;
  /** The run is draining to continue as new: new updates are refused (retry shortly) so it can. */
  draining: boolean;
  /** signal ids seen in this run (and carried), each until its seal expires */
  readonly signalIds: Map<string, number>;
  /** a signal whose seal expires no later than this was forgotten to stay bounded: one no younger is refused */
  signalFloorExp: number | null;
  /** the tenure hash the log write computed for the record it made durable, carried to the host agent (which needs no key) */
  tenure: Persisted['tenure'] | null;
  /**
   * When each live child hold was last heard from (its grant, or its child's last heartbeat), by
   * holdId: a hold's own lease runs from it (liveness.ts holdDeadline). Memory only, carried.
   */
  readonly holdHeard: Map<string, number>;
}

export function startRun(input: OwnershipWorkflowInput): RunState {
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
    startedMs: Date.now(),
    record: carried?.record ?? null,
    durableRecord: carried?.record ?? null,
    recentEvents: carried?.recentEvents ?? [],
    liveness,
    sync: carried?.projectionSync ?? { hostId: worktree.hostId, localSeq: 0, durableSeq: 0, error: null },
    lastHeartbeatMs: carried?.lastHeartbeatMs ?? 0,
    lastHeartbeatLoggedMs: carried?.lastHeartbeatLoggedMs ?? 0,
    pending: [],
    refusedEvents: new WeakMap(),
    redo: new WeakMap(),
    tailWanted: 0,
    tailRead: 0,
    adoptions: 0,
    logSeenLive: false,
    refusals: new Map(carried?.refusals ?? []),
    wake: 0,
    updatesThisRun: 0,
    claimInFlight: null,
    verified: null,
    publishedAttributes: '',
    draining: false,
    signalIds: new Map(carried?.signals.ids ?? []),
    signalFloorExp: carried?.signals.floorExp ?? null,
    tenure: null,
    holdHeard: new Map(carried?.holdHeard ?? []),
  };
}

/** What the next run takes: the drain made the record durable, so it is the log's record too. */
export function carry(s: RunState, record: OwnershipRecord): CarriedState {
  return {
    record,
    recentEvents: s.recentEvents,
    liveness: s.liveness,
    projectionSync: s.sync,
    lastHeartbeatMs: s.lastHeartbeatMs,
    lastHeartbeatLoggedMs: s.lastHeartbeatLoggedMs,
    refusals: [...s.refusals],
    signals: { ids: [...s.signalIds].filter(([, e]) => e >= Date.now()), floorExp: s.signalFloorExp },
    // Only when a hold lives: a run without holds carries what it always carried.
    ...(s.holdHeard.size > 0 ? { holdHeard: [...s.holdHeard].filter(([id]) => record.holds?.some((h) => h.holdId === id)) } : {}),
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
