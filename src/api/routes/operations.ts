import { z } from 'zod';
import { OwnershipError } from '../../contract/refusal';
import { namesConversation, HoldParamsSchema, OwnershipParamsSchema } from '../../contract/http';
import { OPERATION_NAMES, operation, type Address, type OperationName } from '../../contract/operations';
import type { OwnershipService, ValidatedCall } from '../service';
import { ERROR_RESPONSES, MessageHeadersSchema, messageOf, principalOf, SECURITY, type App } from '../http';

/**
 * One operation as its route sees it: the table's entry, its schemas' types widened to zod's
 * objects. Fastify validates with the entry's schemas and the type provider types what they give;
 * the handler was typed against the same schemas where the table pairs them (src/api/service
 * HANDLERS, taken here as a ValidatedCall), so nothing is cast. acceptedWhen is a method, so an
 * entry's, typed by its own response, is one of this shape.
 */
interface RouteOperation {
  name: OperationName;
  method: 'POST';
  url: string;
  address: Address;
  summary: string;
  description?: string;
  body: z.ZodObject;
  response: z.ZodType;
  status: 200 | 202;
  newOwner?: boolean;
  message: 'update' | 'signal' | null;
  acceptedWhen?(out: unknown): boolean;
}

/** bind's URL addresses nothing: no parameters (the document lists none). */
const NoParamsSchema = z.strictObject({});

/**
 * The table's operations as routes (src/contract/operations.ts), in the table's order: bind, then
 * the per-ownership messages, addressed by ownershipId (its workflow found in the `ownerships` table).
 */
export function registerOperationRoutes(app: App, svc: OwnershipService): void {
  for (const name of OPERATION_NAMES) registerOperation(app, operation(name), svc.validated(name));
}

function registerOperation(app: App, o: RouteOperation, handler: ValidatedCall): void {
  const params: z.ZodObject = o.address === 'hold' ? HoldParamsSchema : o.address === 'ownership' ? OwnershipParamsSchema : NoParamsSchema;
  app.route({
    method: o.method,
    url: o.url,
    config: { operation: o.name },
    // Before schema validation: a conversation in a new owner's body gets its own reason, not unknown_field.
    ...(o.newOwner
      ? {
          preValidation: async (req: { body: unknown }) => {
            if (namesConversation(req.body)) throw new OwnershipError('conversation_forbidden');
          },
        }
      : {}),
    schema: {
      summary: o.summary,
      ...(o.description !== undefined ? { description: o.description } : {}),
      tags: ['ownerships'],
      security: SECURITY,
      params,
      // Only messages carry an Idempotency-Key (their message id); tenure and override send the workflow nothing.
      ...(o.message !== null ? { headers: MessageHeadersSchema } : {}),
      body: o.body,
      response: { [o.status]: o.response, ...(o.acceptedWhen ? { 202: o.response } : {}), ...ERROR_RESPONSES },
    },
    handler: async (req, reply) => {
      const principal = principalOf(req);
      const ctx = o.message !== null ? messageOf(req, reply, principal) : {};
      const out = await handler.call(principal, req.params, req.body, ctx);
      return reply.code(o.acceptedWhen?.(out) ? 202 : o.status).send(out);
    },
  });
}
