import { OwnershipParamsSchema, OwnershipViewSchema } from '../../contract/http';
import type { OwnershipService } from '../service';
import { ERROR_RESPONSES, principalOf, SECURITY, type App } from '../http';

/**
 * GET /v1/ownerships/{id}. The messages to an ownership (POST /v1/bind, /v1/ownerships/{id}/…)
 * are the operation table's routes (./operations.ts).
 */
export function registerOwnershipRoutes(app: App, svc: OwnershipService): void {
  app.get(
    '/v1/ownerships/:id',
    {
      config: { operation: 'get' },
      schema: {
        summary: 'The ownership: the live view with liveness while it runs, the durable record after',
        tags: ['ownerships'],
        security: SECURITY,
        params: OwnershipParamsSchema,
        response: { 200: OwnershipViewSchema, ...ERROR_RESPONSES },
      },
    },
    async (req) => svc.getById(principalOf(req), req.params.id),
  );
}
