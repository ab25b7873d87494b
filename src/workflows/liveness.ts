import { isCancellation } from '@temporalio/workflow';
import type { HeartbeatInput, HoldHeartbeatInput } from '../domain/commands';
import type { EventDraft, Hold } from '../domain/events';
import { decideHoldExpired, holdsOf } from '../domain/hold';
import { decideHeartbeat, decideStale, sameTenure, type Verdict } from '../domain/liveness';
import type { HostQueue } from './activities';
import { store } from './activities';
import { emit } from './durable-log';
import { now, type RunState } from './run-state';
import { heartbeatSummary, livenessSummary } from './summaries';

/**
 * Liveness of the owner: heartbeats renew its lease; a lease that runs out asks the liveness
 * authority, and only a dead verdict on the tenure asked about, still active, marks it stale. The
 * rules are pure (src/domain/liveness.ts); this module feeds them the clock and the run's state.
 */

/** The heartbeat signal, already checked against its schema. */
export function heartbeat(s: RunState, hb: HeartbeatInput): void {
  const nowMs = Date.now();
  const d = decideHeartbeat(s.record, s.ownershipId, hb, {
    status: s.liveness.status,
    nowMs,
    lastLoggedMs: s.lastHeartbeatLoggedMs,
    logIntervalMs: s.settings.heartbeatLogIntervalMs,
  });
  if (!d.accepted) return;
  // No wake: a plain heartbeat needs no re-armed lease timer. The timer, when it fires, finds the
  // lease renewed and re-arms from lastHeartbeatMs.
  heard(s, d.event, nowMs, nowMs);
}

/**
 * The owner's last heartbeat as the API recorded it: taken as if its signal had arrived then (one
 * activity per lease, not a signal and a workflow task per heartbeat). False: none newer.
 */
async function heardFromStore(s: RunState): Promise<boolean> {
  const asked = s.record?.owner ? { executionSessionId: s.record.owner.executionSessionId, epoch: s.record.epoch } : null;
  if (!asked) return false;
  const stored = await store.readHeartbeat.executeWithOptions({ summary: heartbeatSummary(asked.executionSessionId, asked.epoch) }, [s.ownershipId]);
  const nowMs = Date.now();
  if (!stored || !sameTenure(s.record, asked) || stored.executionSessionId !== asked.executionSessionId || stored.epoch !== asked.epoch) return false;
  const heardMs = nowMs - stored.ageMs;
  if (heardMs <= s.lastHeartbeatMs) return false;
  const d = decideHeartbeat(s.record, s.ownershipId, asked, {
    status: s.liveness.status,
    nowMs,
    lastLoggedMs: s.lastHeartbeatLoggedMs,
    logIntervalMs: s.settings.heartbeatLogIntervalMs,
  });
  if (!d.accepted) return false;
  heard(s, d.event, heardMs, nowMs);
  return true;
}

/** An accepted heartbeat, heard at `heardMs`: the lease renewed, the owner live, its event (if due) logged. */
function heard(s: RunState, event: EventDraft | null, heardMs: number, nowMs: number): void {
  s.lastHeartbeatMs = heardMs;
  s.liveness.lastHeartbeatAt = new Date(heardMs).toISOString();
  if (event) {
    s.lastHeartbeatLoggedMs = nowMs;
    emit(s, [event]);
  }
  s.liveness.status = 'live';
  s.liveness.verdict = null;
}

/** When the current owner's lease runs out, or null when no owner holds an active record. */
export function leaseDeadline(s: RunState): number | null {
  const r = s.record;
  if (r?.state !== 'active' || !r.owner) return null;
  const base = s.liveness.status === 'live' ? s.lastHeartbeatMs : Math.max(s.lastHeartbeatMs, Date.parse(s.liveness.checkedAt ?? '0'));
  return base + s.liveness.leaseTtlMs;
}

/** At a deadline: an owner silent past its lease is asked about (again once a lease after the last answer). */
export async function checkLease(s: RunState, hostOnce: HostQueue): Promise<void> {
  const r = s.record;
  if (r?.state !== 'active' || !r.owner || Date.now() - s.lastHeartbeatMs < s.liveness.leaseTtlMs) return;
  // The API records an owner's heartbeats instead of signalling each.
  if ((await heardFromStore(s)) && Date.now() - s.lastHeartbeatMs < s.liveness.leaseTtlMs) return;
  if (s.record?.state !== 'active' || !s.record.owner) return;
  const lastCheck = Date.parse(s.liveness.checkedAt ?? '0');
  if (s.liveness.status === 'live' || Date.now() - lastCheck >= s.liveness.leaseTtlMs) await checkLiveness(s, hostOnce);
}

