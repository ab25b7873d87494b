import type { EventDraft, Hold } from './events';
import type { OwnershipRecord } from './projection';
import { refusal, type Refusal } from './reasons';

/**
 * What every decision asks of child holds (docs/ownership-record.md#child-holds); decide.ts grants
 * and ends them. The parent's own messages ask `checkNoHolds` first: its release, or a reclaim of
 * it, while a child holds would take the worktree from under the child.
 */

export function holdsOf(r: OwnershipRecord | null): readonly Hold[] {
  return r?.holds ?? [];
}

/** The children named, for a refusal a person can act on: who holds, under which hold. */
export function checkNoHolds(r: OwnershipRecord | null): Refusal | null {
  const holds = holdsOf(r);
  if (holds.length === 0) return null;
  return refusal('holds_live', { children: holds.map((h) => ({ holdId: h.holdId, executionSessionId: h.executionSessionId, runtime: h.runtime })) });
}

/** A child silent past its own lease: its hold ends; the parent is not touched. */
export function decideHoldExpired(r: OwnershipRecord | null, holdId: string): EventDraft[] {
  const hold = holdsOf(r).find((h) => h.holdId === holdId);
  return hold === undefined ? [] : [holdEnded(hold, 'expired', null, null, 'system:liveness')];
}

/**
 * The parent's tenure ends (a handoff accepted, a reclaim, a landing): every hold ends with it,
 * recorded first, so the history says why the children lost their standing.
 */
export function endHoldsWithTenure(r: OwnershipRecord | null): EventDraft[] {
  return holdsOf(r).map((h) => holdEnded(h, 'epoch_ended', null, null, 'system:workflow'));
}

export function holdEnded(
  hold: Hold,
  reason: 'released' | 'expired' | 'epoch_ended' | 'forced',
  detail: string | null | undefined,
  by: string | null,
  principal: string,
): EventDraft {
  return {
    type: 'ownership.hold_ended',
    actorSessionId: by,
    principal,
    data: { holdId: hold.holdId, executionSessionId: hold.executionSessionId, reason, detail: detail ?? null },
  };
}
