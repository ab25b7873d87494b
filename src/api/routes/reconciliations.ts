import { ERROR_RESPONSES, principalOf, SECURITY, type App } from '../http';
import { CallerSchema, ReconciliationBodySchema, ReconciliationRecordedSchema } from '../../contract/reconcile';
import type { ServiceDeps } from '../service';
import { caller, recordReconciliation } from '../service/reconciliations';

/**
 * POST /v1/reconciliations (what `od-worktree reconcile` logs) and GET /v1/principal (who the
 * token is, so the CLI binds a provisional claim only as its token's worker). Registered apart
 * from createService: they need only the pool and the path normaliser.
 */
export function registerReconciliationRoutes(app: App, deps: ServiceDeps): void {
  app.post(
    '/v1/reconciliations',
    {
      // The executor/admin gate of the policy matrix; the service narrows executors to worktrees they may act on.
      config: { operation: 'bind' },
      schema: {
        summary: 'Record a reconciliation of a worktree’s local projection (executor: a free worktree or its own worker’s; admin: any)',
        tags: ['reconciliations'],
        security: SECURITY,
        body: ReconciliationBodySchema,
        response: { 201: ReconciliationRecordedSchema, ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => reply.code(201).send(await recordReconciliation(deps, principalOf(req), req.body)),
  );

  app.get(
    '/v1/principal',
    {
      config: { operation: 'get' },
      schema: {
        summary: 'The calling principal: kind, id and (executors) the agent worker it acts for',
        tags: ['reconciliations'],
        security: SECURITY,
        response: { 200: CallerSchema, ...ERROR_RESPONSES },
      },
    },
    async (req) => caller(principalOf(req)),
  );
}
