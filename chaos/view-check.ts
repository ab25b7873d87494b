import type { OwnershipRecord } from '../src/domain/projection';
import type { AnswerSummary } from './answer';

/**
 * A 2xx view must be the log folded at the seq it answered: the same state, epoch, owner (session
 * and worker) and handoff. Null when it is; else both sides, as JSON, for the violation's message.
 */
export function viewMismatch(fold: OwnershipRecord, a: AnswerSummary): { answered: string; logged: string } | null {
  const logged = JSON.stringify({
    state: fold.state,
    epoch: fold.epoch,
    ownerSession: fold.owner?.executionSessionId ?? null,
    ownerWorker: fold.worker?.workerId ?? null,
    handoffId: fold.handoff?.handoffId ?? null,
  });
  const answered = JSON.stringify({
    state: a.state,
    epoch: a.epoch,
    ownerSession: a.ownerSession ?? null,
    ownerWorker: a.ownerWorker ?? null,
    handoffId: a.handoffId ?? null,
  });
  return logged === answered ? null : { answered, logged };
}
