import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { WorkflowUpdateFailedError, WorkflowFailedError } from '@temporalio/client';
import { REASONS, type ReasonCode } from '../domain/reasons';

/** Every refusal a caller sees: a stable reason code, a fixed message and safe details. */
export class OwnershipError extends Error {
  constructor(
    readonly code: ReasonCode,
    message?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message ?? REASONS[code]);
    this.name = 'OwnershipError';
  }
}

function isReason(x: string | undefined | null): x is ReasonCode {
  return typeof x === 'string' && x in REASONS;
}

/** Turns Temporal's failure wrappers into OwnershipError; anything unrecognised is rethrown as is. */
export function translateError(err: unknown): unknown {
  if (err instanceof OwnershipError) return err;
  if (err instanceof WorkflowNotFoundError) return new OwnershipError('not_found');
  // Temporal's per-run caps (signals, updates) refuse messages briefly while a run continues as new.
  if (err instanceof Error && /exceeded workflow execution limit/i.test(err.message)) {
    return new OwnershipError('unavailable', 'the ownership is continuing as new; retry shortly');
  }
  const cause = err instanceof WorkflowUpdateFailedError || err instanceof WorkflowFailedError ? err.cause : err;
  if (cause instanceof ApplicationFailure && isReason(cause.type)) {
    const details = (cause.details?.[0] ?? undefined) as Record<string, unknown> | undefined;
    return new OwnershipError(cause.type, cause.message, details);
  }
  return err;
}
