import type { Pool } from '../../store/db';
import { ScanInputSchema, ScanReportSchema } from '../../landings/scan';
import { LandingBodySchema, LandingResponseSchema } from '../../contract/http';
import type { OwnershipService } from '../service';
import { scan } from '../service/landings';
import { ERROR_RESPONSES, principalOf, SECURITY, type App } from '../http';

/**
 * POST /v1/landings: the landing controller's receipt (docs/events.md, Landing receipts).
 * POST /v1/landings/scan: infer the landings that reached a branch without one (docs/operations.md#landings-without-a-receipt).
 */
export function registerLandingRoutes(app: App, svc: OwnershipService, deps?: { pool: Pool; normalize: (p: string) => Promise<string> }): void {
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
  if (!deps) return;
  app.post(
    '/v1/landings/scan',
    {
      config: { operation: 'landed' },
      schema: {
        summary:
          'Walk a branch of a repository on this host and record an inferred receipt for each landing without one (merge, fast-forward, cherry-pick -x, patch-id, squash); ambiguous commits record nothing and say why',
        tags: ['landings'],
        security: SECURITY,
        body: ScanInputSchema,
        response: { 200: ScanReportSchema, ...ERROR_RESPONSES },
      },
    },
    async (req) => scan(deps, principalOf(req), req.body),
  );
}
