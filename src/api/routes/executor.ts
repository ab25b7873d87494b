import { ObservationSchema } from '../../domain/binding';
import { ConversationReportResponseSchema } from '../../contract/http';
import type { OwnershipService } from '../service';
import { ERROR_RESPONSES, principalOf, SECURITY, type App } from '../http';

/** POST /v1/executor/conversation: an executor reports the conversation it observed for its own worker. */
export function registerExecutorRoutes(app: App, svc: OwnershipService): void {
  app.post(
    '/v1/executor/conversation',
    {
      config: { operation: 'reportConversation' },
      schema: {
        summary: "Report the managed conversation observed for the caller's own worker (binding rules apply)",
        tags: ['executor'],
        security: SECURITY,
        body: ObservationSchema,
        response: { 200: ConversationReportResponseSchema, ...ERROR_RESPONSES },
      },
    },
    async (req) => svc.reportConversation(principalOf(req), req.body),
  );
}
