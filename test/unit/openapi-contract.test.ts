import { RemoveWorktreeBodySchema } from '../../src/contract/removal';
import fc from 'fast-check';
import { LeaveObserveBodySchema, ObserveBodySchema } from '../../src/contract/observers';
import type { z } from 'zod';
import { buildServer } from '../../src/server/app';
import { MessageHeadersSchema } from '../../src/api/http';
import {
  AcceptHandoffBodySchema,
  BindBodySchema,
  CancelHandoffBodySchema,
  GetQuerySchema,
  HandoffBodySchema,
  HeartbeatBodySchema,
  HistoryQuerySchema,
  LandedBodySchema,
  LandingBodySchema,
  ListQuerySchema,
  OverrideBodySchema,
  OwnershipParamsSchema,
  PlanBodySchema,
  GrantHoldBodySchema,
  HoldHeartbeatBodySchema,
  EndHoldBodySchema,
  HoldParamsSchema,
  ProvenanceParamsSchema,
  ProvenanceQuerySchema,
  ReclaimBodySchema,
  ReleaseBodySchema,
  RenameBranchBodySchema,
  SubmitBodySchema,
  TenureBodySchema,
  WorktreeRemovedBodySchema,
} from '../../src/contract/http';
import { ReconciliationBodySchema } from '../../src/contract/reconcile';
import { REASONS } from '../../src/domain/reasons';
import { ObservationSchema } from '../../src/domain/binding';
import { ScanInputSchema } from '../../src/landings/scan';
import { loadConfig } from '../../src/config';
import { caseArb, DocJudge, withoutLookarounds, type DocCase } from '../support/fuzz/from-schema';
import { mutate } from '../support/fuzz/doc-run';
import { operationsOf, type ApiOperation, type JsonSchema } from '../support/fuzz/openapi';
import { Rng } from '../../chaos/rng';

/**
 * The OpenAPI document says what the API enforces, checked without the stack: the document is the
 * server's own (built with stand-ins for Temporal and PostgreSQL, which describing never calls).
 * Cases generated from the document, and the same cases given boundary values, are judged by Ajv
 * against the document and by the route's zod schema: the two agree. Every string a request can
 * carry is bounded by a pattern that refuses NUL and control characters, every time is one
 * PostgreSQL and JavaScript hold, and every status the server can answer is listed.
 */

let ops: ApiOperation[];

beforeAll(async () => {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', OD_HOST_ID: 'unit', OD_TOKENS_FILE: '', OD_ALLOWED_ROOTS: '/tmp', OD_PAYLOAD_KEY_FILE: '' });
  const stand = {} as never;
  const app = await buildServer({ config, temporal: stand, client: stand, pool: stand, authenticator: { authenticate: () => null } as never });
  await app.ready();
  ops = operationsOf(app.swagger());
  await app.close();
});

