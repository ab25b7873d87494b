import { z } from 'zod';
import { IdString, PathString } from '../domain/identity';

/**
 * Read-only observers of a worktree (a reviewer, a side chat): a lease per session in PostgreSQL
 * (`worktree_observers`), never ownership state. An observer gets no tenure and no secret, so the
 * git gate refuses its mutations as it refuses any non-owner; it never blocks a bind, claim or
 * reclaim. `who` lists the live ones.
 */

/** Bounds of an observer's lease: long enough to outlive a slow heartbeat, short enough that a gone session leaves `who` soon. */
export const OBSERVER_TTL_MIN_MS = 5_000;
export const OBSERVER_TTL_MAX_MS = 600_000;
export const OBSERVER_TTL_DEFAULT_MS = 60_000;

const Where = {
  worktreePath: PathString,
  hostId: IdString.optional().describe('the host that holds the worktree; default: the API host'),
  executionSessionId: IdString.describe('the observing session'),
  workerId: IdString.optional().describe('admin: the agent worker the session runs for; executors act for their own'),
};

/** Register or heartbeat (the same call): the lease runs `ttlMs` from now. */
export const ObserveBodySchema = z.strictObject({
  ...Where,
  runtime: IdString.optional().describe("the observer's runtime; default: the executor binding's executor, else `unknown`"),
  ttlMs: z
    .number()
    .int()
    .min(OBSERVER_TTL_MIN_MS)
    .max(OBSERVER_TTL_MAX_MS)
    .optional()
    .describe(`how long the registration lasts without another heartbeat; default ${OBSERVER_TTL_DEFAULT_MS} ms`),
});
export type ObserveBody = z.infer<typeof ObserveBodySchema>;

/** Leave: the registration is gone at once (idempotent). */
export const LeaveObserveBodySchema = z.strictObject(Where);
export type LeaveObserveBody = z.infer<typeof LeaveObserveBodySchema>;

/** One live observer, as `who` and the register answer show it. */
export const ObserverViewSchema = z.strictObject({
  executionSessionId: z.string(),
  workerId: z.string(),
  runtime: z.string(),
  registeredAt: z.string(),
  lastSeenAt: z.string(),
  expiresAt: z.string(),
});
export type ObserverView = z.infer<typeof ObserverViewSchema>;

export const ObserveResponseSchema = z.strictObject({
  hostId: z.string(),
  worktreePath: z.string(),
  observer: ObserverViewSchema,
});
export type ObserveResponse = z.infer<typeof ObserveResponseSchema>;

export const LeaveObserveResponseSchema = z.strictObject({ hostId: z.string(), worktreePath: z.string(), left: z.boolean() });
export type LeaveObserveResponse = z.infer<typeof LeaveObserveResponseSchema>;
