import type { OwnershipEvent } from '../../src/domain/events';
import type { OwnershipRecord } from '../../src/domain/projection';
import { viewMismatch } from '../../chaos/view-check';
import type { CallRecord } from '../record';
import { foldAt, type Lifecycle, type Log } from './load';
import { couldProduce, is2xx, newOwnerWorker, UPDATE_SLACK_MS, within } from './match';
import type { Violation } from './types';

const VIEW_OPS = new Set(['bind', 'handoff', 'accept', 'cancel', 'release', 'reclaim', 'submit', 'plan']);
const HELD = new Set(['active', 'handoff_pending', 'stale', 'submitted']);

/**
 * (3) Nothing acknowledged is lost: every 2xx answer is in the log, as answered (the fold of the
 * log at the answer's seq is the answer), with its own event present exactly once; (7) nothing the
 * contract refuses whatever the timing (hijacks, spoofed roots, stale epochs, impersonation) got a 2xx.
 */
export function checkAcks(log: Log, calls: readonly CallRecord[], out: Violation[]): void {
  for (const r of calls) {
    if (!is2xx(r)) continue;
    const v = (message: string, check: Violation['check'] = 'acknowledged_in_log') =>
      out.push({
        check,
        message: `${r.op}/${r.variant} #${r.n}: ${message}`,
        call: r.n,
        ...(r.answer?.ownershipId ? { ownershipId: r.answer.ownershipId } : r.target ? { ownershipId: r.target } : {}),
      });
    if (r.mustRefuse) v(`answered ${r.status}; the contract refuses it whatever the interleaving`, 'illegal_acknowledged');
    if (r.op === 'get') continue;
    if (VIEW_OPS.has(r.op)) checkView(log, r, v);
    else if (r.op === 'heartbeat') checkHeartbeat(log, r, v);
    else if (r.op === 'landed' && r.answer?.landingStatus === 'recorded') {
      const l = log.lifecycles.get(r.target!);
      const n = l?.events.filter((e) => couldProduce(r, e)).length ?? 0;
      if (n !== 1) v(`landing recorded but the log holds ${n} landed events for its head`);
    } else if (r.op === 'worktreeRemoved') {
      const l = log.lifecycles.get(r.target!);
      if (!l?.events.some((e) => e.type === 'ownership.worktree_removed')) v('accepted, but no worktree_removed event in the log');
    }
  }
}

