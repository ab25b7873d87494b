import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { WorkflowUpdateFailedError, WorkflowFailedError } from '@temporalio/client';
import { CONTINUING_AS_NEW, REASONS, type ReasonCode } from '../domain/reasons';
import { OwnershipError } from '../contract/refusal';

// The refusal type is the contract's (src/contract/refusal.ts); re-exported for the client's own callers.
export { CONTINUING_AS_NEW, OwnershipError };

function isReason(x: string | undefined | null): x is ReasonCode {
  return typeof x === 'string' && x in REASONS;
}

/** Turns Temporal's failure wrappers into OwnershipError; anything unrecognised is rethrown as is. */
/** The message of an update the server dropped unprocessed (see translateError): the client tries it again. */
export const UNPROCESSED = 'the ownership did not take the message in time; retry shortly';
/** The message of an update the server refused for the updates already in flight to the ownership: tried again briefly. */
export const IN_FLIGHT = 'too many messages in flight to this ownership; retry shortly';

/**
 * An update-with-start whose update leg the server could not admit (FAILED_PRECONDITION or ABORTED
 * under a multi-operation failure: the workflow was closing or continuing as new, its updates
 * cleared, a limit reached). Nothing was started or applied by it, so it is tried again like the
 * other seams; a bind is idempotent for its own session, so a retry cannot claim twice.
 */
export function unadmittedUpdateWithStart(err: unknown): OwnershipError | null {
  const e = (err instanceof Error && err.cause instanceof Error ? [err, err.cause] : [err]) as Array<{ code?: unknown; metadata?: unknown }>;
  const grpc = e.find((x) => typeof x?.code === 'number' && typeof x.metadata === 'object' && x.metadata !== null);
  return grpc && (grpc.code === 9 || grpc.code === 10) ? new OwnershipError('unavailable', UNPROCESSED) : null;
}

export function translateError(err: unknown): unknown {
  if (err instanceof OwnershipError) return err;
  if (err instanceof WorkflowNotFoundError) return new OwnershipError('not_found');
  // Temporal's per-run caps (signals, updates) refuse messages briefly while a run continues as new.
  if (err instanceof Error && /exceeded workflow execution limit/i.test(err.message)) {
    return new OwnershipError('unavailable', CONTINUING_AS_NEW);
  }
  // Too many updates in flight to one ownership at once: load, not a refusal; retry after a moment.
  if (err instanceof Error && /concurrent in-flight updates|resource ?exhausted/i.test(`${err.message} ${(err.cause as Error | undefined)?.message ?? ''}`)) {
    return new OwnershipError('unavailable', IN_FLIGHT);
  }
  const cause = err instanceof WorkflowUpdateFailedError || err instanceof WorkflowFailedError ? err.cause : err;
  if (cause instanceof ApplicationFailure && isReason(cause.type)) {
    const details = (cause.details?.[0] ?? undefined) as Record<string, unknown> | undefined;
    return new OwnershipError(cause.type, cause.message, details);
  }
  // The server aborted an update it had admitted (the task that carried it timed out: a worker died
  // with it, or the run closed): not applied by that attempt; the same message may be sent again.
  if (
    err instanceof Error &&
    /update (was|has been) aborted|workflow update was aborted/i.test(`${err.message} ${(err.cause as Error | undefined)?.message ?? ''}`)
  ) {
    return new OwnershipError('unavailable', UNPROCESSED);
  }
  // The task that carried the update failed on the server (a continue-as-new completed while an
  // event arrived: UnhandledCommand): the server aborts every update that task delivered, before
  // accepting it, so it was never applied; the same message goes again to the next run.
  if (err instanceof Error && /unexpected workflow task failure/i.test(`${err.message} ${(err.cause as Error | undefined)?.message ?? ''}`)) {
    return new OwnershipError('unavailable', UNPROCESSED);
  }
  // The server dropped the update before the workflow saw it (the task that carried it completed
  // without it, e.g. while a local activity held the task open): nothing happened, try again.
  if (cause instanceof ApplicationFailure && cause.type === 'UnprocessedUpdate') return new OwnershipError('unavailable', UNPROCESSED);
  return err;
}
