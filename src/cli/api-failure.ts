import { ApiError, ApiUnreachableError, ApiUrlError } from '../api/client';
import { devTokensFile } from './api-env';
import { EXIT } from './exit-codes';

/**
 * What a failed call to the ownership service means for a person at a terminal: the exit code
 * (docs/cli.md), the code for --json, and one line that says what to do about it: the fields
 * the service refused, where the dev tokens are, which URL did not answer.
 */
export interface CliFailure {
  exit: number;
  code: string;
  message: string;
}

export function exitForStatus(status: number): number {
  if (status === 400 || status === 413 || status === 415) return EXIT.usage;
  if (status === 401 || status === 403 || status === 409) return EXIT.refused;
  if (status === 404) return EXIT.notFound;
  if (status === 503) return EXIT.unreachable;
  return EXIT.internal;
}

function fieldsOf(err: ApiError): string {
  const fields = err.body.details?.fields;
  return Array.isArray(fields) && fields.length > 0 ? ` (fields: ${fields.map(String).join(', ')})` : '';
}

function hintFor(err: ApiError, env: NodeJS.ProcessEnv): string {
  if (err.status === 503) return ' (retry shortly)';
  if (err.status === 401) {
    const where = `\`npm start\` keeps its dev tokens in ${devTokensFile(env)} (tokens.executor to act, tokens.reader to look)`;
    return env.OD_TOKEN ? ` (OD_TOKEN is not a token this service knows; ${where})` : ` (OD_TOKEN is not set: set it to a bearer token; ${where})`;
  }
  if (err.code === 'forbidden') return ' (the principal of OD_TOKEN may not do this)';
  return '';
}

/** null: not a failure of the service call (the caller handles or rethrows it). */
export function cliFailureOf(err: unknown, env: NodeJS.ProcessEnv = process.env): CliFailure | null {
  if (err instanceof ApiUrlError) return { exit: EXIT.usage, code: 'usage', message: err.message };
  if (err instanceof ApiUnreachableError) {
    return { exit: EXIT.unreachable, code: 'unreachable', message: `the ownership service is unreachable at ${err.baseUrl} (is it running? set OD_API_URL)` };
  }
  if (err instanceof ApiError)
    return { exit: exitForStatus(err.status), code: err.code, message: `${err.code}: ${err.body.message}${fieldsOf(err)}${hintFor(err, env)}` };
  return null;
}
