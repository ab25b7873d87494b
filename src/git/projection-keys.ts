/**
 * The projection's names that the gate program needs (src/gate: the hooks' and the PATH gate's
 * slow path): kept apart from ./projection-format.ts, whose schemas load zod, because every
 * refused git call starts the gate afresh and zod alone is a third of its start. Re-exported there.
 */

/**
 * A child hold's keys: `overdeck.hold.<holdId>.execution-session-id` and `.tenure-hash`, in a
 * section `[overdeck "hold.<holdId>"]` of their own. The hooks' and the gate's readers of the
 * owner's section skip it (it is not `[overdeck "owner"]`), so a child's hash never passes for the
 * owner's; the TypeScript gate reads it (src/gate/guard.ts).
 */
export const HOLD_KEY_PREFIX = 'overdeck.hold.';
export const HOLD_KEYS = { executionSessionId: 'execution-session-id', tenureHash: 'tenure-hash' } as const;

/** State of a provisional (offline, docs/git-projection.md) claim not yet submitted to the service. */
export const PROVISIONAL_STATE = 'provisional';
/** State of a provisional claim that lost to a durable owner: the guard refuses its session (hooks/overdeck-guard.sh). */
export const PROVISIONAL_CONFLICT_STATE = 'provisional-conflict';
/** Every spelling of it the guard honours: projections written by early versions used an underscore. */
export const PROVISIONAL_CONFLICT_STATES: readonly string[] = [PROVISIONAL_CONFLICT_STATE, 'provisional_conflict'];

export function isProvisionalConflictState(state: string): boolean {
  return PROVISIONAL_CONFLICT_STATES.includes(state);
}

/** The lock file beside the projection (src/git/lock-file.ts): derived from it, and the gate's witness that a worktree whose projection is gone was owned. */
export const LOCK_FILE = 'overdeck.lock.json';
