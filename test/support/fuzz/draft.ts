import type { RawRequest } from './http';
import type { ApiOperation } from './openapi';
import type { RouteModel, Target } from './world';

/** One request under construction: built valid-ish, then mutated, then rendered to bytes. */
export interface Draft {
  i: number;
  op: ApiOperation;
  model: RouteModel;
  method: string;
  /** path parameter values, raw (already encoded, or deliberately not) */
  pathParams: Record<string, string>;
  /** a replacement of the whole request-target path (mutations of the route itself) */
  pathOverride: string | null;
  /** query pairs, raw (encoded, or deliberately not) */
  query: [string, string][];
  /** the body as a value (rendered with JSON.stringify), unless bodyRaw is set */
  body: unknown;
  hasBody: boolean;
  bodyRaw: Buffer | null;
  contentType: string | null;
  /** the whole authorization header value, or null for none */
  auth: string | null;
  headers: [string, string][];
  /** strings a refusal must never echo */
  hostile: string[];
  /** mutation names, in order applied */
  tags: string[];
  /** the principal the draft was built for (before any auth mutation) */
  principal: string;
  /** a seeded ownership this request is aimed at; it must be refused (unless a read) */
  seeded: Target | null;
  mustRefuse: boolean;
  /** a bind naming a host nobody serves: 503 is the honest answer */
  unknownHost: boolean;
  /** the learned ownership it is aimed at, if any */
  target: Target | null;
}

/** encodeURIComponent, except that a lone surrogate goes as the WTF-8 bytes a caller could send (it would throw). */
export function enc(s: string): string {
  return s
    .split(/([\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF])/)
    .map((part) => {
      if (part.length !== 1 || !/[\uD800-\uDFFF]/.test(part)) return encodeURIComponent(part);
      const cp = part.charCodeAt(0);
      return [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    })
    .join('');
}

export function render(d: Draft): RawRequest {
  let p = d.pathOverride ?? d.op.path.replace(/\{(\w+)\}/g, (_m, k: string) => d.pathParams[k] ?? '');
  if (d.query.length > 0) p += `?${d.query.map(([k, v]) => (v === '\u0000novalue' ? k : `${k}=${v}`)).join('&')}`;
  const headers: [string, string][] = [];
  if (d.auth !== null) headers.push(['authorization', d.auth]);
  let body: Buffer | undefined;
  if (d.bodyRaw !== null) body = d.bodyRaw;
  else if (d.hasBody) body = Buffer.from(JSON.stringify(d.body) ?? '', 'utf8');
  if (d.contentType !== null) headers.push(['content-type', d.contentType]);
  headers.push(...d.headers);
  return { method: d.method, target: p, headers, ...(body !== undefined ? { body } : {}) };
}

/** A short printable form of a request, for the report of a violation. */
export function describe(d: Draft, max = 1500): string {
  const r = render(d);
  const body = r.body ? r.body.toString('utf8') : '';
  const s = JSON.stringify({
    i: d.i,
    route: d.op.key,
    tags: d.tags,
    principal: d.principal,
    seeded: d.seeded?.id ?? null,
    method: r.method,
    target: r.target.length > 300 ? `${r.target.slice(0, 300)}…(${r.target.length})` : r.target,
    headers: r.headers.map(([k, v]) => [k, k === 'authorization' ? redactAuth(v) : v.length > 120 ? `${v.slice(0, 120)}…(${v.length})` : v]),
    body: body.length > max ? `${body.slice(0, max)}…(${body.length})` : body,
  });
  return s;
}

/** Tokens never go into a report: only their shape. */
function redactAuth(v: string): string {
  const m = /^(\S+)\s+(.*)$/s.exec(v);
  if (!m) return `<${v.length} chars>`;
  const t = m[2]!;
  return `${m[1]} <${t.length} chars${/^[A-Za-z0-9_-]+$/.test(t) ? '' : ', non-token chars'}>`;
}