type Parts = { body?: z.ZodType; query?: z.ZodType; params?: z.ZodType; headers?: z.ZodType };
const own = (body: z.ZodType): Parts => ({ body, params: OwnershipParamsSchema, headers: MessageHeadersSchema });
/** The zod schemas each route validates with (src/api/routes). */
const ROUTES: Record<string, Parts> = {
  'POST /v1/bind': { body: BindBodySchema, headers: MessageHeadersSchema },
  'POST /v1/ownerships/{id}/heartbeat': own(HeartbeatBodySchema),
  'POST /v1/ownerships/{id}/handoff': own(HandoffBodySchema),
  'POST /v1/ownerships/{id}/handoff/accept': own(AcceptHandoffBodySchema),
  'POST /v1/ownerships/{id}/handoff/cancel': own(CancelHandoffBodySchema),
  'POST /v1/ownerships/{id}/release': own(ReleaseBodySchema),
  'POST /v1/ownerships/{id}/reclaim': own(ReclaimBodySchema),
  'POST /v1/ownerships/{id}/submit': own(SubmitBodySchema),
  'POST /v1/ownerships/{id}/plan': own(PlanBodySchema),
  'POST /v1/ownerships/{id}/holds': own(GrantHoldBodySchema),
  'POST /v1/ownerships/{id}/holds/{holdId}/heartbeat': { body: HoldHeartbeatBodySchema, params: HoldParamsSchema, headers: MessageHeadersSchema },
  'POST /v1/ownerships/{id}/holds/{holdId}/end': { body: EndHoldBodySchema, params: HoldParamsSchema, headers: MessageHeadersSchema },
  'POST /v1/ownerships/{id}/rename-branch': own(RenameBranchBodySchema),
  'POST /v1/ownerships/{id}/landed': own(LandedBodySchema),
  'POST /v1/ownerships/{id}/worktree-removed': own(WorktreeRemovedBodySchema),
  'POST /v1/ownerships/{id}/tenure': { body: TenureBodySchema, params: OwnershipParamsSchema },
  'POST /v1/ownerships/{id}/override': { body: OverrideBodySchema, params: OwnershipParamsSchema },
  'GET /v1/ownerships/{id}': { params: OwnershipParamsSchema },
  'POST /v1/landings': { body: LandingBodySchema },
  'POST /v1/landings/scan': { body: ScanInputSchema },
  'POST /v1/executor/conversation': { body: ObservationSchema },
  'GET /v1/ownership': { query: GetQuerySchema },
  'GET /v1/ownership/live': { query: GetQuerySchema },
  'GET /v1/ownerships': { query: ListQuerySchema },
  'GET /v1/history': { query: HistoryQuerySchema },
  'GET /v1/provenance/{sha}': { params: ProvenanceParamsSchema, query: ProvenanceQuerySchema },
  'POST /v1/reconciliations': { body: ReconciliationBodySchema },
  'POST /v1/worktrees/observers': { body: ObserveBodySchema },
  'DELETE /v1/worktrees/observers': { body: LeaveObserveBodySchema },
  'POST /v1/worktrees/remove': { body: RemoveWorktreeBodySchema },
  'GET /v1/principal': {},
  'GET /healthz': {},
};

/** The query as the server's parser hands it over: strings, a repeated key an array, an exploded object its keys. */
function wireQuery(op: ApiOperation, q: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const str = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
  const put = (k: string, v: unknown) => (out[k] = Array.isArray(v) ? (v.length === 1 ? str(v[0]) : v.map(str)) : str(v));
  for (const [k, v] of Object.entries(q)) {
    const p = op.query.find((x) => x.name === k);
    if (p?.explode !== false && p?.schema.type === 'object' && v && typeof v === 'object') for (const [kk, vv] of Object.entries(v)) put(kk, vv);
    else put(k, v);
  }
  return out;
}

/** Checks the document states beside the schema that the handler makes (resolveWorker: `worker` beside `workerId` or `runId`). */
function handlerRefuses(key: string, c: DocCase): boolean {
  const b = c.body as Record<string, unknown> | undefined;
  return /\/bind$|\/accept$|\/reclaim$/.test(key) && !!b && typeof b === 'object' && 'worker' in b && ('workerId' in b || 'runId' in b);
}

