import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import type { App } from './http';

/**
 * The OpenAPI document, generated from the routes' zod schemas (the same ones that validate), served
 * at /openapi.json, with a docs page at /docs. Both are public: they describe, they do not answer.
 */
export async function registerOpenApi(app: App): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Worktree ownership service',
        version: '1.0.0',
        description:
          'Who owns a git worktree, who may mutate it now, and what happened to that ownership. Errors are `{code, message}` with a stable reason code; a 503 carries Retry-After.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      tags: [
        { name: 'ownerships', description: 'bind and per-ownership messages' },
        { name: 'landings', description: 'landing receipts (docs/events.md, Landing receipts)' },
        { name: 'executor', description: 'executor binding (docs/identities.md, Executor binding)' },
        { name: 'lookups', description: 'read-only lookups from PostgreSQL (docs/operations.md, Lookups)' },
        { name: 'reconciliations', description: 'what od-worktree reconcile found and did; the calling principal' },
        { name: 'system', description: 'health' },
      ],
    },
    transform: jsonSchemaTransform,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs', staticCSP: true });
}
