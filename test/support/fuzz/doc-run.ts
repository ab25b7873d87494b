import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Pool } from 'pg';
import fc from 'fast-check';
import { REASONS } from '../../../src/domain/reasons';
import { caseArb, DocJudge, targetOf, type DocCase } from './from-schema';
import { send, type RawResponse } from './http';
import type { ApiOperation, JsonSchema } from './openapi';
import { Rng } from '../../../chaos/rng';
import { mayCall, routeModel, snapshotOwnership, type FuzzPrincipal, type World } from './world';

/**
 * The document-driven fuzz: for every operation of /openapi.json, cases generated from its JSON
 * schemas (from-schema.ts), half of them then given a boundary or hostile value (NUL, control
 * characters, lone surrogates, huge and unicode strings, odd dates, edge numbers, wrong types,
 * missing and unknown properties). Ajv judges each case against the document; the server must:
 *
 *  - never answer 5xx (every dependency is up);
 *  - answer every 4xx with a reason code of docs/reason-codes.md, one the document lists for that
 *    status on that operation;
 *  - refuse every case the document says is invalid as malformed (400, or the HTTP layer's 413,
 *    414, 415, 431): a check the document states is a check the server makes;
 *  - refuse almost no case the document says is valid as malformed (invalid_input, unknown_field):
 *    the share per operation is measured, and above `maxMalformedShare` the document is looser
 *    than the checks;
 *  - change nothing for a documented-invalid case (sent last, many aimed at the seeded ownerships).
 *
 * Deterministic: case j of operation k is the same for a seed whatever the concurrency did.
 */

export interface DocFuzzOptions {
  seed: number;
  casesPerOperation: number;
  concurrency: number;
  timeoutMs: number;
  /** the share of documented-valid cases an operation may refuse as malformed */
  maxMalformedShare: number;
}

export interface DocCaseResult {
  op: string;
  valid: boolean;
  tags: string[];
  status: number | null;
  code: string | null;
  request: string;
  response: string;
}

export interface OperationTally {
  valid: number;
  /** documented-valid, answered invalid_input or unknown_field */
  malformed: number;
  /** documented-valid, refused by the HTTP layer (431: a long query) */
  transport: number;
  invalid: number;
  /** generated per the document, but Ajv disagreed (a lookaround the generator ignored): not sent as valid */
  misses: number;
  byStatus: Record<string, number>;
}

export interface DocFuzzResult {
  perOperation: Record<string, OperationTally>;
  violations: { problem: string; example: DocCaseResult }[];
  changed: unknown[];
  wallMs: number;
  summary: string;
}

/** The codes docs/reason-codes.md lists (its table's first column). */
export function documentedCodes(root = path.resolve(__dirname, '../../..')): Set<string> {
  const md = readFileSync(path.join(root, 'docs/reason-codes.md'), 'utf8');
  return new Set([...md.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]!));
}

// --- values a careful generator still sends --------------------------------------------------------

const ODD_DATES = [
  '0482-11-18T11:30:45.3-16:42',
  '0000-01-01T00:00:00Z',
  '1969-12-31T23:59:59Z',
  '1970-01-01T00:00:00+14:00',
  '9998-12-31T23:59:59.999999999-14:00',
  '9999-12-31T23:59:59Z',
  '2021-02-29T00:00:00Z',
  '2024-02-29T12:00:00+05:45',
  '2026-01-01T24:00:00Z',
  '2026-01-01T00:00:60Z',
  '2026-01-01t00:00:00z',
  '2026-01-01T00:00:00.1234567890Z',
  '+002026-01-01T00:00:00Z',
  '2026-01-01T00:00:00+14:01',
  '2026-01-01T00:00:00-00:00',
  '2026-01-01 00:00:00Z',
];
const UNICODE = ['😀', 'e\u0301', '\u202e', '\u200b', '\ufeff', '\uffff', '\u2028', '\u00a0', '𝔘', '中文', '\u0600', 'İ'];
const EDGE_NUMBERS = [0, -1, 1, 2 ** 31 - 1, 2 ** 31, 2 ** 53 - 1, 2 ** 53 + 2, 1e21, 1.5, -0, 1e308];

