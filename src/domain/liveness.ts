import type { HeartbeatInput } from './commands';
import type { EventDraft, OwnershipEvent } from './events';
import type { OwnershipRecord } from './projection';
import { isFreeState } from './states';

/**
 * The liveness rules of the ownership workflow as pure decisions: which heartbeat counts and when
 * it is logged, and when a verdict of the liveness authority marks an owner stale. The workflow
 * (src/workflows/liveness.ts) feeds them its clock and state; the model test drives the same ones.
 * Pure and stateless: preloaded into the workflow sandbox.
 */

export type LivenessStatus = 'live' | 'silent' | 'stale' | 'unowned';
export type Verdict = 'alive' | 'dead' | 'unknown';

/** A tenure: the owner's session at an epoch. */
export interface Tenure {
  executionSessionId: string;
  epoch: number;
}

/** Whether the record's current tenure is still `t` (a verdict or heartbeat about another tenure judges nothing). */
export function sameTenure(r: OwnershipRecord | null, t: Tenure): boolean {
  return r?.owner?.executionSessionId === t.executionSessionId && r.epoch === t.epoch;
}

export interface HeartbeatClock {
  /** liveness as the workflow knows it when the heartbeat arrives */
  status: LivenessStatus;
  nowMs: number;
  /** when a heartbeat event was last logged */
  lastLoggedMs: number;
  logIntervalMs: number;
}

export type HeartbeatDecision = { accepted: false } | { accepted: true; event: EventDraft | null };

/**
 * A heartbeat counts only for this lifecycle (when it names one), from its current owner at the
 * current epoch, while the worktree is held. One after silence or on a stale record revives the
 * owner and is logged at once; others are logged at most once per interval (periodic).
 */
export function decideHeartbeat(r: OwnershipRecord | null, ownershipId: string, hb: HeartbeatInput, clock: HeartbeatClock): HeartbeatDecision {
  if (!r || !r.owner) return { accepted: false };
  if (hb.ownershipId !== undefined && hb.ownershipId !== ownershipId) return { accepted: false };
  if (!sameTenure(r, hb) || isFreeState(r.state)) return { accepted: false };
  const revived = clock.status !== 'live' || r.state === 'stale';
  if (!revived && clock.nowMs - clock.lastLoggedMs < clock.logIntervalMs) return { accepted: true, event: null };
  return {
    accepted: true,
    event: {
      type: 'ownership.heartbeat',
      actorSessionId: hb.executionSessionId,
      principal: null,
      data: { executionSessionId: hb.executionSessionId, epoch: hb.epoch, transition: revived ? 'revived' : 'periodic' },
    },
  };
}

/**
 * A dead verdict marks the owner stale only while the tenure asked about is still the current one
 * and still active (a heartbeat that arrived while the authority was asked is the workflow's to
 * weigh first: it wins).
 */
export function decideStale(r: OwnershipRecord | null, asked: Tenure, verdict: Verdict, detail: string | null): EventDraft[] {
  if (!sameTenure(r, asked) || verdict !== 'dead' || r!.state !== 'active') return [];
  return [
    {
      type: 'ownership.stale',
      actorSessionId: null,
      principal: 'system:liveness',
      data: { executionSessionId: asked.executionSessionId, epoch: asked.epoch, verdict: 'dead', detail },
    },
  ];
}

export interface LivenessMove {
  status: LivenessStatus;
  verdict: Verdict | null;
  /** the owner was heard from at this instant: its lease starts again */
  heardAt?: string;
}

/**
 * How an event moves the workflow's view of liveness: a new owner, or one revived, is live and was
 * just heard from; a stale verdict is dead; a lifecycle that no longer holds the worktree has
 * nobody to be live. `r` is the record with the event applied.
 */
export function livenessAfter(e: OwnershipEvent, r: OwnershipRecord | null): LivenessMove | null {
  if (e.type === 'ownership.claimed' || e.type === 'ownership.reclaimed' || (e.type === 'ownership.heartbeat' && e.data.transition === 'revived')) {
    return { status: 'live', verdict: null, heardAt: e.at };
  }
  if (e.type === 'ownership.stale') return { status: 'stale', verdict: 'dead' };
  if ((e.type === 'ownership.released' || e.type === 'ownership.landed' || e.type === 'ownership.worktree_removed') && r && isFreeState(r.state)) {
    return { status: 'unowned', verdict: null };
  }
  return null;
}

/** What the claimed process's host says of it (read from /proc by the caller). */
export interface SeenProcess {
  bootId: string;
  /** its start time, null when no such process runs */
  startTime: string | null;
  /** OVERDECK_EXECUTION_SESSION_ID in its environment: a value, null when absent, undefined when unreadable */
  sessionInEnviron: string | null | undefined;
}

