import { Metadata, status } from '@grpc/grpc-js';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { IN_FLIGHT, OwnershipError, translateError, unadmittedUpdateWithStart, UNPROCESSED } from '../../src/client/errors';

/**
 * How the client reads Temporal's failures: a refusal keeps its reason code, a seam between runs
 * or a server that could not admit the message is `unavailable` with the message the client
 * retries on (src/client/index.ts throughContinueAsNew).
 */

/** A gRPC ServiceError as grpc-js builds it (and the Temporal SDK rethrows it). */
function grpcError(code: number, message: string): Error & { code: number; metadata: Metadata; details: string } {
  return Object.assign(new Error(`${code} ${status[code]}: ${message}`), { code, metadata: new Metadata(), details: message });
}

describe('translateError', () => {
  test('a workflow refusal keeps its reason code and details', () => {
    const cause = ApplicationFailure.create({
      type: 'worktree_owned',
      message: 'owned',
      nonRetryable: true,
      details: [{ owner: { executionSessionId: 's1' } }],
    });
    const err = translateError(new WorkflowUpdateFailedError('Workflow Update failed', cause));
    expect(err).toBeInstanceOf(OwnershipError);
    expect((err as OwnershipError).code).toBe('worktree_owned');
    expect((err as OwnershipError).details).toEqual({ owner: { executionSessionId: 's1' } });
  });

  test('the in-flight update limit is unavailable with the message the client retries', () => {
    const err = translateError(grpcError(status.RESOURCE_EXHAUSTED, 'limit on number of concurrent in-flight updates has been reached (10)'));
    expect(err).toBeInstanceOf(OwnershipError);
    expect((err as OwnershipError).code).toBe('unavailable');
    expect((err as OwnershipError).message).toBe(IN_FLIGHT);
  });

  test('an update aborted because the task that carried it failed on the server was never applied: unavailable, retried', () => {
    // Seen in CI: a continue-as-new task failed (UnhandledCommand) with a bindPlan in it.
    const err = translateError(grpcError(status.FAILED_PRECONDITION, 'Unable to perform workflow execution update due to unexpected workflow task failure.'));
    expect(err).toBeInstanceOf(OwnershipError);
    expect((err as OwnershipError).code).toBe('unavailable');
    expect((err as OwnershipError).message).toBe(UNPROCESSED);
    // Any other precondition failure is not this seam.
    const other = grpcError(status.FAILED_PRECONDITION, 'something else entirely');
    expect(translateError(other)).toBe(other);
  });

  test('an unknown failure is passed through, not guessed', () => {
    const raw = new Error('something else');
    expect(translateError(raw)).toBe(raw);
  });
});

describe('unadmittedUpdateWithStart', () => {
  // Seen in a CI run of 200 concurrent binds: "9 FAILED_PRECONDITION: Update-with-Start could not be executed."
  test.each([status.FAILED_PRECONDITION, status.ABORTED])('gRPC code %i from update-with-start is a seam, retried', (code) => {
    const err = unadmittedUpdateWithStart(grpcError(code, 'Update-with-Start could not be executed.'));
    expect(err?.code).toBe('unavailable');
    expect(err?.message).toBe(UNPROCESSED);
  });

  test('also when the SDK wrapped the gRPC error', () => {
    const wrapped = new Error('Update-With-Start failed', { cause: grpcError(status.FAILED_PRECONDITION, 'x') });
    expect(unadmittedUpdateWithStart(wrapped)?.message).toBe(UNPROCESSED);
  });

  test.each([status.NOT_FOUND, status.INVALID_ARGUMENT, status.PERMISSION_DENIED])('gRPC code %i is not a seam', (code) => {
    expect(unadmittedUpdateWithStart(grpcError(code, 'no'))).toBeNull();
  });

  test('an error without gRPC shape is not a seam', () => {
    expect(unadmittedUpdateWithStart(Object.assign(new Error('x'), { code: 9 }))).toBeNull();
  });
});