type Leaf = { get: () => unknown; set: (v: unknown) => void; schema: JsonSchema | undefined; where: string };

function leavesOf(value: unknown, schema: JsonSchema | undefined, where: string, set: (v: unknown) => void, out: Leaf[]): void {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const k of Object.keys(value)) {
      const obj = value as Record<string, unknown>;
      leavesOf(obj[k], schema?.properties?.[k], `${where}.${k}`, (v) => (obj[k] = v), out);
    }
    return;
  }
  out.push({ get: () => value, set, schema, where });
}

function leaves(op: ApiOperation, c: DocCase): Leaf[] {
  const out: Leaf[] = [];
  for (const p of op.pathParams)
    if (c.path[p.name] !== undefined)
      out.push({ get: () => c.path[p.name], set: (v) => (c.path[p.name] = String(v)), schema: p.schema, where: `path.${p.name}` });
  for (const p of op.query) if (c.query[p.name] !== undefined) leavesOf(c.query[p.name], p.schema, `query.${p.name}`, (v) => (c.query[p.name] = v), out);
  // What HTTP carries of a header value: no whitespace around it (the server's parser strips it).
  for (const p of op.headers)
    if (c.headers[p.name] !== undefined)
      out.push({
        get: () => c.headers[p.name],
        set: (v) => (c.headers[p.name] = String(v).replace(/^[ \t]+|[ \t]+$/g, '')),
        schema: p.schema,
        where: `header.${p.name}`,
      });
  if (c.body !== undefined) leavesOf(c.body, op.body ?? undefined, 'body', (v) => (c.body = v), out);
  return out;
}

/** At a code point boundary: never splitting a surrogate pair (a lone surrogate is a mutation of its own). */
function insert(rng: Rng, s: string, x: string): string {
  const cps = [...s];
  cps.splice(rng.between(0, cps.length), 0, x);
  return cps.join('');
}

type Mutation = { name: string; weight: number; applies: (l: Leaf) => boolean; apply: (l: Leaf, rng: Rng) => void };
const isString = (l: Leaf) => typeof l.get() === 'string';
const isDate = (l: Leaf) => l.schema?.format === 'date-time';
const MUTATIONS: Mutation[] = [
  { name: 'nul', weight: 3, applies: isString, apply: (l, r) => l.set(insert(r, String(l.get()), '\u0000')) },
  // A line break in a header value would start another header (a different request, not this value).
  {
    name: 'control',
    weight: 3,
    applies: isString,
    apply: (l, r) =>
      l.set(insert(r, String(l.get()), r.pick(['\u0001', '\u001b[31m', '\u007f', '\t', '\u0008', ...(l.where.startsWith('header') ? [] : ['\n', '\r\n'])]))),
  },
  // A URL or a header cannot carry a lone surrogate (it would arrive as U+FFFD): only a JSON body can.
  {
    name: 'lone-surrogate',
    weight: 2,
    applies: (l) => isString(l) && l.where.startsWith('body'),
    apply: (l, r) => l.set(insert(r, String(l.get()), r.pick(['\ud800', '\udfff']))),
  },
  { name: 'unicode', weight: 3, applies: isString, apply: (l, r) => l.set(insert(r, String(l.get()), r.pick(UNICODE))) },
  {
    name: 'huge',
    weight: 2,
    applies: isString,
    apply: (l, r) => l.set(r.chance(0.5) ? 'a'.repeat((l.schema?.maxLength ?? 200) + 1) : `${String(l.get())}${'é'.repeat(r.between(5_000, 30_000))}`),
  },
  { name: 'empty', weight: 1, applies: isString, apply: (l) => l.set('') },
  { name: 'odd-date', weight: 4, applies: isDate, apply: (l, r) => l.set(r.pick(ODD_DATES)) },
  { name: 'number-edge', weight: 2, applies: (l) => typeof l.get() === 'number', apply: (l, r) => l.set(r.pick(EDGE_NUMBERS)) },
  { name: 'wrong-type', weight: 2, applies: (l) => l.where.startsWith('body'), apply: (l, r) => l.set(r.pick<unknown>([null, true, 42, '42', [], {}])) },
];

