import { applyEvent, emptyRecord, type OwnershipRecord } from './projection';
import type { OwnershipEvent } from './events';
import { isFreeState, isHeldState } from './states';

/**
 * Who made a commit, decided from the durable record (docs/git-projection.md#whom-a-commit-is-attributed-to).
 * A journal line and the reflog are plain files in the worktree: whoever works there can write
 * them. So what a line says (ownership, epoch, session, worker, conversation, state) is only a
 * claim, checked against the tenures the ownership log says held that worktree while the line can
 * have been written. Pure: the store reads the log and the journal, this decides.
 */

/** Stable codes of a commit report that attributes nobody (docs/reason-codes.md#commit-attribution). */
export const ATTRIBUTION_REASONS = {
  attribution_no_tenure: 'no tenure held the worktree while the line can have been written: nobody is attributed',
  attribution_no_session: 'no session id while the owner was not alone (a handoff, a stale owner): the author is not known',
  attribution_claim_mismatch: 'the line names another ownership, epoch, session, worker or conversation than the tenure that held the worktree',
  attribution_commit_of_other_worktree: "the commit is on another worktree's branch (owned or not) and not on this one's",
  attribution_reported_by_other_worktree: 'another worktree reports the same commit as its own: neither is attributed',
} as const;
export type AttributionReason = keyof typeof ATTRIBUTION_REASONS;

/** A report's verdict when shipped, and a commit's status from all its reports. */
export const ATTRIBUTION_STATUSES = ['attributed', 'disputed', 'unowned', 'unknown'] as const;
export type AttributionStatus = (typeof ATTRIBUTION_STATUSES)[number];

/** One stretch of time during which one tenure held the worktree with the same facts. */
export interface TenureSegment {
  ownershipId: string;
  epoch: number;
  state: string;
  executionSessionId: string;
  workerId: string | null;
  conversationId: string | null;
  /** the child sessions holding under this tenure (docs/ownership-record.md#child-holds), by hold */
  holds?: ReadonlyArray<{ holdId: string; executionSessionId: string }>;
  /** ms since the epoch, from the event that began it */
  from: number;
  /** ms since the epoch; null while it lasts */
  to: number | null;
}

/** The tenure facts an attribution records. */
export interface TenureFacts {
  ownershipId: string | null;
  epoch: number | null;
  executionSessionId: string | null;
  workerId: string | null;
  conversationId: string | null;
}

/** What one journal line says; null where it says nothing (empty, unparsable, or not an id). */
export interface LineClaim extends TenureFacts {
  /** the committing process's OVERDECK_EXECUTION_SESSION_ID */
  committerSessionId: string | null;
  /** the projection's state as the hook read it */
  state: string | null;
}

/** Bounds on when the line was written: after `from` (null: no earlier read of the journal), before `to` (the read that found it). */
export interface LineWindow {
  from: number | null;
  to: number;
}

export interface Judgement {
  verdict: AttributionStatus;
  reason: AttributionReason | null;
  /** hold: a child session committing under a live hold of the tenure (the recorded session is the child's) */
  via: 'session' | 'owner_at_time' | 'hold' | 'unknown';
  /**
   * The record's tenure: the one the attribution names, or (disputed) the one the record offers
   * instead. For a child's commit (via hold): the child's session, under the parent's ownership,
   * epoch, worker and conversation, which is how the commit reaches the parent's conversation.
   */
  recorded: TenureFacts | null;
  /** via hold: the hold the child committed under and the parent session that granted it */
  hold?: { holdId: string; parentExecutionSessionId: string } | null;
}

/** Events that change who holds a worktree, or the facts of the holder (the rest are skipped by the store's query). */
export const TENURE_EVENT_TYPES = [
  'ownership.claimed',
  'ownership.reclaimed',
  'ownership.conversation_bound',
  'ownership.handoff_started',
  'ownership.handoff_cancelled',
  'ownership.released',
  'ownership.stale',
  'ownership.heartbeat',
  'ownership.submitted',
  'ownership.landed',
  'ownership.worktree_removed',
  'ownership.hold_granted',
  'ownership.hold_ended',
] as const;

/** Only the owner is committing: the states in which a commit without a session id is the owner's. */
const ALONE = new Set(['active', 'submitted']);

/**
 * The held stretches of each ownership's log (events of one ownership in seq order; several
 * ownerships one after another). The log's own reducer folds them, so "held" means what it means
 * everywhere else; events the query skipped leave seq gaps, which are not lost history here.
 */
export function tenureSegments(events: readonly OwnershipEvent[]): TenureSegment[] {
  const out: TenureSegment[] = [];
  let record: OwnershipRecord | null = null;
  let open: TenureSegment | null = null;
  const close = (at: number) => {
    if (open) open.to = at;
    open = null;
  };
  for (const e of events) {
    if (record && record.ownershipId !== e.ownershipId) {
      record = null;
      open = null; // the next ownership's log: the last one's stretch stays open only if that log never let go
    }
    record = applyEvent({ ...(record ?? emptyRecord(e)), seq: e.seq - 1 }, e);
    const at = Date.parse(e.at);
    const held = isHeldState(record.state) && record.owner !== null;
    const facts = held
      ? {
          ownershipId: record.ownershipId,
          epoch: record.epoch,
          state: record.state,
          executionSessionId: record.owner!.executionSessionId,
          workerId: record.owner!.worker?.workerId ?? null,
          conversationId: record.owner!.conversation?.conversationId ?? null,
          holds: (record.holds ?? []).filter((h) => h.epoch === record!.epoch).map((h) => ({ holdId: h.holdId, executionSessionId: h.executionSessionId })),
        }
      : null;
    const cur: TenureSegment | null = open;
    const same =
      cur !== null &&
      facts !== null &&
      cur.ownershipId === facts.ownershipId &&
      cur.epoch === facts.epoch &&
      cur.state === facts.state &&
      cur.executionSessionId === facts.executionSessionId &&
      cur.workerId === facts.workerId &&
      cur.conversationId === facts.conversationId &&
      sameHolds(cur.holds, facts.holds);
    if (same) continue;
    close(at);
    if (facts) {
      open = { ...facts, from: at, to: null };
      out.push(open);
    }
  }
  return out;
}

