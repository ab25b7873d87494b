import { OwnershipError } from '../../contract/refusal';
import type { Observation } from '../../domain/binding';
import type { Principal } from '../../domain/identity';
import { heldWorkflowIdsOfWorker, recordObservation } from '../../store/bindings';
import type { ConversationReportResponse } from '../../contract/http';
import { authorizeOp, redact, withTemporal, type ServiceDeps } from './context';

/**
 * An executor reports the conversation it observed for its OWN worker (docs/identities.md, Executor binding): the binding
 * rules decide what is kept, then every active ownership of that worker is told to pick it up.
 */
export async function reportConversation(deps: ServiceDeps, principal: Principal, obs: Observation): Promise<ConversationReportResponse> {
  authorizeOp(principal, 'reportConversation');
  // Only an executor has a worker of its own to report for; nobody reports for another worker.
  if (principal.kind !== 'executor' || !principal.workerId) throw new OwnershipError('forbidden');
  const workerId = principal.workerId;
  const outcome = await recordObservation(deps.pool, { workerId, runId: principal.runId ?? null }, obs);
  if ('code' in outcome) throw new OwnershipError(outcome.code, outcome.message, outcome.details);

  const held = await heldWorkflowIdsOfWorker(deps.pool, workerId);
  let signalled = 0;
  for (const workflowId of held) {
    try {
      await withTemporal(deps, () => deps.client.conversationBound(workflowId, workerId));
      signalled++;
    } catch (err) {
      // An ownership that ended meanwhile has nothing to annotate; anything else is the caller's to retry.
      if (!(err instanceof OwnershipError && err.code === 'not_found')) throw err;
    }
  }
  const c = outcome.state.firstConversation;
  return redact(principal, {
    workerId,
    firstBound: outcome.firstBound,
    conflict: outcome.conflict,
    conversation: c
      ? { provider: c.provider, conversationId: c.conversationId, conversationUrl: c.conversationUrl, title: c.title ?? null, observedAt: c.observedAt }
      : null,
    signalled,
  });
}
