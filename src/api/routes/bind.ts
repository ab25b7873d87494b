import { OwnershipError } from '../../client/errors';
import { BindBodySchema, ClaimResponseSchema, namesConversation } from '../../contract/http';
import type { OwnershipService } from '../service';
import { ERROR_RESPONSES, MessageHeadersSchema, messageOf, principalOf, SECURITY, type App } from '../http';

/** POST /v1/bind: ownership.bind (docs/operations.md, Bind). */
export function registerBindRoutes(app: App, svc: OwnershipService): void {
  app.post(
    '/v1/bind',
    {
      config: { operation: 'bind' },
      // Before schema validation: a conversation in the body gets its own reason, not unknown_field.
      preValidation: async (req) => {
        if (namesConversation(req.body)) throw new OwnershipError('conversation_forbidden');
      },
      schema: {
        summary: 'Bind a worktree to the calling session (update-with-start; replays return the same ownership)',
        tags: ['ownerships'],
        security: SECURITY,
        headers: MessageHeadersSchema,
        body: BindBodySchema,
        response: { 200: ClaimResponseSchema, ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      return svc.bind(principal, req.body, messageOf(req, reply, principal));
    },
  );
}
