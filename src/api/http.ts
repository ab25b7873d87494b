import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Operation } from '../auth/policy';
import { OwnershipError } from '../contract/refusal';
import type { Principal } from '../domain/identity';
import { ErrorBodySchema } from '../contract/errors';
import { messageIdFor, type MessageContext } from './service/messages';

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

/** The header that carries a caller's idempotency key in, and the message id of every write out. */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const MESSAGE_ID_HEADER = 'x-od-message-id';
const IDEMPOTENCY_KEY = /^[A-Za-z0-9._:@/+-]{1,200}$/;

/**
 * The Idempotency-Key header of the write routes, as a route schema: the document lists it with
 * its pattern, and Fastify refuses a malformed one before the handler (invalid_input). Every other
 * header passes.
 */
export const MessageHeadersSchema = z.looseObject({
  [IDEMPOTENCY_KEY_HEADER]: z
    .string()
    .regex(IDEMPOTENCY_KEY)
    .optional()
    .describe('a retry of the same request is the same message (scoped to the caller); its message id is answered in x-od-message-id'),
});

/**
 * The message a write request is (src/api/service/messages.ts): its id from the caller's
 * Idempotency-Key (a retry of the same request is the same message) or a fresh one, answered in
 * x-od-message-id on every answer, refusals included. A malformed key is refused, never guessed at.
 */
export function messageOf(req: FastifyRequest, reply: FastifyReply, principal: Principal): MessageContext {
  const raw = req.headers[IDEMPOTENCY_KEY_HEADER];
  if (raw !== undefined && (typeof raw !== 'string' || !IDEMPOTENCY_KEY.test(raw)))
    throw new OwnershipError('invalid_input', undefined, { fields: ['Idempotency-Key'] });
  const messageId = messageIdFor(principal, raw);
  void reply.header(MESSAGE_ID_HEADER, messageId);
  return { messageId };
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
