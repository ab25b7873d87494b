import type { ApiClient } from '../../api/client';
import { apiClient } from '../api-env';
import { cliFailureOf } from '../api-failure';
import { EXIT } from '../exit-codes';

/**
 * How a service command runs: its output (--json validated against src/contract/cli-output.ts, else the
 * human text) and its failures, each with its documented exit code: refused 1, usage 2, not found
 * 3, unreachable 4.
 */

// Loaded by the command that runs, not at start-up (src/cli/main.ts).
export const schemas = () => require('../../contract/cli-output') as typeof import('../../contract/cli-output');

export class UsageError extends Error {}
export class NotFound extends Error {}

export function api(): ApiClient {
  return apiClient();
}

/** What --json output is checked with before it is printed: a zod schema, or its plain check (../render/plain-check.ts). */
export interface OutputCheck {
  parse(value: unknown): unknown;
}

export function print(json: boolean, schema: OutputCheck, value: unknown, human: () => string): void {
  if (json) process.stdout.write(`${JSON.stringify(schema.parse(value), null, 2)}\n`);
  else process.stdout.write(`${human()}\n`);
}

/** One line on stderr, a `{ok: false, code, error}` object on stdout with --json, and the exit code. */
function fail(json: boolean, exitCode: number, code: string, message: string): void {
  // The plain check: a failure prints without loading zod either.
  const { CliErrorCheck } = require('../render/plain-check') as typeof import('../render/plain-check');
  if (json) process.stdout.write(`${JSON.stringify(CliErrorCheck.parse({ ok: false, code, error: message }), null, 2)}\n`);
  process.stderr.write(`od-worktree: ${message}\n`);
  process.exitCode = exitCode;
}

export async function run(json: boolean, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    // The service's answers, an unreachable service and a malformed OD_API_URL: ../api-failure.ts.
    const failure = cliFailureOf(err);
    if (failure) {
      fail(json, failure.exit, failure.code, failure.message);
    } else if (err instanceof UsageError) {
      fail(json, EXIT.usage, 'usage', err.message);
    } else if (err instanceof NotFound) {
      fail(json, EXIT.notFound, 'not_found', err.message);
    } else {
      throw err;
    }
  }
}