type SegmentHolds = NonNullable<TenureSegment['holds']>;
const sameHolds = (a: SegmentHolds = [], b: SegmentHolds = []): boolean =>
  a.length === b.length && a.every((h, i) => h.holdId === b[i]!.holdId && h.executionSessionId === b[i]!.executionSessionId);

const overlaps = (s: TenureSegment, w: LineWindow): boolean => s.from <= w.to && (s.to === null || w.from === null || s.to > w.from);

/** Some instant of the window when no tenure held the worktree. */
function freeTimeIn(segments: readonly TenureSegment[], w: LineWindow): boolean {
  if (w.from === null) return true; // before the first tenure, for all we know
  let covered = w.from;
  for (const s of [...segments].filter((x) => overlaps(x, w)).sort((a, b) => a.from - b.from)) {
    if (s.from > covered) return true;
    covered = s.to === null ? Infinity : Math.max(covered, s.to);
    if (covered >= w.to) return false;
  }
  return covered < w.to;
}

function agrees(c: LineClaim, s: TenureSegment): boolean {
  const same = <T>(claimed: T | null, recorded: T | null) => claimed === null || claimed === recorded;
  return (
    same(c.ownershipId, s.ownershipId) &&
    same(c.epoch, s.epoch) &&
    same(c.executionSessionId, s.executionSessionId) &&
    same(c.committerSessionId, s.executionSessionId) &&
    same(c.workerId, s.workerId) &&
    same(c.conversationId, s.conversationId) &&
    (c.state === null || !isHeldState(c.state) || c.state === s.state)
  );
}

/**
 * The hold a line's committing session writes under in tenure `s`: a child committing in the
 * parent's worktree, whose line names the parent as the projection's owner (or no owner) and the
 * parent's facts otherwise. The child is never the owner, and the owner is never a child.
 */
function holdOf(c: LineClaim, s: TenureSegment): SegmentHolds[number] | null {
  if (c.committerSessionId === null || c.committerSessionId === s.executionSessionId) return null;
  const hold = (s.holds ?? []).find((h) => h.executionSessionId === c.committerSessionId);
  if (hold === undefined) return null;
  return agrees({ ...c, committerSessionId: null }, s) ? hold : null;
}

export const factsOf = (s: TenureSegment): TenureFacts => ({
  ownershipId: s.ownershipId,
  epoch: s.epoch,
  executionSessionId: s.executionSessionId,
  workerId: s.workerId,
  conversationId: s.conversationId,
});

/**
 * The verdict on one line from the tenures that held its worktree while it can have been written.
 * A tenure that held the worktree within the window and agrees with every fact the line states is
 * the author's (its facts, from the record, are what is kept); no tenure in the window: unowned;
 * tenures, but none agreeing: disputed, attributed to nobody.
 */
export function judgeClaim(claim: LineClaim, segments: readonly TenureSegment[], window: LineWindow): Judgement {
  const candidates = segments.filter((s) => overlaps(s, window));
  const claimsFree = claim.state !== null && isFreeState(claim.state);
  if (candidates.length === 0 || (claimsFree && freeTimeIn(segments, window))) {
    return { verdict: 'unowned', reason: 'attribution_no_tenure', via: 'unknown', recorded: null };
  }
  const matching = claimsFree ? [] : candidates.filter((s) => agrees(claim, s));
  if (matching.length === 0 && !claimsFree) {
    // A child of a live hold of a tenure of the window: the child's, through it the parent's conversation.
    for (const s of candidates) {
      const hold = holdOf(claim, s);
      if (hold === null) continue;
      return {
        verdict: 'attributed',
        reason: null,
        via: 'hold',
        recorded: { ...factsOf(s), executionSessionId: hold.executionSessionId },
        hold: { holdId: hold.holdId, parentExecutionSessionId: s.executionSessionId },
      };
    }
  }
  if (matching.length === 0) {
    const latest = [...candidates].sort((a, b) => b.from - a.from)[0]!;
    return { verdict: 'disputed', reason: 'attribution_claim_mismatch', via: 'unknown', recorded: factsOf(latest) };
  }
  const first = matching[0]!;
  if (claim.committerSessionId !== null) return { verdict: 'attributed', reason: null, via: 'session', recorded: factsOf(first) };
  // No session id: the owner, only when nobody else could have been committing (no child holds,
  // and the state the hook read, if it read one the record had then; else every state the record had).
  // A live child hold means someone besides the owner may be committing: no session id, no author.
  const childless = matching.every((s) => (s.holds ?? []).length === 0);
  const alone = childless && (claim.state !== null && isHeldState(claim.state) ? ALONE.has(claim.state) : matching.every((s) => ALONE.has(s.state)));
  if (!alone) return { verdict: 'unknown', reason: 'attribution_no_session', via: 'unknown', recorded: factsOf(first) };
  const owner = claim.state !== null ? (matching.find((s) => s.state === claim.state) ?? first) : first;
  return { verdict: 'attributed', reason: null, via: 'owner_at_time', recorded: factsOf(owner) };
}