/**
 * Why a process identity a new owner gives is not its session's own, or null. The local liveness
 * authority judges the owner by this process: one that is not the session's (pid 1, a process that
 * already ended, another process under a reused pid, another session's) would make an owner that
 * can never be proven dead, or one proven dead while it works.
 */
export function claimedProcessProblem(claimed: { pid: number; bootId: string; startTime: string }, seen: SeenProcess, session: string): string | null {
  if (claimed.pid <= 1) return 'pid 1 is the init process, never a session';
  if (claimed.bootId !== seen.bootId) return 'the boot id is not this host’s';
  if (seen.startTime === null) return `no process ${claimed.pid} runs on this host`;
  if (seen.startTime !== claimed.startTime) return `process ${claimed.pid} started at another time: another process`;
  if (typeof seen.sessionInEnviron === 'string' && seen.sessionInEnviron !== session) return `process ${claimed.pid} runs for another session`;
  return null;
}

/** How long the local authority answers `unknown` for a running process that cannot prove its session before it answers `dead` (OD_LIVENESS_UNPROVEN_BOUND_MS). */
export const DEFAULT_UNPROVEN_BOUND_MS = 30 * 60_000;

/**
 * The local authority's verdict on a claimed process that runs, as claimed (same boot, same start
 * time, not a zombie): by positive proof only. `alive` needs the process itself to carry the
 * session: OVERDECK_EXECUTION_SESSION_ID in its environment naming this session (`od-worktree
 * exec` and the bind answer's tenure.env put it there). A process whose environment is unreadable
 * (another user's, a root daemon), that names no session (pid 2, any process a new owner merely
 * named) or another session proves nothing: `unknown`. Unknown fails closed, but not for ever: an
 * owner silent past its lease whose process has not proven the session for `boundMs` since the
 * authority first found it unproven is answered `dead`, so a successor may reclaim (its WIP is
 * saved first) instead of waiting for an admin. `unprovenSinceMs` is when this authority first
 * found this tenure's process unproven (its memory: a restart starts the bound again).
 */
export function runningProcessVerdict(
  pid: number,
  sessionInEnviron: string | null | undefined,
  session: string,
  unproven: { sinceMs: number; nowMs: number; boundMs: number },
): { verdict: Verdict; detail: string | null } {
  if (sessionInEnviron === session) return { verdict: 'alive', detail: null };
  const why =
    sessionInEnviron === undefined
      ? `process ${pid}'s environment is unreadable here`
      : sessionInEnviron === null
        ? `process ${pid} carries no OVERDECK_EXECUTION_SESSION_ID`
        : `process ${pid} runs for another session`;
  const forMs = unproven.nowMs - unproven.sinceMs;
  if (forMs >= unproven.boundMs) return { verdict: 'dead', detail: `${why}: the session unproven for ${Math.round(forMs / 1000)} s, past the bound` };
  return { verdict: 'unknown', detail: `${why}: it does not prove the session` };
}

/** The liveness part of a view, as the workflow publishes it (its memo) and the API serves it. */
export interface LivenessFacts {
  status: LivenessStatus;
  verdict: Verdict | null;
  lastHeartbeatAt: string | null;
  checkedAt: string | null;
  leaseTtlMs: number;
}

/**
 * The liveness a view shows beside the durable record: one moment, never the record of one seq
 * beside the liveness of another (docs/ownership-record.md#one-moment). The workflow's memo can
 * lag the log by the workflow task that learns its write is durable; every event the memo has not
 * seen moves it as it moves the workflow (livenessAfter), so `stale` always carries the dead
 * verdict that made it stale, and a reclaimed worktree the new owner's fresh lease. No memo at
 * all (Temporal away, a run that has published nothing yet): null, unless the record itself says
 * stale, which only a dead verdict makes. `unseen` are the log's events after `memo.seq`, in order.
 */
export function livenessOfRecord(
  memo: { seq: number; liveness: LivenessFacts } | null,
  unseen: readonly OwnershipEvent[],
  record: OwnershipRecord,
): LivenessFacts | null {
  if (memo === null) {
    return record.state === 'stale' ? { status: 'stale', verdict: 'dead', lastHeartbeatAt: null, checkedAt: null, leaseTtlMs: 0 } : null;
  }
  let out: LivenessFacts = memo.liveness;
  for (const e of unseen) {
    if (e.seq <= memo.seq || e.seq > record.seq) continue;
    const move = livenessAfter(e, record);
    if (!move) continue;
    out = {
      ...out,
      status: move.status,
      verdict: move.verdict,
      ...(move.heardAt !== undefined ? { lastHeartbeatAt: move.heardAt } : {}),
      ...(e.type === 'ownership.stale' ? { checkedAt: e.at } : {}),
    };
  }
  return out;
}