/** A verdict is about the owner and epoch it was asked about; a new owner meanwhile is not judged by it. */
async function checkLiveness(s: RunState, hostOnce: HostQueue): Promise<void> {
  if (!s.record?.owner) return;
  const owner = s.record.owner;
  const asked = { executionSessionId: owner.executionSessionId, epoch: s.record.epoch };
  s.liveness.status = 'silent';
  const askedAtMs = Date.now();
  let verdict: Verdict = 'unknown';
  let detail: string | null;
  try {
    ({ verdict, detail } = await hostOnce.checkSessionLiveness.executeWithOptions({ summary: livenessSummary(asked.executionSessionId, asked.epoch) }, [
      owner,
    ]));
  } catch (err) {
    if (isCancellation(err)) throw err;
    detail = 'liveness authority unreachable';
  }
  // The API records heartbeats in PostgreSQL without signalling: one that came in while the authority
  // was being asked is read before a dead verdict counts. A session that resumed under a new
  // process keeps its tenure by heartbeating.
  const heardDuringAsk = verdict === 'dead' && sameTenure(s.record, asked);
  if (heardDuringAsk) await heardFromStore(s);
  if (!sameTenure(s.record, asked)) return;
  s.liveness.verdict = verdict;
  s.liveness.checkedAt = now();
  // A heartbeat may have arrived while the authority was being asked: it wins.
  if (Date.now() - s.lastHeartbeatMs < s.liveness.leaseTtlMs || (heardDuringAsk && s.lastHeartbeatMs >= askedAtMs)) {
    s.liveness.status = 'live';
    s.liveness.verdict = null;
    return;
  }
  const stale = decideStale(s.record, asked, verdict, detail);
  if (stale.length > 0) emit(s, stale);
}

/**
 * Child holds (docs/ownership-record.md#child-holds) have leases of their own: a child's heartbeat
 * renews its hold in memory only (no event, no activity); a hold silent past its leaseTtlMs ends
 * (`hold_ended expired`, decideHoldExpired). The parent's liveness is never touched by either.
 */

/** The holdHeartbeat signal, already checked: the hold named, by its own child, under its epoch. */
export function holdHeartbeat(s: RunState, hb: HoldHeartbeatInput): void {
  const r = s.record;
  if (hb.ownershipId !== undefined && r?.ownershipId !== hb.ownershipId) return;
  const hold = holdsOf(r).find((h) => h.holdId === hb.holdId);
  if (!hold || hold.executionSessionId !== hb.executionSessionId || hold.epoch !== hb.epoch) return;
  s.holdHeard.set(hold.holdId, Date.now());
}

/** When this hold's lease runs out: a lease after its grant or its child's last heartbeat. */
function holdDue(s: RunState, hold: Hold): number {
  return (s.holdHeard.get(hold.holdId) ?? Date.parse(hold.grantedAt)) + hold.leaseTtlMs;
}

/** The soonest lease of a live hold, or null when none lives. */
export function holdDeadline(s: RunState): number | null {
  const holds = holdsOf(s.record);
  return holds.length === 0 ? null : Math.min(...holds.map((h) => holdDue(s, h)));
}

/** The hold whose lease runs out first (for the timer's summary), or null. */
export function soonestHold(s: RunState): Hold | null {
  const holds = holdsOf(s.record);
  return holds.reduce<Hold | null>((a, h) => (a === null || holdDue(s, h) < holdDue(s, a) ? h : a), null);
}

/** At a deadline: every hold silent past its lease ends; what is remembered of ended holds goes. */
export function checkHoldLeases(s: RunState): void {
  const nowMs = Date.now();
  for (const hold of holdsOf(s.record)) if (nowMs >= holdDue(s, hold)) emit(s, decideHoldExpired(s.record, hold.holdId));
  const live = new Set(holdsOf(s.record).map((h) => h.holdId));
  for (const id of [...s.holdHeard.keys()]) if (!live.has(id)) s.holdHeard.delete(id);
}