/** Object-level mutations of the body: a required property left out, an unknown one added. */
function mutateBody(op: ApiOperation, c: DocCase, rng: Rng): string | null {
  const b = c.body as Record<string, unknown> | undefined;
  if (!b || typeof b !== 'object' || Array.isArray(b)) return null;
  const required = (op.body?.required ?? []).filter((k) => k in b);
  if (required.length > 0 && rng.chance(0.5)) {
    delete b[rng.pick(required)];
    return 'missing-required';
  }
  b[rng.pick(['x_fz', 'principal', 'isAdmin', 'conversation'])] = rng.pick<unknown>([1, 'x', null]);
  return 'unknown-property';
}

/** One or two boundary or hostile values in a case (in place); the mutations' names, with where they went. */
export function mutate(op: ApiOperation, c: DocCase, rng: Rng): string[] {
  const tags: string[] = [];
  const n = rng.choose<number>([
    [3, 1],
    [1, 2],
  ]);
  for (let i = 0; i < n; i++) {
    if (op.body && rng.chance(0.12)) {
      const t = mutateBody(op, c, rng);
      if (t) tags.push(t);
      continue;
    }
    const ls = leaves(op, c);
    const l = ls.length ? rng.pick(ls) : null;
    const ms = l ? MUTATIONS.filter((m) => m.applies(l)) : [];
    if (!l || ms.length === 0) continue;
    const m = rng.choose<Mutation>(ms.map((x) => [x.weight, x] as const));
    m.apply(l, rng);
    tags.push(`${m.name}@${l.where}`);
  }
  return tags;
}

// --- whom it is about, and who asks ---------------------------------------------------------------

/**
 * Values the document cannot know, from the world: a bind names this host (another one would wait
 * for that host's agent); a share of the per-ownership cases is aimed at the fuzz's own ownerships,
 * so that their checks run past not_found. The caller is one the policy lets call: authorization
 * comes before validation, and a refused caller says nothing about its input. New owners are
 * executors: an admin must also name a worker (the operation's `worker` says so in prose only).
 */
function ground(op: ApiOperation, c: DocCase, w: World, rng: Rng): FuzzPrincipal {
  const model = routeModel(op.key);
  if (op.key === 'POST /v1/bind' && c.body && typeof c.body === 'object') {
    const b = c.body as Record<string, unknown>;
    if ('hostId' in b) b.hostId = w.hostId;
  }
  // A removal only as a dry run (mutations then make it invalid, never a real removal): the world's worktrees stay.
  if (op.key === 'POST /v1/worktrees/remove' && c.body && typeof c.body === 'object') (c.body as Record<string, unknown>).dryRun = true;
  if ('id' in c.path && ['ownerOnly', 'newOwner', 'landingWrite', 'readById'].includes(model.cls) && w.live.size > 0 && rng.chance(0.5)) {
    c.path.id = rng.pick([...w.live.keys()]);
  }
  const all = Object.values(w.principals);
  if (model.cls === 'conversation') return w.principals.otherExecutor;
  if (model.cls === 'bind' || model.cls === 'newOwner' || model.executorsOnly) return rng.pick([w.principals.executor, w.principals.otherExecutor]);
  const allowed = all.filter((p) => mayCall(p.kind, model.op));
  return rng.pick(allowed.length ? allowed : all);
}

