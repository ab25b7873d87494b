import { condition, log, workflowInfo } from '@temporalio/workflow';
import { stampEvent, type EventDraft, type OwnershipEvent } from '../domain/events';
import { applyEvent } from '../domain/projection';
import { store } from './activities';
import { adopt, type Adopted } from './adoption';
import { followProjected } from './projection-loop';
import { publish } from './publish';
import { persistSummary, tailSummary } from './summaries';
import { followOwnerChange, now, type RunState } from './run-state';

/**
 * The durable log: decisions become events here (stamped, folded into the record, queued), and
 * one loop hands them to PostgreSQL in order. Acknowledgements wait for `durableSeq`; when the log
 * turns out to hold other events at those seqs, the log wins (adoption.ts) and the messages behind
 * ours are decided again.
 */

const RECENT_EVENTS = 200;

/** Stamps drafts into events, folds them into the record, and queues them for the durable log. */
export function emit(s: RunState, drafts: EventDraft[], redo?: () => void, messageId?: string): OwnershipEvent[] {
  const out: OwnershipEvent[] = [];
  const { worktree } = s;
  for (const d of drafts) {
    const base = s.record ?? {
      repoRoot: s.verifiedRepoRoot ?? worktree.repoRoot,
      worktreePath: worktree.worktreePath,
      branch: s.verifiedBranch ?? worktree.branch,
      hostId: worktree.hostId,
      seq: 0,
    };
    const event = stampEvent(s.ownershipId, base, d, now(), messageId);
    s.record = applyEvent(s.record, event);
    s.pending.push(event);
    out.push(event);
    if (redo) s.redoOf.set(event, redo);
    s.recentEvents.push(event);
    if (s.recentEvents.length > RECENT_EVENTS) s.recentEvents = s.recentEvents.slice(-RECENT_EVENTS);
    followOwnerChange(s, event);
  }
  if (drafts.length > 0) {
    publish(s);
    s.wake++;
  }
  return out;
}

export async function persistLoop(s: RunState): Promise<never> {
  for (;;) {
    await condition(() => s.pending.length > 0 || s.resync.wanted);
    if (s.pending.length === 0) {
      await readLogTail(s);
      continue;
    }
    const batch = s.pending;
    s.pending = [];
    const { durableSeq, replaced, gap, settled, projected } = await store.persistEvents.executeWithOptions({ summary: persistSummary(batch) }, [
      workflowInfo().workflowId,
      batch,
    ]);
    if (settled) {
      // The log settled a message of this batch before its events were written:
      // refused (the API answered it so, or gave up on it) or applied already. Nothing from its seq
      // on was written; its handler answers from that outcome, the messages behind it decide again.
      if (settled.outcome === 'refused') s.refusedMessages.set(settled.messageId, settled.code);
      else s.appliedMessages.add(settled.messageId);
      const written = batch.filter((e) => e.seq < settled.seq);
      const adopted = adopt(s.durableRecord, s.record, written, replaced, []);
      applyAdopted(
        s,
        { ...adopted, record: adopted.durableRecord, lost: [...adopted.lost, ...batch.filter((e) => e.seq >= settled.seq), ...s.pending], pending: [] },
        true,
      );
      s.sync.durableSeq = Math.max(s.sync.durableSeq, adopted.durableRecord?.seq ?? 0);
      // The log may hold more past what was adopted (a lost task's events): read and adopted next.
      if (durableSeq > s.sync.durableSeq) s.resync.wanted = true;
    } else if (gap) {
      // The record holds events the log never got: the log wins, and says so in this history (the
      // persist marker carries the log's record); every message behind the lost events decides again.
      log.warn('sequence gap: rebuilding on the log', { logSeq: durableSeq, batchFrom: batch[0]!.seq });
      s.sync.durableSeq = durableSeq;
      applyAdopted(
        s,
        { durableRecord: gap.record, record: gap.record, lost: [...eventsAfter(s, durableSeq), ...batch, ...s.pending], pending: [], canonical: [] },
        true,
      );
    } else {
      const adopted = adopt(s.durableRecord, s.record, batch, replaced, s.pending);
      applyAdopted(s, adopted, replaced.length > 0);
      const adoptedTo = adopted.durableRecord?.seq ?? 0;
      // The log holds more than this batch (a lost workflow task wrote past it): only what the run
      // adopted counts as durable, or an event decided at a seq the log holds for another would be
      // answered as durable, and a later tail read would fold from the wrong record. The tail is
      // read and adopted next.
      if (durableSeq > adoptedTo) {
        s.sync.durableSeq = Math.max(s.sync.durableSeq, adoptedTo);
        s.resync.wanted = true;
      } else {
        s.sync.durableSeq = Math.max(s.sync.durableSeq, durableSeq);
        // Written into the worktree by the same activity (a worker that is its host's agent):
        // nothing left for the projection loop. Only ever with a clean write of this batch.
        if (projected && !changed(adopted, replaced)) followProjected(s.sync, projected.localSeq, projected.branch);
      }
    }
    for (const e of batch) s.redoOf.delete(e);
  }
}

