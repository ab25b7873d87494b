import { statusOf, type ApiErrorCode } from '../../../src/api/errors';
import { REASONS } from '../../../src/domain/reasons';
import type { Draft } from './draft';
import type { RawResponse } from './http';

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
  if (status >= 500 && status !== 503) p.push(`status ${status}`);
  if (status === 503) {
    if (!res.headers['retry-after']) p.push('503 without Retry-After');
    if (!d.unknownHost) p.push('503 while every dependency is up');
  }
  if (d.mustRefuse && status < 400) p.push(`refused-by-construction request answered ${status}`);
  for (const s of secrets) if (res.text.includes(s)) p.push('a bearer token in the response');

  const noBody = d.method === 'HEAD';
  if (status >= 400 && !noBody) {
    const b = res.json as { code?: unknown; message?: unknown; details?: unknown } | undefined;
    if (!b || typeof b !== 'object' || Array.isArray(b)) p.push(`error body is not a JSON object: ${JSON.stringify(res.text.slice(0, 160))}`);
    else {
      const extra = Object.keys(b).filter((k) => !['code', 'message', 'details'].includes(k));
      if (extra.length) p.push(`error body has keys ${extra.join(',')}`);
      if (typeof b.code !== 'string') p.push('error body without a string code');
      else if (!KNOWN.has(b.code)) p.push(`unknown reason code ${JSON.stringify(b.code.slice(0, 60))}`);
      else if (!statusMatches(b.code as ApiErrorCode, status)) p.push(`code ${b.code} answered with ${status} (documented ${statusOf(b.code as ApiErrorCode)})`);
      if (typeof b.message !== 'string') p.push('error body without a string message');
      if (b.details !== undefined && (typeof b.details !== 'object' || b.details === null || Array.isArray(b.details))) p.push('error details not an object');
      const texts = strings(b);
      for (const h of d.hostile) if (texts.some((t) => t.includes(h)) || res.text.includes(h)) p.push(`echoes the request (${JSON.stringify(h.slice(0, 40))})`);
      if (texts.some((t) => CONTROL_OR_LONE.test(t))) p.push('control characters or lone surrogates in an error body');
    }
  }
  if (status >= 200 && status < 300 && !noBody && res.text !== '' && res.json === undefined && !d.op.key.startsWith('GET /metrics')) p.push('2xx body is not JSON');
  return p;
}

function statusMatches(code: ApiErrorCode, status: number): boolean {
  if (statusOf(code) === status) return true;
  if (code === 'invalid_input' && BODY_STATUSES.has(status)) return true;
  return false;
}
