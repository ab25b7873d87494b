import type { OwnershipEvent } from '../domain/events';
import { applyEvent, type OwnershipRecord } from '../domain/projection';

/**
 * The log wins. A workflow task that wrote its events to PostgreSQL and then failed before it
 * completed runs again; the store then answers with what it already holds (`replaced`, see
 * appendEvents). Usually that is the same decision with another clock: adopt it and carry on.
 * When it is another decision (the retried task saw its messages in another order), our events
 * from that seq on never happened: the store wrote none of them and sent the log's tail instead,
 * and the messages behind them (and behind every pending event, decided on a record that never
 * was) are decided again on the adopted record, so nobody is told "ok" about an event that is not
 * in the log. Pure: the workflow feeds it, and so do the unit tests.
 */
export interface Adopted {
  /** the fold of what PostgreSQL holds */
  durableRecord: OwnershipRecord | null;
  /** the live record: durableRecord plus the still-valid pending events */
  record: OwnershipRecord | null;
  /** events of ours the log overrode (batch or pending): their messages must be decided again */
  lost: OwnershipEvent[];
  /** pending events still valid on the adopted record */
  pending: OwnershipEvent[];
  /** the batch as the log has it, plus the log's tail after a conflicting decision */
  canonical: OwnershipEvent[];
}

/** Same decision: equal but for the clock (the store compares the same way). */
export function sameDecision(a: OwnershipEvent, b: OwnershipEvent): boolean {
  return JSON.stringify({ ...a, at: '' }) === JSON.stringify({ ...b, at: '' });
}

export function adopt(
  durableBefore: OwnershipRecord | null,
  record: OwnershipRecord | null,
  batch: readonly OwnershipEvent[],
  replaced: readonly OwnershipEvent[],
  pending: readonly OwnershipEvent[],
): Adopted {
  const bySeq = new Map(replaced.map((e) => [e.seq, e]));
  const conflict = batch.find((e) => {
    const recorded = bySeq.get(e.seq);
    return recorded !== undefined && !sameDecision(e, recorded);
  });
  const firstLost = conflict?.seq ?? Number.POSITIVE_INFINITY;
  const canonical = [
    ...batch.filter((e) => e.seq < firstLost).map((e) => bySeq.get(e.seq) ?? e),
    ...replaced.filter((e) => e.seq >= firstLost).sort((a, b) => a.seq - b.seq),
  ];
  let durableRecord = durableBefore;
  for (const e of canonical) durableRecord = applyEvent(durableRecord, e);
  if (conflict === undefined) {
    if (replaced.length === 0) return { durableRecord, record, lost: [], pending: [...pending], canonical };
    let r = durableRecord;
    for (const e of pending) r = applyEvent(r, e);
    return { durableRecord, record: r, lost: [], pending: [...pending], canonical };
  }
  const lost = [...batch.filter((e) => e.seq >= firstLost), ...pending];
  return { durableRecord, record: durableRecord, lost, pending: [], canonical };
}