// --- the run ------------------------------------------------------------------------------------

interface Planned {
  op: ApiOperation;
  c: DocCase;
  valid: boolean;
  tags: string[];
  principal: FuzzPrincipal;
}

function describe(p: Planned, target: string, body: string): string {
  const s = JSON.stringify({
    route: p.op.key,
    tags: p.tags,
    principal: p.principal.name,
    target: target.length > 300 ? `${target.slice(0, 300)}…(${target.length})` : target,
    headers: p.c.headers,
    body: body.length > 600 ? `${body.slice(0, 600)}…(${body.length})` : body,
  });
  return s;
}

export async function runDocFuzz(w: World, ops: ApiOperation[], pool: Pool, o: DocFuzzOptions): Promise<DocFuzzResult> {
  const judge = new DocJudge();
  const codes = documentedCodes();
  const planned: Planned[] = [];
  const perOperation: Record<string, OperationTally> = {};
  ops.forEach((op, k) => {
    const tally: OperationTally = (perOperation[op.key] = { valid: 0, malformed: 0, transport: 0, invalid: 0, misses: 0, byStatus: {} });
    const cases = fc.sample(caseArb(op), { seed: (o.seed ^ Math.imul(k + 1, 0x9e3779b1)) | 0, numRuns: o.casesPerOperation });
    cases.forEach((c, j) => {
      const rng = Rng.forRequest(o.seed, k * 1_000_003 + j);
      const principal = ground(op, c, w, rng);
      const asGenerated = judge.valid(op, c);
      const tags = rng.chance(0.5) ? mutate(op, c, rng) : [];
      if (tags.length === 0 && !asGenerated) {
        tally.misses++;
        return;
      }
      const valid = tags.length === 0 ? true : judge.valid(op, c);
      // A documented-invalid case aimed at an ownership is aimed at a seeded one: it must change nothing
      // there. Unless its id was what made it invalid: then it stays as it is.
      if (!valid && 'id' in c.path && rng.chance(0.5) && w.seeded.length > 0) {
        const id = c.path.id!;
        c.path.id = rng.pick(w.seeded).id;
        if (judge.valid(op, c)) c.path.id = id;
      }
      planned.push({ op, c, valid, tags, principal });
    });
  });

  const violations: DocFuzzResult['violations'] = [];
  const started = Date.now();
  const run = async (batch: Planned[]) => {
    let next = 0;
    const loop = async () => {
      for (;;) {
        const p = batch[next++];
        if (!p) return;
        const tally = perOperation[p.op.key]!;
        if (p.valid) tally.valid++;
        else tally.invalid++;
        const target = targetOf(p.op, p.c);
        const body = p.c.body === undefined ? undefined : Buffer.from(JSON.stringify(p.c.body) ?? '', 'utf8');
        const headers: [string, string][] = [];
        if (p.op.secured) headers.push(['authorization', `Bearer ${p.principal.token}`]);
        if (body) headers.push(['content-type', 'application/json']);
        for (const [k, v] of Object.entries(p.c.headers)) headers.push([k, v]);
        let res: RawResponse | null = null;
        let failure = '';
        try {
          res = await send(w.host, w.port, { method: p.op.method, target, headers, ...(body ? { body } : {}) }, o.timeoutMs);
        } catch (err) {
          failure = (err as Error).message;
        }
        const code = (res?.json as { code?: unknown } | undefined)?.code;
        const result: DocCaseResult = {
          op: p.op.key,
          valid: p.valid,
          tags: p.tags,
          status: res?.status ?? null,
          code: typeof code === 'string' ? code : null,
          request: describe(p, target, body?.toString('utf8') ?? ''),
          response: res ? res.text.slice(0, 300) : failure,
        };
        tally.byStatus[String(res?.status ?? 'no-answer')] = (tally.byStatus[String(res?.status ?? 'no-answer')] ?? 0) + 1;
        for (const problem of problemsOf(p, res, result.code, codes)) violations.push({ problem, example: result });
        if (res && p.valid && res.status === 400 && (result.code === 'invalid_input' || result.code === 'unknown_field')) tally.malformed++;
        if (res && p.valid && [413, 414, 431].includes(res.status)) tally.transport++;
        if (res && p.valid && res.status === 400 && (result.code === 'invalid_input' || result.code === 'unknown_field'))
          violations.push({ problem: `documented-valid refused as malformed`, example: result });
      }
    };
    await Promise.all(Array.from({ length: o.concurrency }, loop));
  };

  // Valid cases first (they may change the fuzz's own ownerships); then the invalid ones, which change nothing.
  await run(planned.filter((p) => p.valid));
  const before = await fingerprint(pool, w);
  await run(planned.filter((p) => !p.valid));
  const after = await fingerprint(pool, w);
  const changed = JSON.stringify(before) === JSON.stringify(after) ? [] : [{ before, after }];
  const wallMs = Date.now() - started;

  // The measure: per operation, the share of documented-valid cases refused as malformed.
  const tooStrict = Object.entries(perOperation).filter(([, t]) => t.malformed >= 2 && t.malformed / Math.max(1, t.valid) > o.maxMalformedShare);
  const kept = violations.filter((v) => v.problem !== 'documented-valid refused as malformed' || tooStrict.some(([k]) => k === v.example.op));
  const share = (t: OperationTally) => `${t.malformed}/${t.valid}`;
  const summary =
    `[doc-fuzz] seed=${o.seed} cases=${planned.length} (${planned.filter((p) => p.valid).length} valid per the document) wall=${(wallMs / 1000).toFixed(1)}s ` +
    `violations=${kept.length} malformed-of-valid={${Object.entries(perOperation)
      .filter(([, t]) => t.malformed > 0)
      .map(([k, t]) => `${k}:${share(t)}`)
      .join(' ')}} misses=${Object.values(perOperation).reduce((n, t) => n + t.misses, 0)}`;
  return { perOperation, violations: kept, changed, wallMs, summary };
}