test('the document and the schemas agree: what one accepts the other accepts, boundary values included', () => {
  const judge = new DocJudge();
  const disagreements: string[] = [];
  let judged = 0;
  for (const op of ops) {
    const parts = ROUTES[op.key];
    expect({ op: op.key, known: parts !== undefined }).toEqual({ op: op.key, known: true });
    const cases = fc.sample(caseArb(op), { seed: 7, numRuns: 150 });
    cases.forEach((c, j) => {
      if (j % 2 === 1) mutate(op, c, Rng.forRequest(7, j));
      const verdicts: [string, boolean, boolean][] = [];
      if (op.body) verdicts.push(['body', judge.check(op.body, c.body), parts!.body!.safeParse(c.body).success && !handlerRefuses(op.key, c)]);
      if (op.query.length) {
        const docOk =
          Object.keys(c.query).every((k) => op.query.some((p) => p.name === k)) &&
          op.query.every((p) => (c.query[p.name] === undefined ? !p.required : judge.check(p.schema, c.query[p.name])));
        verdicts.push(['query', docOk, parts!.query!.safeParse(wireQuery(op, c.query)).success]);
      }
      if (op.pathParams.length)
        verdicts.push(['path', op.pathParams.every((p) => judge.check(p.schema, c.path[p.name])), parts!.params!.safeParse(c.path).success]);
      if (op.headers.length)
        verdicts.push([
          'headers',
          op.headers.every((p) => c.headers[p.name] === undefined || judge.check(p.schema, c.headers[p.name])),
          parts!.headers!.safeParse(c.headers).success,
        ]);
      for (const [part, doc, server] of verdicts) {
        judged++;
        if (doc !== server)
          disagreements.push(
            `${op.key} ${part}: document ${doc ? 'accepts' : 'refuses'}, schema ${server ? 'accepts' : 'refuses'}: ${JSON.stringify(c).slice(0, 300)}`,
          );
      }
    });
  }
  expect(judged).toBeGreaterThan(2_000);
  expect(disagreements.slice(0, 10)).toEqual([]);
});

/** Every string leaf of a request schema, with where it is. */
function strings(s: JsonSchema | undefined, where: string, out: [string, JsonSchema][] = []): [string, JsonSchema][] {
  if (!s) return out;
  if (s.type === 'string') out.push([where, s]);
  for (const [k, v] of Object.entries(s.properties ?? {})) strings(v, `${where}.${k}`, out);
  if (s.items) strings(s.items, `${where}[]`, out);
  return out;
}

test('every string a request can carry is bounded by a pattern (or an enum) that refuses NUL and control characters', () => {
  const loose: string[] = [];
  for (const op of ops) {
    const leaves = [
      ...op.pathParams.flatMap((p) => strings(p.schema, `${op.key} path.${p.name}`)),
      ...op.query.flatMap((p) => strings(p.schema, `${op.key} query.${p.name}`)),
      ...op.headers.flatMap((p) => strings(p.schema, `${op.key} header.${p.name}`)),
      ...strings(op.body ?? undefined, `${op.key} body`),
    ];
    for (const [where, s] of leaves) {
      if (s.enum) continue;
      if (!s.pattern || (s.maxLength === undefined && !/\{\d+,?\d*\}\$$|\{\d+\}/.test(s.pattern))) {
        loose.push(`${where}: ${s.pattern ? 'no bound' : 'no pattern'}`);
        continue;
      }
      const re = new RegExp(s.pattern, 'u');
      const sample = fc.sample(fc.stringMatching(new RegExp(withoutLookarounds(s.pattern), 'u')), { seed: 3, numRuns: 50 }).find((x) => re.test(x));
      if (sample === undefined) {
        loose.push(`${where}: no value of its pattern found to try`);
        continue;
      }
      for (const bad of ['\u0000', '\u0001', '\u001b', '\n', '\u007f']) {
        const cps = [...sample];
        cps.splice(Math.floor(cps.length / 2), 0, bad);
        if (re.test(cps.join(''))) loose.push(`${where}: accepts ${JSON.stringify(bad)}`);
      }
    }
  }
  expect(loose).toEqual([]);
});

