import { LeaveObserveBodySchema, LeaveObserveResponseSchema, ObserveBodySchema, ObserveResponseSchema } from '../../contract/observers';
import type { OwnershipService } from '../service';
import { ERROR_RESPONSES, principalOf, SECURITY, type App } from '../http';

/**
 * Read-only observers of a worktree (src/contract/observers.ts): POST registers or heartbeats,
 * DELETE leaves. Addressed by worktree path and host as bind is; never a message to the workflow.
 */
export function registerObserverRoutes(app: App, svc: OwnershipService): void {
  app.post(
    '/v1/worktrees/observers',
    {
      config: { operation: 'heartbeat' },
      schema: {
        summary: 'Register (or heartbeat) a read-only observer of a worktree: listed by who, never a tenure, never blocking the owner',
        description:
          'The lease runs ttlMs (5 s..10 min, default 60 s) from now; call again to extend it. An executor acts for its own worker; an admin names workerId. A session observing for another worker is refused (worker_mismatch).',
        tags: ['observers'],
        security: SECURITY,
        body: ObserveBodySchema,
        response: { 200: ObserveResponseSchema, ...ERROR_RESPONSES },
      },
    },
    async (req) => svc.observe(principalOf(req), req.body),
  );

  app.delete(
    '/v1/worktrees/observers',
    {
      config: { operation: 'heartbeat' },
      schema: {
        summary: 'Leave: the observer’s registration ends now (idempotent: left is false when none was live)',
        tags: ['observers'],
        security: SECURITY,
        body: LeaveObserveBodySchema,
        response: { 200: LeaveObserveResponseSchema, ...ERROR_RESPONSES },
      },
    },
    async (req) => svc.leaveObserve(principalOf(req), req.body),
  );
}
