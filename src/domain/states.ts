/**
 * The lifecycle states of an ownership and the one definition of which of them hold the worktree,
 * leave it free, or end the lifecycle. Everything that asks "is somebody holding this worktree?"
 * (the state machine, the reducer, the local projection, the API, the CLI, reconcile and, through
 * a generated block, hooks/overdeck-guard.sh) imports these; src/domain/attributes.ts names the
 * copies. Pure and stateless: preloaded into the workflow sandbox.
 */

export const OWNERSHIP_STATES = ['active', 'handoff_pending', 'stale', 'released', 'submitted', 'landed', 'closed'] as const;
export type OwnershipState = (typeof OWNERSHIP_STATES)[number];

/** An owner holds the worktree: the guard refuses other sessions and git's worktree lock is kept. */
export const HELD_STATES = ['active', 'handoff_pending', 'stale', 'submitted'] as const satisfies readonly OwnershipState[];

/** Nobody holds the worktree: the guard lets anyone through and the locks are dropped. */
export const FREE_STATES = ['released', 'landed', 'closed'] as const satisfies readonly OwnershipState[];

/** The lifecycle is over: no new owner, no conversation to annotate (released is free but not over). */
export const ENDED_STATES = ['landed', 'closed'] as const satisfies readonly OwnershipState[];

// Held and free split the states exactly; the compiler refuses a state in neither or in both.
type Missing = Exclude<OwnershipState, (typeof HELD_STATES)[number] | (typeof FREE_STATES)[number]>;
type Both = Extract<(typeof HELD_STATES)[number], (typeof FREE_STATES)[number]>;
const partition: [Missing, Both] extends [never, never] ? true : never = true;
void partition;

const includes = (list: readonly string[], state: string): boolean => list.includes(state);

/** Somebody holds the worktree in this durable state. */
export function isHeldState(state: string): boolean {
  return includes(HELD_STATES, state);
}

/**
 * Nobody holds the worktree in this state. Local projections also carry states the service never
 * records (a provisional claim): those are not free.
 */
export function isFreeState(state: string): boolean {
  return includes(FREE_STATES, state);
}

export function isEndedState(state: string): boolean {
  return includes(ENDED_STATES, state);
}
