import type { CallRecord } from '../record';
import { worktreeKey, type Log } from './load';
import { couldProduce, is2xx, is4xx, isServiceEvent, SIGNAL_SLACK_MS, slackFor, within, withinSignal, type Outage } from './match';
import type { Violation } from './types';

export interface Attribution {
  /** events whose only possible calls got no answer or a 5xx: applied, never acknowledged (allowed) */
  unansweredApplied: number;
  explained: number;
}

/**
 * (4) No refused call is logged: every event a call makes is traced to a call of its worktree that
 * could have made it, in its time window. Traced only to refusals: a refused call changed history
 * (e.g. a refused accept left a claim naming the refused worker). Traced to nothing: history
 * nobody asked for. A signal's window reaches past a workflow-worker outage (`outages`, a worker
 * killed mid-round): it is applied once a worker takes the workflow's task again.
 */
export function checkRefusals(
  log: Log,
  calls: readonly CallRecord[],
  slotKeys: ReadonlyMap<number, string>,
  out: Violation[],
  outages: readonly Outage[] = [],
): Attribution {
  const byWorktree = new Map<string, CallRecord[]>();
  for (const r of calls) {
    if (r.op === 'get') continue;
    const key = slotKeys.get(r.slot);
    if (key === undefined) continue;
    byWorktree.set(key, [...(byWorktree.get(key) ?? []), r]);
  }
  const result: Attribution = { unansweredApplied: 0, explained: 0 };
  for (const l of log.lifecycles.values()) {
    const candidatesOf = byWorktree.get(worktreeKey(l.hostId, l.path)) ?? [];
    for (const e of l.events) {
      if (isServiceEvent(e)) continue;
      const at = Date.parse(e.at);
      const slack = slackFor(e);
      const inWindow = slack === SIGNAL_SLACK_MS ? (r: CallRecord) => withinSignal(r, at, slack, outages) : (r: CallRecord) => within(r, at, slack);
      const cands = candidatesOf.filter((r) => couldProduce(r, e) && inWindow(r));
      const where = { ownershipId: l.ownershipId, seq: e.seq, worktree: l.path };
      if (cands.some(is2xx)) {
        result.explained++;
        const misaddressed = cands.filter(is2xx).every((r) => r.target !== undefined && r.target !== l.ownershipId);
        if (misaddressed)
          out.push({
            check: 'refused_not_logged',
            message: `${e.type} applied to ${l.ownershipId} by a call addressed to another lifecycle (${cands.map((r) => `#${r.n}→${r.target}`).join(', ')})`,
            ...where,
          });
        continue;
      }
      if (cands.length === 0) {
        out.push({ check: 'explained_event', message: `${e.type} at ${e.at} matches no call of the run`, ...where });
      } else if (cands.every(is4xx)) {
        out.push({
          check: 'refused_not_logged',
          message: `${e.type} at ${e.at} matches only refused calls: ${cands.map((r) => `#${r.n} ${r.op}/${r.variant} ${r.status} ${r.code}`).join(', ')}`,
          ...where,
        });
      } else {
        result.unansweredApplied++;
      }
    }
  }
  return result;
}
