/**
 * Every bound a message meets, in one table, each derived from the one it must fit in: the API's
 * wait for a message (past it the caller gets 503 and may send the same message again: its id is
 * Temporal's update id, so Temporal answers the retry), the client's retries of the seams between
 * runs inside that wait, and the host activities a message waits for (a foreign host's first bind,
 * a reclaim's WIP preservation) inside theirs. Constants only: the workflow imports them.
 */

/** One message, retries of the seams included: answered, or 503 `unavailable` to the caller. */
export const MESSAGE_MS = 30_000;

/** A foreign host's answer inside a message (inspecting a worktree before its first claim): the host activity's schedule-to-close. */
export const HOST_ANSWER_MS = 45_000;

/** WIP preservation inside a reclaim's answer: the host activity's schedule-to-close. */
export const WIP_MS = 25_000;

/** A message that waits for a host (a foreign bind, a reclaim): the host's bound, then a message's own time for the rest. */
export const HOST_MESSAGE_MS = Math.max(HOST_ANSWER_MS, WIP_MS) + MESSAGE_MS / 2;

/** Updates one process keeps in flight to one ownership: under the server's per-workflow limit (10), the rest wait their turn. */
export const IN_FLIGHT_PER_OWNERSHIP = 8;
/** How many wait their turn behind those before a caller is told at once to retry. */
export const WAITING_PER_OWNERSHIP = 256;
