import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBodySchema, REASON_HTTP_STATUS } from '../contract/errors';
import type { App } from './http';

/**
 * The OpenAPI document, generated from the routes' zod schemas (the same ones that validate), served
 * at /openapi.json, with a docs page at /docs. Both are public: they describe, they do not answer.
 *
 * It says what the API enforces: every check of a request is a pattern, a length, a bound or a
 * combination the document states (a client generating requests from it gets past validation),
 * and every status the server can answer is listed on every operation it can answer it for, each
 * with the reason codes it carries.
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
        { name: 'observers', description: 'read-only observers of a worktree: listed by who, never owners (docs/http-api.md, Observers)' },
        { name: 'worktrees', description: 'lossless removal of a worktree by its host agent (docs/cleanup.md, Through the API)' },
        { name: 'reconciliations', description: 'what od-worktree reconcile found and did; the calling principal' },
        { name: 'system', description: 'health' },
      ],
    },
    transform: (route) => selectorAsOneParameter(jsonSchemaTransform(route)),
    // Only an OpenAPI document is configured (never Swagger 2): it is the one this hook gets.
    transformObject: (d) => withEveryAnswer(('openapiObject' in d ? d.openapiObject : {}) as OpenApiDoc),
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs', staticCSP: true });
}

type Json = Record<string, unknown>;
type Transformed = ReturnType<typeof jsonSchemaTransform>;

/**
 * A query whose parameters combine (exactly one selector: GET /v1/ownership, /v1/history) is one
 * form-exploded object parameter whose schema says so (`oneOf`): OpenAPI 3.0 cannot relate
 * separate parameters. On the wire it is the same query string (`?branch=x&repoRoot=/r`).
 */
function selectorAsOneParameter(t: Transformed): Transformed {
  const qs = (t.schema as { querystring?: Json } | undefined)?.querystring;
  if (!qs || !Array.isArray(qs.oneOf)) return t;
  const { description, ...selector } = qs;
  return {
    ...t,
    schema: {
      ...t.schema,
      querystring: {
        type: 'object',
        properties: { selector: { ...selector, description: description ?? 'the query parameters, as one object' } },
        required: ['selector'],
        style: 'form',
        explode: true,
      },
    },
  };
}

type Operation = { requestBody?: unknown; responses?: Record<string, unknown>; security?: unknown[] };
type OpenApiDoc = { paths?: Record<string, Record<string, Operation>> } & Json;

/** Statuses the HTTP layer answers before any route runs (src/server/app.ts), on every operation. */
const TRANSPORT: Record<number, string> = {
  400: 'the request could not be read (bad percent-escapes, control bytes in a header) or was refused',
  404: 'no such route, or no such ownership',
  408: 'the request did not arrive in time',
  414: 'a path parameter too long to route',
  431: 'the request line or headers are too large: an over-long query string too',
  500: 'a bug of the service, never a refusal: code `internal`, a fixed message, nothing of the request',
};
/** And on operations with a body. */
const BODY: Record<number, string> = {
  413: 'the body is larger than 64 KiB',
  415: 'the body is not JSON (Content-Type application/json)',
};
/** And on authenticated operations (the bearer token, the policy, the backing services). */
const SECURED: Record<number, string> = {
  401: 'no bearer token, or an unknown one (WWW-Authenticate: Bearer)',
  403: 'the principal may not perform this operation',
  503: 'a backing service (or the worktree’s host) did not answer in time: retry after Retry-After seconds',
};

/** Statuses a route lists itself. */
const ROUTE: Record<number, string> = { 409: 'refused by the state of the ownership, the worktree or the binding' };

const errorBodyJson = z.toJSONSchema(ErrorBodySchema, { target: 'openapi-3.0', io: 'output' }) as Json;

/** The reason codes answered with `status`: `invalid_input` alone for what the HTTP layer refuses. */
function codesOf(status: number): string[] {
  if ([408, 413, 414, 415, 431].includes(status)) return ['invalid_input'];
  return Object.entries(REASON_HTTP_STATUS)
    .filter(([, s]) => s === status)
    .map(([code]) => code);
}

function errorResponse(status: number, description: string): Json {
  const codes = codesOf(status);
  const properties = (errorBodyJson.properties ?? {}) as Json;
  const schema = {
    ...errorBodyJson,
    properties: { ...properties, code: { type: 'string', enum: codes, description: 'a stable reason code (docs/reason-codes.md)' } },
  };
  const headers = status === 503 ? { 'Retry-After': { description: 'seconds', schema: { type: 'integer', minimum: 1 } } } : undefined;
  return { description: `${description}. Codes: ${codes.join(', ')}`, ...(headers ? { headers } : {}), content: { 'application/json': { schema } } };
}

/**
 * Every status an operation can answer, each with the error body and the codes it carries: the
 * route's own (400, 404, 409, ...) keep their place and get the codes; what the HTTP layer answers
 * (408, 413, 414, 415, 431, 500) is added. 409 only where a route lists it.
 */
function withEveryAnswer(doc: OpenApiDoc): OpenApiDoc {
  for (const methods of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(methods)) {
      const responses = (op.responses ??= {});
      const wanted: Record<number, string> = { ...TRANSPORT, ...(op.requestBody ? BODY : {}), ...(op.security?.length ? SECURED : {}) };
      for (const status of Object.keys(responses).map(Number)) if (status >= 400 && !(status in wanted)) wanted[status] = ROUTE[status] ?? 'refused';
      // /healthz answers its own report with 503, not an error body.
      for (const [status, description] of Object.entries(wanted)) {
        if (status === '503' && !op.security?.length) continue;
        responses[status] = errorResponse(Number(status), description);
      }
    }
  }
  return doc;
}