function checkView(log: Log, r: CallRecord, v: (m: string) => void): void {
  const a = r.answer;
  if (!a?.ownershipId || a.seq === undefined) return v('2xx without an ownership view');
  if (r.target && a.ownershipId !== r.target) v(`addressed ${r.target}, answered for ${a.ownershipId}`);
  const l = log.lifecycles.get(a.ownershipId);
  if (!l) return v(`answered ownership ${a.ownershipId} is not in the log`);
  if (a.seq > l.events.length) return v(`answered at seq ${a.seq}, the log ends at ${l.events.length}`);
  const f = foldAt(l, a.seq);
  if (!f) return v(`no fold at seq ${a.seq}`);
  const off = viewMismatch(f, a);
  if (off) v(`answered ${off.answered}, the log at seq ${a.seq} says ${off.logged}`);
  const b = (r.body ?? {}) as Record<string, unknown>;
  const upTo = l.events.slice(0, a.seq);
  const folds = l.folds.slice(0, a.seq);
  const inWindow = (e: OwnershipEvent) => within(r, Date.parse(e.at), UPDATE_SLACK_MS);
  switch (r.op) {
    case 'bind': {
      const worker = newOwnerWorker(r);
      if (!folds.some((x) => x.owner?.executionSessionId === b.executionSessionId && x.worker?.workerId === worker)) {
        v(`bind acknowledged, but ${String(b.executionSessionId)} of ${worker} never owned ${a.ownershipId} up to seq ${a.seq}`);
      }
      break;
    }
    case 'accept': {
      const mine = upTo.filter(
        (e) =>
          e.type === 'ownership.claimed' &&
          e.data.via === 'handoff' &&
          e.data.handoffId === b.handoffId &&
          e.data.owner.executionSessionId === b.executionSessionId,
      );
      if (mine.length !== 1) v(`accept acknowledged, the log holds ${mine.length} claims of handoff ${String(b.handoffId)} by its session`);
      else if (!mine.some((e) => couldProduce(r, e))) v(`accept acknowledged to worker ${newOwnerWorker(r)}, but the claim in the log names another worker`);
      break;
    }
    case 'reclaim':
      // Its own event, in its window; or a replay by content: the answer is the tenure an earlier
      // reclaim by this session made (same session, same epoch), whose event this call could have made.
      if (
        !upTo.some((e) => e.type === 'ownership.reclaimed' && couldProduce(r, e) && inWindow(e)) &&
        !upTo.some((e) => e.type === 'ownership.reclaimed' && couldProduce(r, e) && e.data.epoch === a.epoch && a.ownerSession === b.executionSessionId)
      ) {
        v('reclaim acknowledged, no matching reclaimed event in its window, nor the tenure it replays');
      }
      break;
    case 'handoff': {
      // Its own event, in its window; or a replay by content: the answer names the pending handoff,
      // whose event (any time before) is one this call could have made.
      const e =
        upTo.find((x) => x.type === 'ownership.handoff_started' && couldProduce(r, x) && inWindow(x)) ??
        (a.handoffId ? upTo.find((x) => x.type === 'ownership.handoff_started' && x.data.handoffId === a.handoffId && couldProduce(r, x)) : undefined);
      if (!e) v('handoff acknowledged, no matching handoff_started in its window, nor the pending one it names');
      else {
        const wanted = typeof b.toWorkerId === 'string' ? b.toWorkerId : null;
        // Read loosely: events written before handoffs named a worker have no such field.
        const logged = e ? (e.data as { toWorkerId?: string }).toWorkerId : undefined;
        if (wanted !== null && logged !== undefined && logged !== wanted) v(`handoff to worker ${wanted} logged as offered to ${logged}`);
      }
      break;
    }
    case 'cancel':
      if (!upTo.some((e) => e.type === 'ownership.handoff_cancelled' && couldProduce(r, e) && inWindow(e)))
        v('cancel acknowledged, no handoff_cancelled by the owner in its window');
      break;
    case 'release':
    case 'submit': {
      const n = upTo.filter((e) => couldProduce(r, e)).length;
      if (n !== 1) v(`${r.op} acknowledged, the log holds ${n} ${r.op} events for its session and epoch`);
      break;
    }
    case 'plan':
      if (!folds.some((x: OwnershipRecord) => x.lane === b.lane && x.planRef === b.planRef)) v('plan acknowledged, never in the log up to the answer');
      break;
  }
}

/**
 * A 202 heartbeat says the session was the owner at that epoch: some moment of the call's window
 * must fall in a tenure (session, epoch) of the addressed ownership while it was held. A tenure
 * counts from its first event's time until the next change was recorded in PostgreSQL (whichever
 * the service consulted, the workflow or the read projection, saw it in that span).
 */
function checkHeartbeat(log: Log, r: CallRecord, v: (m: string) => void): void {
  const b = (r.body ?? {}) as { executionSessionId?: string; epoch?: number };
  const l = r.target ? log.lifecycles.get(r.target) : undefined;
  if (!l) return v('heartbeat acknowledged for an ownership not in the log');
  if (!tenureOverlaps(l, b.executionSessionId, b.epoch, r.t0 - UPDATE_SLACK_MS, r.t1 + UPDATE_SLACK_MS)) {
    v(`heartbeat acknowledged for ${b.executionSessionId} at epoch ${b.epoch}, which did not hold ${l.ownershipId} during the call`);
  }
}

export function tenureOverlaps(l: Lifecycle, session: string | undefined, epoch: number | undefined, from: number, to: number): boolean {
  let start: number | null = null;
  for (const [i, f] of l.folds.entries()) {
    const at = Date.parse(l.events[i]!.at);
    const holds = f.owner?.executionSessionId === session && f.epoch === epoch && HELD.has(f.state);
    if (holds && start === null) start = at;
    if (!holds && start !== null) {
      const end = Math.max(at, l.recordedAt[i]!);
      if (start <= to && end >= from) return true;
      start = null;
    }
  }
  return start !== null && start <= to;
}