const changed = (a: Adopted, replaced: OwnershipEvent[]): boolean => replaced.length > 0 || a.lost.length > 0;

const TAIL_PAGE = 200;

/**
 * The log ahead of the run: reads what PostgreSQL holds past what the run knows
 * to be durable and adopts it, page by page. Only with nothing pending, so the tail follows the
 * record directly; events emitted meanwhile were decided on the old record and decide again.
 */
async function readLogTail(s: RunState): Promise<void> {
  s.resync.wanted = false;
  s.resync.checkedEpoch = s.record?.epoch ?? 0;
  try {
    await adoptLogTail(s);
  } finally {
    s.resync.reads++;
  }
}

async function adoptLogTail(s: RunState): Promise<void> {
  for (;;) {
    const from = s.sync.durableSeq;
    const tail = await store.readLog.executeWithOptions({ summary: tailSummary(from) }, [s.ownershipId, from, TAIL_PAGE]);
    if (tail.length === 0 || tail[0]!.seq !== from + 1 || s.sync.durableSeq !== from) return;
    log.warn('the log is ahead of this run: adopting its events', { fromSeq: from + 1, toSeq: tail.at(-1)!.seq });
    let durableRecord = s.durableRecord;
    for (const e of tail) durableRecord = applyEvent(durableRecord, e);
    const lost = s.pending;
    applyAdopted(s, { durableRecord, record: durableRecord, lost: [...lost], pending: [], canonical: tail }, true);
    s.sync.durableSeq = tail.at(-1)!.seq;
    for (const e of tail) followOwnerChange(s, e);
    s.resync.checkedEpoch = s.record?.epoch ?? 0;
    if (tail.length < TAIL_PAGE) return;
  }
}

/**
 * Asks for a read of the log's tail (at most once per epoch the run has seen) when a message
 * names a tenure the run does not know: the API lets such a message through only when the
 * durable row names it, so the log is ahead.
 */
export function suspectLogAhead(s: RunState, epoch: number): void {
  if (epoch <= (s.record?.epoch ?? 0) || epoch <= s.resync.checkedEpoch) return;
  s.resync.wanted = true;
}

/** Events of this run's record past `seq` (still in recentEvents): what a gap repair drops. */
function eventsAfter(s: RunState, seq: number): OwnershipEvent[] {
  return s.recentEvents.filter((e) => e.seq > seq);
}

/**
 * The log wins (adoption.ts); the messages behind overridden events are decided again. `changed`:
 * the log differs from the run's record (a plain persist that the log took as sent changes nothing).
 */
function applyAdopted(s: RunState, a: Adopted, changed: boolean): void {
  s.durableRecord = a.durableRecord;
  if (!changed) return;
  log.warn('adopting recorded events over re-executed ones', { seqs: a.canonical.map((e) => e.seq), redecided: a.lost.length });
  s.record = a.record;
  s.pending = a.pending;
  const lost = new Set(a.lost);
  const bySeq = new Map(a.canonical.map((e) => [e.seq, e]));
  const upTo = a.record?.seq ?? 0;
  s.recentEvents = s.recentEvents.filter((e) => !lost.has(e) && e.seq <= upTo).map((e) => bySeq.get(e.seq) ?? e);
  for (const e of a.canonical) if (!s.recentEvents.some((r) => r.seq === e.seq)) s.recentEvents.push(e);
  s.recentEvents.sort((x, y) => x.seq - y.seq);
  publish(s);
  const redos = new Set<() => void>();
  for (const e of a.lost) {
    s.lost.add(e);
    const redo = s.redoOf.get(e);
    s.redoOf.delete(e);
    if (redo) redos.add(redo);
  }
  for (const redo of redos) redo();
  s.wake++;
}
