import { LandingBodySchema, LandingResponseSchema } from '../schemas';
import type { OwnershipService } from '../service';
import { ERROR_RESPONSES, principalOf, SECURITY, type App } from '../http';

/** POST /v1/landings: the landing controller's receipt (spec §11). */
export function registerLandingRoutes(app: App, svc: OwnershipService): void {
  app.post(
    '/v1/landings',
    {
      config: { operation: 'landed' },
      schema: {
        summary: 'Record a landing by ownershipId or by (repoRoot, sourceBranch); idempotent on (ownership, landedHead)',
        tags: ['landings'],
        security: SECURITY,
        body: LandingBodySchema,
        response: { 200: LandingResponseSchema, 202: LandingResponseSchema, ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const out = await svc.land(principalOf(req), req.body);
      return reply.code(out.status === 'recorded' ? 200 : 202).send(out);
    },
  );
}