const MALFORMED_STATUSES = new Set([400, 413, 414, 415, 431]);

function problemsOf(p: Planned, res: RawResponse | null, code: string | null, documented: Set<string>): string[] {
  if (!res) return ['no answer'];
  const out: string[] = [];
  if (res.status >= 500) out.push(`status ${res.status} (${code ?? 'no code'})`);
  if (res.status >= 400) {
    if (code === null) out.push(`${res.status} without a code`);
    else {
      if (!(code in REASONS) || !documented.has(code)) out.push(`code ${code} not in docs/reason-codes.md`);
      const listed = p.op.responses[String(res.status)]?.content?.['application/json']?.schema?.properties?.code?.enum;
      if (!listed) out.push(`status ${res.status} not in the document for ${p.op.key}`);
      else if (!listed.includes(code)) out.push(`code ${code} not listed for ${res.status} in the document`);
    }
  }
  if (!p.valid && !MALFORMED_STATUSES.has(res.status)) out.push(`documented-invalid answered ${res.status}${code ? ` ${code}` : ''}`);
  return out;
}

/** What a refused request must not change: the seeded ownerships, and the rows only requests add. */
async function fingerprint(pool: Pool, w: World): Promise<unknown> {
  const seeded = [];
  for (const t of w.seeded) seeded.push(await snapshotOwnership(pool, t.id));
  const counts = await pool.query(
    // Not every receipt: a valid landing on one of the fuzz's own ownerships may become durable after its 202.
    `SELECT (SELECT count(*)::int FROM ownerships) AS ownerships, (SELECT count(*)::int FROM executor_bindings) AS bindings,
            (SELECT count(*)::int FROM reconciliations) AS reconciliations`,
  );
  return { seeded, counts: counts.rows[0] };
}
