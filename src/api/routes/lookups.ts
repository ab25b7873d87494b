import { ProvenanceSchema } from '../../store/provenance';
import {
  GetQuerySchema,
  HistoryQuerySchema,
  HistoryResponseSchema,
  ListQuerySchema,
  ListResponseSchema,
  ProvenanceParamsSchema,
  ProvenanceQuerySchema,
  WireRecordSchema,
} from '../schemas';
import type { OwnershipService } from '../service';
import { ERROR_RESPONSES, principalOf, SECURITY, type App } from '../http';

/** Read-only lookups of spec §6.3 and §11, served from PostgreSQL. */
export function registerLookupRoutes(app: App, svc: OwnershipService): void {
  app.get(
    '/v1/ownership',
    {
      config: { operation: 'get' },
      schema: {
        summary: 'ownership.get: the most recent ownership of a worktree path, a branch (+ repoRoot) or an id',
        tags: ['lookups'],
        security: SECURITY,
        querystring: GetQuerySchema,
        response: { 200: WireRecordSchema, ...ERROR_RESPONSES },
      },
    },
    async (req) => svc.get(principalOf(req), req.query),
  );

  app.get(
    '/v1/ownerships',
    {
      config: { operation: 'list' },
      schema: {
        summary: 'ownership.list: most recent change first, keyset-paginated',
        tags: ['lookups'],
        security: SECURITY,
        querystring: ListQuerySchema,
        response: { 200: ListResponseSchema, ...ERROR_RESPONSES },
      },
    },
    async (req) => svc.list(principalOf(req), req.query),
  );

  app.get(
    '/v1/history',
    {
      config: { operation: 'history' },
      schema: {
        summary: 'ownership.history: every ownership of a worktree, branch or landed commit, with events and owner chain',
        tags: ['lookups'],
        security: SECURITY,
        querystring: HistoryQuerySchema,
        response: { 200: HistoryResponseSchema, ...ERROR_RESPONSES },
      },
    },
    async (req) => svc.history(principalOf(req), req.query),
  );

  app.get(
    '/v1/provenance/:sha',
    {
      config: { operation: 'provenance' },
      schema: {
        summary: 'Landed commit -> source branch/worktree -> session -> worker -> conversation (spec §11)',
        tags: ['lookups'],
        security: SECURITY,
        params: ProvenanceParamsSchema,
        querystring: ProvenanceQuerySchema,
        response: { 200: ProvenanceSchema, ...ERROR_RESPONSES },
      },
    },
    async (req) => svc.provenance(principalOf(req), req.params.sha, req.query.repo),
  );
}
