import { obj } from './answer';

/**
 * What every answer of the API must be, whoever sent what: the rules the fault run, the torture
 * run and the schema fuzz each judge answers by.
 */

/** Only a 503 (with Retry-After, so a client knows when to come back) may be a 5xx. */
export function unavailableProblem(status: number, retryAfter: string | null | undefined): string | null {
  if (status >= 500 && status !== 503) return `status ${status}`;
  if (status === 503 && !retryAfter) return '503 without Retry-After';
  return null;
}

/**
 * A refusal's body is `{code, message[, details]}` and nothing else. `codeProblem` judges the code
 * itself (known, with its documented status) where the caller knows the catalogue.
 */
export function errorBodyProblems(json: unknown, text: string, codeProblem: (code: string) => string | null = () => null): string[] {
  const b = obj(json);
  if (!b) return [`error body is not a JSON object: ${JSON.stringify(text.slice(0, 160))}`];
  const p: string[] = [];
  const extra = Object.keys(b).filter((k) => !['code', 'message', 'details'].includes(k));
  if (extra.length) p.push(`error body has keys ${extra.join(',')}`);
  if (typeof b.code !== 'string') p.push('error body without a string code');
  else {
    const c = codeProblem(b.code);
    if (c) p.push(c);
  }
  if (typeof b.message !== 'string') p.push('error body without a string message');
  if (b.details !== undefined && obj(b.details) === null) p.push('error details not an object');
  return p;
}

/** Anything a caller must never see: a stack frame, a source location, an exception's name. */
const STACKISH = /\n\s+at\s|\bat\s+\S+\s+\(|\.(?:ts|js):\d+|\b(?:TypeError|ReferenceError|SyntaxError|RangeError)\b|node_modules/;

/** The stack-like part of `text`, or null. */
export function stackLike(text: string): string | null {
  return STACKISH.exec(text)?.[0] ?? null;
}
