import type { FastifyBaseLogger, FastifyInstance, FastifyRequest, RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Operation } from '../auth/policy';
import { OwnershipError } from '../client/errors';
import type { Principal } from '../domain/identity';
import { ErrorBodySchema } from './errors';

/** Fastify wiring shared by the route modules: the typed instance, route config and request state. */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** the policy operation of the route; absent on public routes (health, metrics, docs) */
    operation?: Operation;
  }
  interface FastifyRequest {
    /** set by the auth hook on /v1 and /mcp */
    principal: Principal | null;
    /** the reason code answered, for metrics and logs */
    odCode: string | null;
  }
}

export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, ZodTypeProvider>;

export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new OwnershipError('unauthenticated');
  return req.principal;
}

/** Documented error answers of authenticated routes (the body shape is the same for all). */
export const ERROR_RESPONSES = {
  400: ErrorBodySchema,
  401: ErrorBodySchema,
  403: ErrorBodySchema,
  404: ErrorBodySchema,
  409: ErrorBodySchema,
  503: ErrorBodySchema,
} as const;

export const SECURITY = [{ bearer: [] }];