const SHA = 'abcdef1'.padEnd(40, '0');
const TIME_FIELDS: [string, (t: string) => unknown][] = [
  ['landing receipt landedAt', (t) => LandedBodySchema.safeParse({ sourceHead: SHA, landedBranch: 'main', landedHead: SHA, landedAt: t })],
  [
    'observation observedAt',
    (t) =>
      ObservationSchema.safeParse({
        executor: 'e',
        executorInstanceId: 'i',
        sessionGeneration: 'g',
        sequence: 1,
        conversation: {
          conversationId: '5d0c2a8e-1f3b-4c6d-8e9f-0a1b2c3d4e5f',
          conversationUrl: 'https://chatgpt.com/c/5d0c2a8e-1f3b-4c6d-8e9f-0a1b2c3d4e5f',
          observedAt: t,
        },
      }),
  ],
  [
    'reconciliation at',
    (t) =>
      ReconciliationBodySchema.safeParse({
        worktreePath: '/w',
        kind: 'stale',
        reason: null,
        repaired: false,
        ownershipId: null,
        localOwnershipId: null,
        localSeq: null,
        durableSeq: null,
        provisional: null,
        at: t,
      }),
  ],
];
const PG_MIN = Date.UTC(1969, 11, 31, 0, 0, 0);
const PG_JS_MAX = Date.UTC(9999, 0, 1, 14, 0, 0);

test('every time a request can carry is one JavaScript and PostgreSQL hold, stored in UTC with a four-digit year', () => {
  // RFC 3339-shaped strings well beyond what is accepted: years 0000-9999, offsets to ±23:59, long fractions.
  const loose = fc.stringMatching(/^\d{4}-(0\d|1[0-2])-([0-2]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,12})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/);
  const odd = fc.constantFrom(
    '0482-11-18T11:30:45.3-16:42',
    '0000-01-01T00:00:00Z',
    '1969-12-31T23:59:59Z',
    '1970-01-01T00:00:00+14:00',
    '9998-12-31T23:59:59-14:00',
    '9999-12-31T23:59:59Z',
    '2026-01-01T00:00:00+14:01',
  );
  const wrong: string[] = [];
  for (const [field, parse] of TIME_FIELDS) {
    for (const t of fc.sample(fc.oneof(loose, odd), { seed: 11, numRuns: 3_000 })) {
      const r = parse(t) as { success: boolean };
      if (!r.success) continue;
      const ms = Date.parse(t);
      const offset = /([+-])(\d\d):(\d\d)$/.exec(t);
      const offsetMin = offset ? Number(offset[2]) * 60 + Number(offset[3]) : 0;
      const normal = Number.isFinite(ms) ? new Date(ms).toISOString() : 'NaN';
      if (!(ms >= PG_MIN && ms <= PG_JS_MAX) || offsetMin > 14 * 60 || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(normal) || Number(t.slice(0, 4)) < 1970)
        wrong.push(`${field}: ${t}`);
    }
  }
  expect(wrong.slice(0, 10)).toEqual([]);
  // Normalised: an offset becomes UTC.
  expect(
    (LandedBodySchema.parse({ sourceHead: SHA, landedBranch: 'main', landedHead: SHA, landedAt: '2026-03-01T12:00:00.5+05:45' }) as { landedAt: string })
      .landedAt,
  ).toBe('2026-03-01T06:15:00.500Z');
});

test('a leap day is accepted exactly in leap years, 1970 to 9998', () => {
  const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const wrong: number[] = [];
  for (let y = 1970; y <= 9998; y++) {
    const ok = LandedBodySchema.safeParse({
      sourceHead: SHA,
      landedBranch: 'main',
      landedHead: SHA,
      landedAt: `${String(y).padStart(4, '0')}-02-29T00:00:00Z`,
    }).success;
    if (ok !== leap(y)) wrong.push(y);
  }
  expect(wrong).toEqual([]);
});

test('every operation lists every status the server can answer, each with the reason codes it carries', () => {
  const missing: string[] = [];
  for (const op of ops) {
    const want = [400, 404, 408, 414, 431, 500, ...(op.body ? [413, 415] : []), ...(op.secured ? [401, 403, 503] : [])];
    for (const status of want) {
      const codes = op.responses[String(status)]?.content?.['application/json']?.schema?.properties?.code?.enum as string[] | undefined;
      if (!codes?.length) missing.push(`${op.key} ${status}`);
      else for (const c of codes) if (!(c in REASONS) && c !== 'internal') missing.push(`${op.key} ${status}: unknown code ${c}`);
    }
  }
  expect(missing).toEqual([]);
});
