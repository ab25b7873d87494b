import { ProvenanceSchema } from '../../contract/provenance';
import {
  GetQuerySchema,
  HistoryQuerySchema,
  HistoryResponseSchema,
  ListQuerySchema,
  ListResponseSchema,
  OwnershipItemSchema,
  ProvenanceParamsSchema,
  ProvenanceQuerySchema,
  WireRecordSchema,
} from '../../contract/http';
import { OwnershipError } from '../../contract/refusal';
import type { OwnershipItem } from '../../contract/http';
import type { OwnershipService } from '../service';
import { ERROR_RESPONSES, principalOf, SECURITY, type App } from '../http';

/** Read-only lookups and provenance (docs/operations.md), served from PostgreSQL. */
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
    '/v1/ownership/live',
    {
      config: { operation: 'get' },
      schema: {
        summary:
          'ownership.get with what only the live workflow knows: the record, its liveness and the host agent’s branch status, in one request (what `od-worktree who` shows)',
        description:
          'The same selectors and record as GET /v1/ownership; `liveness` and `branchStatus` are those of the running lifecycle (null once it is closed, or when the workflow cannot answer in time): the shape of an ownership.list item.',
        tags: ['lookups'],
        security: SECURITY,
        querystring: GetQuerySchema,
        response: { 200: OwnershipItemSchema, ...ERROR_RESPONSES },
      },
    },
    async (req): Promise<OwnershipItem> => {
      const principal = principalOf(req);
      const record = await svc.get(principal, req.query);
      // Read-only observers of the worktree (live leases only), whatever the state of its ownership.
      const observers = await svc.observersOf(principal, { hostId: record.hostId, worktreePath: record.worktreePath });
      // A closed lifecycle has no workflow to ask; its id may already run the worktree's next one.
      if (record.state === 'closed') return { ...record, liveness: null, branchStatus: null, enforcement: null, observers };
      const live = await svc.getById(principal, record.ownershipId).catch((err: unknown) => {
        if (err instanceof OwnershipError && err.code === 'not_found') return null;
        throw err;
      });
      if (!live) return { ...record, liveness: null, branchStatus: null, enforcement: null, observers };
      // One moment: the record the liveness was read beside, never the first read's (the log may have moved between the two).
      const { liveness, projectionSync, projection: _projection, enforcement, ...seen } = live;
      return { ...seen, liveness, branchStatus: projectionSync?.branch ?? null, enforcement: enforcement ?? null, observers };
    },
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
        summary: 'Landed commit -> source branch/worktree -> session -> worker -> conversation (docs/operations.md, Landing and provenance)',
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
