import { statusOf } from '../../../src/api/errors';
import type { ApiErrorCode } from '../../../src/contract/errors';
import { REASONS } from '../../../src/domain/reasons';
import type { Draft } from './draft';
import type { RawResponse } from './http';
import { errorBodyProblems, unavailableProblem } from '../../../chaos/answer-rules';

/**
 * What every answer must be, whatever was sent: no 5xx but a 503 with Retry-After (and that only
 * when a dependency is really absent), every refusal a `{code, message}` with a known code and its
 * documented status, and nothing of the request (canaries, hostile strings) or of any token echoed.
 */

const KNOWN = new Set(Object.keys(REASONS));
/** Refusals of the HTTP layer (body too large, media type, URL or headers too long) keep their status; the code is invalid_input. */
const BODY_STATUSES = new Set([400, 408, 413, 414, 415, 431]);
// eslint-disable-next-line no-control-regex
const CONTROL_OR_LONE = /[\x00-\x1f\x7f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function strings(v: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > 50) return out;
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out, depth + 1);
  else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) {
      out.push(k);
      strings(x, out, depth + 1);
    }
  return out;
}

export function problemsOf(d: Draft, res: RawResponse, secrets: readonly string[]): string[] {
  const p: string[] = [];
  const { status } = res;
  const unavailable = unavailableProblem(status, res.headers['retry-after']);
  if (unavailable) p.push(unavailable);
  if (status === 503 && !d.unknownHost) p.push('503 while every dependency is up');
  if (d.mustRefuse && status < 400) p.push(`refused-by-construction request answered ${status}`);
  for (const s of secrets) if (res.text.includes(s)) p.push('a bearer token in the response');

  const noBody = d.method === 'HEAD';
  if (status >= 400 && !noBody) {
    p.push(...errorBodyProblems(res.json, res.text, codeProblem(status)));
    const b = res.json;
    if (b && typeof b === 'object' && !Array.isArray(b)) {
      const texts = strings(b);
      for (const h of d.hostile) if (texts.some((t) => t.includes(h)) || res.text.includes(h)) p.push(`echoes the request (${JSON.stringify(h.slice(0, 40))})`);
      if (texts.some((t) => CONTROL_OR_LONE.test(t))) p.push('control characters or lone surrogates in an error body');
    }
  }
  if (status >= 200 && status < 300 && !noBody && res.text !== '' && res.json === undefined && !d.op.key.startsWith('GET /metrics'))
    p.push('2xx body is not JSON');
  return p;
}

/** A code the catalogue knows, answered with its documented status. */
const codeProblem = (status: number) => (code: string) => {
  if (!KNOWN.has(code)) return `unknown reason code ${JSON.stringify(code.slice(0, 60))}`;
  if (!statusMatches(code as ApiErrorCode, status)) return `code ${code} answered with ${status} (documented ${statusOf(code as ApiErrorCode)})`;
  return null;
};

function statusMatches(code: ApiErrorCode, status: number): boolean {
  if (statusOf(code) === status) return true;
  if (code === 'invalid_input' && BODY_STATUSES.has(status)) return true;
  return false;
}
