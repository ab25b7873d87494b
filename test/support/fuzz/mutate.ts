import { BARE_HOSTILE, canary, hostilePath, hostileText } from './hostile';
import type { Draft } from './draft';
import { enc } from './draft';
import { randomOwnershipId } from './gen';
import type { JsonSchema } from './openapi';
import type { Rng } from '../../../chaos/rng';
import { mayCall, type World } from './world';

/**
 * Mutations of a valid-ish draft. `refuses` says the mutation alone makes the request refused
 * whatever else it carries (it is then usable as the ingredient that makes a message to a seeded
 * ownership refused by construction); `safeExtra` says it may be added to such a message without
 * risking to make it acceptable (no mutation that swaps in another valid principal).
 */
export interface Mutation {
  name: string;
  weight: number;
  refuses: (d: Draft, w: World) => boolean;
  safeExtra: boolean;
  applies: (d: Draft, w: World) => boolean;
  apply: (d: Draft, rng: Rng, w: World) => void;
}

type Path = string[];

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const bodyObj = (d: Draft): Record<string, unknown> | null => (d.bodyRaw === null && d.hasBody && isObj(d.body) ? d.body : null);

/** Every property path of the body (objects only, arrays left whole). */
function paths(v: unknown, at: Path = []): Path[] {
  if (!isObj(v)) return [];
  const out: Path[] = [];
  for (const [k, x] of Object.entries(v)) {
    out.push([...at, k]);
    out.push(...paths(x, [...at, k]));
  }
  return out;
}
/** Object-valued paths (where a key can be added), the body itself included. */
function objectPaths(v: unknown): Path[] {
  return [[], ...paths(v).filter((p) => isObj(getAt(v, p)))];
}
function getAt(v: unknown, p: Path): unknown {
  let x = v;
  for (const k of p) x = isObj(x) ? x[k] : undefined;
  return x;
}
function setAt(v: Record<string, unknown>, p: Path, val: unknown): void {
  let x: Record<string, unknown> = v;
  for (const k of p.slice(0, -1)) x = x[k] as Record<string, unknown>;
  Object.defineProperty(x, p[p.length - 1]!, { value: val, enumerable: true, writable: true, configurable: true });
}
function deleteAt(v: Record<string, unknown>, p: Path): void {
  let x: Record<string, unknown> = v;
  for (const k of p.slice(0, -1)) x = x[k] as Record<string, unknown>;
  delete x[p[p.length - 1]!];
}
function schemaAt(s: JsonSchema | null, p: Path): JsonSchema | undefined {
  let x: JsonSchema | undefined = s ?? undefined;
  for (const k of p) x = x?.properties?.[k];
  return x;
}

const PATHLIKE = new Set(['worktreePath', 'repoRoot', 'repo']);

/** A fresh canary, marked as something the answer must not echo. */
function marked(d: Draft, rng: Rng): string {
  const c = canary(rng);
  d.hostile.push(c);
  return c;
}

function hostileFor(d: Draft, rng: Rng, w: World, name: string | undefined, near: string): string {
  const c = marked(d, rng);
  const v = name !== undefined && PATHLIKE.has(name) && rng.chance(0.6) ? hostilePath(rng, w.fx, near, c) : hostileText(rng, c);
  if (v.length >= 16) d.hostile.push(v);
  return v;
}

/** A value of another JSON type than the schema allows (null only where it is not nullable). */
function wrongTypeFor(s: JsonSchema | undefined, rng: Rng): unknown {
  const t = s?.type;
  const cands: unknown[] = [];
  if (t !== 'string') cands.push('1', 'fz');
  if (t !== 'integer' && t !== 'number') cands.push(42, -1.5, 1e308);
  if (t === 'integer') cands.push(1.5, '1');
  if (t !== 'boolean') cands.push(true, false);
  if (t !== 'array') cands.push([], ['x'], [[{}]]);
  if (t !== 'object') cands.push({}, { a: 1 });
  if (!s?.nullable) cands.push(null);
  return rng.pick(cands);
}

const secured = (d: Draft) => d.op.secured;
const hasBodyObj = (d: Draft) => bodyObj(d) !== null;
const isGet = (d: Draft) => d.op.method === 'GET';
const always = () => true;
const never = () => false;

function setToken(d: Draft, w: World, name: keyof World['principals']): void {
  d.auth = `Bearer ${w.principals[name].token}`;
}

export const MUTATIONS: Mutation[] = [
  // --- body values ---
  {
    name: 'hostile-string',
    weight: 12,
    refuses: never,
    safeExtra: true,
    applies: (d) => paths(bodyObj(d)).length > 0,
    apply(d, rng, w) {
      const b = bodyObj(d)!;
      const p = rng.pick(paths(b));
      const near = typeof getAt(b, ['worktreePath']) === 'string' ? (getAt(b, ['worktreePath']) as string) : w.fuzzRepo.repoRoot;
      setAt(b, p, hostileFor(d, rng, w, p[p.length - 1], near));
    },
  },
  {
    name: 'hostile-path',
    weight: 10,
    refuses: never,
    safeExtra: true,
    applies: (d) => hasBodyObj(d) && paths(d.body).some((p) => PATHLIKE.has(p[p.length - 1]!)),
    apply(d, rng, w) {
      const b = bodyObj(d)!;
      const p = rng.pick(paths(b).filter((x) => PATHLIKE.has(x[x.length - 1]!)));
      const c = marked(d, rng);
      const near = String(getAt(b, p));
      setAt(b, p, hostilePath(rng, w.fx, near.startsWith('/') ? near : w.fuzzRepo.repoRoot, c));
    },
  },
  {
    name: 'bare-hostile',
    weight: 4,
    refuses: never,
    safeExtra: true,
    applies: (d) => paths(bodyObj(d)).length > 0,
    apply(d, rng) {
      const b = bodyObj(d)!;
      setAt(b, rng.pick(paths(b)), rng.pick(BARE_HOSTILE));
    },
  },
  {
    name: 'huge-string',
    weight: 3,
    refuses: hasBodyObj,
    safeExtra: true,
    applies: (d) => paths(bodyObj(d)).length > 0,
    apply(d, rng) {
      const b = bodyObj(d)!;
      const c = marked(d, rng);
      setAt(b, rng.pick(paths(b)), `${c}${rng.pick(['a', '/', 'é', '\u0000'].map((x) => x.repeat(rng.between(4_200, 12_000))))}`);
    },
  },
  {
    name: 'wrong-type',
    weight: 8,
    refuses: hasBodyObj,
    safeExtra: true,
    applies: (d) => paths(bodyObj(d)).length > 0,
    apply(d, rng) {
      const b = bodyObj(d)!;
      const p = rng.pick(paths(b));
      setAt(b, p, wrongTypeFor(schemaAt(d.op.body, p), rng));
    },
  },
  {
    name: 'number-edge',
    weight: 2,
    refuses: never,
    safeExtra: true,
    applies: (d) => paths(bodyObj(d)).some((p) => typeof getAt(d.body, p) === 'number'),
    apply(d, rng) {
      const b = bodyObj(d)!;
      const p = rng.pick(paths(b).filter((x) => typeof getAt(b, x) === 'number'));
      setAt(b, p, rng.pick([0, -1, 2 ** 31, 2 ** 31 - 1, 2 ** 53 + 1, 1e21, 1.0000001, -0, Number.MAX_SAFE_INTEGER]));
    },
  },
  {
    name: 'null-field',
    weight: 3,
    refuses: never,
    safeExtra: true,
    applies: (d) => paths(bodyObj(d)).length > 0,
    apply(d, rng) {
      const b = bodyObj(d)!;
      setAt(b, rng.pick(paths(b)), null);
    },
  },
  {
    name: 'unknown-field',
    weight: 6,
    refuses: hasBodyObj,
    safeExtra: true,
    applies: hasBodyObj,
    apply(d, rng, w) {
      const b = bodyObj(d)!;
      const at = rng.pick(objectPaths(b));
      const c = canary(rng);
      const key = rng.choose<() => string>([
        [3, () => rng.pick(['bogus', 'principal', 'isAdmin', 'kind', 'token', 'ownerWorkerId', 'state', 'seq'])],
        [1, () => rng.pick(['conversation', 'conversationId', 'conversationUrl', 'Conversation'])],
        [1, () => rng.pick(['__proto__', 'constructor', 'prototype'])],
        // A plain identifier may be named back (details.fields says which key is unknown)...
        [1, () => `x_${c}`],
        // ...a key that is no identifier is the caller's text, and must not be.
        [
          3,
          () => {
            d.hostile.push(c);
            return rng.pick([`${c}\u0000`, `${c}${'k'.repeat(5_000)}`, `../${c}`, `${c}\ud800`, `${c} Bearer ${'t'.repeat(40)}`, `${c}\n<script>`]);
          },
        ],
      ])();
      setAt(b, [...at, key], rng.pick([1, 'x', null, { nested: true }, w.principals.admin.kind]));
    },
  },
  {
    name: 'missing-required',
    weight: 6,
    refuses: hasBodyObj,
    safeExtra: true,
    applies: (d) => requiredPaths(d).length > 0,
    apply(d, rng) {
      deleteAt(bodyObj(d)!, rng.pick(requiredPaths(d)));
    },
  },
  {
    name: 'non-object-body',
    weight: 3,
    refuses: (d) => d.hasBody,
    safeExtra: true,
    applies: (d) => d.hasBody && d.bodyRaw === null,
    apply(d, rng) {
      d.body = rng.pick([null, [], [d.body], 'body', 42, true, 0]);
    },
  },
  {
    name: 'bad-json',
    weight: 4,
    refuses: (d) => d.hasBody,
    safeExtra: true,
    applies: (d) => d.hasBody && d.bodyRaw === null,
    apply(d, rng) {
      const good = JSON.stringify(d.body) ?? '{}';
      d.bodyRaw = Buffer.from(
        rng.pick([
          '{',
          '{"a":',
          good.slice(0, -1),
          `${good}}`,
          `${good},`,
          "{'epoch': 1}",
          '\u0000',
          'NaN',
          '{"epoch": 1e999}',
          `{"x": "\\ud800"${good.slice(1)}`.replace('"\\ud800"{', '"\\ud800",'),
          '[1,2,',
          '{"a":"\u0001\u0002"',
          `${'['.repeat(20_000)}`,
        ]),
        'utf8',
      );
    },
  },
  {
    name: 'empty-body',
    weight: 2,
    refuses: (d) => d.hasBody,
    safeExtra: true,
    applies: (d) => d.hasBody,
    apply(d) {
      d.bodyRaw = Buffer.alloc(0);
      d.contentType = 'application/json';
    },
  },
  {
    name: 'content-type',
    weight: 4,
    refuses: (d) =>
      d.hasBody && ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml'].includes(d.contentType ?? ''),
    safeExtra: true,
    applies: (d) => d.hasBody,
    apply(d, rng) {
      d.contentType = rng.pick([
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/xml',
        'application/json; charset=utf-16',
        'application/json; charset=latin1',
        'APPLICATION/JSON',
        'application/json, text/plain',
        'application/vnd.api+json',
        '',
        'application/json; boundary="\\"',
      ]);
      if (d.contentType === '') d.contentType = null;
    },
  },
  {
    name: 'huge-body',
    weight: 1,
    refuses: (d) => d.hasBody,
    safeExtra: true,
    applies: (d) => d.hasBody,
    apply(d, rng) {
      const c = marked(d, rng);
      d.bodyRaw = Buffer.from(JSON.stringify({ pad: `${c}${'x'.repeat(rng.between(66_000, 200_000))}` }), 'utf8');
    },
  },
  {
    name: 'deep-nesting',
    weight: 1,
    refuses: hasBodyObj,
    safeExtra: true,
    applies: hasBodyObj,
    apply(d, rng) {
      const depth = rng.between(200, 3_000);
      d.bodyRaw = Buffer.from(
        `${(JSON.stringify(d.body) ?? '{}').slice(0, -1)}${Object.keys(bodyObj(d)!).length ? ',' : ''}"nest":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`,
        'utf8',
      );
    },
  },
  {
    name: 'proto-pollution',
    weight: 2,
    refuses: hasBodyObj,
    safeExtra: true,
    applies: hasBodyObj,
    apply(d, rng) {
      const good = JSON.stringify(d.body) ?? '{}';
      const inject = rng.pick(['"__proto__":{"kind":"admin","isAdmin":true}', '"constructor":{"prototype":{"isAdmin":true}}']);
      d.bodyRaw = Buffer.from(`{${inject}${good.length > 2 ? ',' : ''}${good.slice(1)}`, 'utf8');
    },
  },
  {
    name: 'duplicate-key',
    weight: 1,
    refuses: never,
    safeExtra: true,
    applies: (d) => paths(bodyObj(d)).length > 0,
    apply(d, rng) {
      // The earlier copy carries the hostile value: JSON keeps the last, the draft's own.
      const b = bodyObj(d)!;
      const k = rng.pick(Object.keys(b));
      const c = marked(d, rng);
      const good = JSON.stringify(b);
      d.bodyRaw = Buffer.from(`{${JSON.stringify(k)}:${JSON.stringify(`${c}\u0000`)},${good.slice(1)}`, 'utf8');
    },
  },
  {
    name: 'invalid-utf8',
    weight: 1,
    refuses: never,
    safeExtra: true,
    applies: (d) => paths(bodyObj(d)).some((p) => typeof getAt(d.body, p) === 'string'),
    apply(d, rng) {
      const b = bodyObj(d)!;
      const p = rng.pick(paths(b).filter((x) => typeof getAt(b, x) === 'string'));
      const marker = `zqfzutf${rng.tag(6)}`;
      setAt(b, p, marker);
      const s = JSON.stringify(b);
      const at = s.indexOf(marker);
      d.bodyRaw = Buffer.concat([
        Buffer.from(s.slice(0, at), 'utf8'),
        Buffer.from(
          rng.pick([
            [0xff, 0xfe],
            [0xc0, 0xaf],
            [0xed, 0xa0, 0x80],
            [0xe2, 0x82],
          ]),
        ),
        Buffer.from(s.slice(at), 'utf8'),
      ]);
      d.hostile.push(marker);
    },
  },

  // --- authentication ---
  {
    name: 'no-auth',
    weight: 4,
    refuses: secured,
    safeExtra: true,
    applies: secured,
    apply(d) {
      d.auth = null;
    },
  },
  {
    name: 'bad-token',
    weight: 4,
    refuses: secured,
    safeExtra: true,
    applies: always,
    apply(d, rng, w) {
      const t = w.principals.admin.token;
      const c = marked(d, rng);
      d.auth = rng.pick([
        'Bearer x',
        'Bearer ',
        'Bearer',
        'Basic Zm9vOmJhcg==',
        `Bearer ${t}x`,
        `Bearer ${t.slice(0, -1)}`,
        `Bearer ${'A'.repeat(10_000)}`,
        `Bearer ${c}`,
        `Token ${t}`,
        `Bearer ${t} ${t}`,
        `Bearer ${c}\u00e9\u00e9`,
        `${t}`,
        `Bearer ${c}"},{"admin":true`,
      ]);
    },
  },
  {
    name: 'auth-spelling',
    weight: 1,
    refuses: never,
    safeExtra: false,
    applies: (d) => d.auth !== null,
    apply(d, rng) {
      const t = /^Bearer (.*)$/.exec(d.auth!)?.[1] ?? '';
      d.auth = rng.pick([`bearer ${t}`, `BEARER ${t}`, `Bearer  ${t}`, `Bearer ${t} `, `Bearer\t${t}`, ` Bearer ${t}`]);
    },
  },
  {
    name: 'wrong-kind',
    weight: 5,
    refuses: (d, w) => secured(d) && d.model.op !== null && Object.values(w.principals).some((p) => !mayCall(p.kind, d.model.op)),
    safeExtra: true,
    applies: (d, w) => secured(d) && d.model.op !== null && Object.values(w.principals).some((p) => !mayCall(p.kind, d.model.op)),
    apply(d, rng, w) {
      const p = rng.pick(Object.values(w.principals).filter((x) => !mayCall(x.kind, d.model.op)));
      setToken(d, w, p.name);
      d.principal = `${p.name}(wrong-kind)`;
    },
  },
  {
    name: 'other-principal',
    weight: 3,
    refuses: never,
    safeExtra: false,
    applies: secured,
    apply(d, rng, w) {
      const p = rng.pick(Object.values(w.principals));
      setToken(d, w, p.name);
      d.principal = p.name;
    },
  },
  {
    name: 'control-in-header',
    weight: 1,
    refuses: always,
    safeExtra: true,
    applies: always,
    apply(d, rng) {
      const c = marked(d, rng);
      const bad = rng.pick(['\u0000', '\u0001', '\u001f', '\u007f', '\r', '\n']);
      if (rng.chance(0.5) && d.auth !== null) d.auth = `Bearer ${c}${bad}x`;
      else d.headers.push(['x-fuzz', `${c}${bad}y`]);
    },
  },
  {
    name: 'huge-header',
    weight: 1,
    refuses: always,
    safeExtra: true,
    applies: always,
    apply(d, rng) {
      const c = marked(d, rng);
      d.headers.push(['x-fuzz', `${c}${'h'.repeat(rng.between(17_000, 40_000))}`]);
    },
  },
  {
    name: 'dup-auth',
    weight: 1,
    refuses: never,
    safeExtra: false,
    applies: (d) => d.auth !== null,
    apply(d) {
      d.headers.push(['authorization', 'Bearer second-token']);
    },
  },

  // --- the route ---
  {
    name: 'unknown-id',
    weight: 3,
    refuses: (d) => 'id' in d.pathParams,
    safeExtra: true,
    applies: (d) => 'id' in d.pathParams,
    apply(d, rng) {
      d.pathParams.id = randomOwnershipId(rng);
    },
  },
  {
    name: 'malformed-id',
    weight: 4,
    refuses: (d) => 'id' in d.pathParams || 'sha' in d.pathParams,
    safeExtra: true,
    applies: (d) => 'id' in d.pathParams || 'sha' in d.pathParams,
    apply(d, rng) {
      const key = 'id' in d.pathParams ? 'id' : 'sha';
      const cur = d.pathParams[key]!;
      const c = marked(d, rng);
      d.pathParams[key] = rng.pick([
        'own_x',
        cur.toLowerCase(),
        `own_${'Z'.repeat(300)}`,
        `${cur}%00`,
        `${cur}%0a`,
        '%ZZ',
        '%',
        '%ED%A0%80',
        '%C0%AE%C0%AE',
        '..',
        '%2e%2e',
        enc(`../../${c}`),
        enc(`${c}\u0000`),
        `${c}${'9'.repeat(6_000)}`,
        enc(`${c}${'é'.repeat(3_000)}`),
        `own_01ARZ3NDEKTSV4RRFFQ69G5FAV`.replace('A', 'I'),
        `${cur}%20`,
        '',
        `${cur};x=1`,
        `g${'f'.repeat(39)}`,
        `${'a'.repeat(65)}`,
      ]);
    },
  },
  {
    name: 'path-spelling',
    weight: 2,
    refuses: never,
    safeExtra: true,
    applies: always,
    apply(d, rng) {
      const p = d.op.path.replace(/\{(\w+)\}/g, (_m, k: string) => d.pathParams[k] ?? '');
      d.pathOverride = rng.pick([
        `${p}/`,
        `/${p}`,
        `${p}/..`,
        `${p}/.`,
        p.toUpperCase(),
        p.replace('/v1/', '/v1//'),
        p.replace('/v1/', '/v1/./'),
        p.replace('/v1/', '/v2/'),
        p.replace('/v1/', '/%76%31/'),
        `${p}%2F..%2Fbind`,
        `/v1/ownerships/x/../../${p.slice(4)}`,
        `http://evil.example${p}`,
        `${p}#frag`,
        `${p}\u0000`,
        `${p} HTTP/1.0\r\nx-smuggle: 1\r\n`,
      ]);
    },
  },
  {
    name: 'wrong-method',
    weight: 2,
    refuses: (d) => d.op.method === 'POST' && d.method !== 'POST',
    safeExtra: true,
    applies: always,
    apply(d, rng) {
      d.method = rng.pick(['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'FOO', 'POST', 'HEAD'].filter((m) => m !== d.op.method));
    },
  },

  // --- the query ---
  {
    name: 'repeat-query',
    weight: 3,
    refuses: never,
    safeExtra: true,
    applies: (d) => d.query.length > 0,
    apply(d, rng) {
      const [k, v] = rng.pick(d.query);
      const n = rng.between(1, 40);
      for (let i = 0; i < n; i++) d.query.push([k, rng.chance(0.5) ? v : enc(`v${i}`)]);
    },
  },
  {
    name: 'unknown-query',
    weight: 2,
    refuses: (d) => isGet(d) && d.op.query.length > 0,
    safeExtra: true,
    applies: always,
    apply(d, rng) {
      const c = canary(rng);
      // A plain identifier may be named back as the unknown field; any other key must not be.
      const pair = rng.pick<[string, string, boolean]>([
        ['bogus', '1', false],
        ['__proto__', 'x', false],
        ['constructor', 'x', false],
        [`k_${c}`, '1', false],
        [c, '\u0000novalue', false],
        [`state[]`, 'active', false],
        [`a[b]`, 'c', false],
        [enc(`${c}\u0000`), 'x', true],
        [enc(`../${c}`), 'x', true],
        [enc(`${c} <b>`), '', true],
      ]);
      if (pair[2]) d.hostile.push(c);
      d.query.push([pair[0], pair[1]]);
    },
  },
  {
    name: 'hostile-query',
    weight: 4,
    refuses: never,
    safeExtra: true,
    applies: (d) => d.query.length > 0,
    apply(d, rng, w) {
      const i = rng.between(0, d.query.length - 1);
      const k = d.query[i]![0];
      d.query[i] = [k, enc(hostileFor(d, rng, w, k, w.fuzzRepo.repoRoot))];
    },
  },
  {
    name: 'huge-query',
    weight: 1,
    refuses: always,
    safeExtra: true,
    applies: always,
    apply(d, rng) {
      const c = marked(d, rng);
      d.query.push(['q', `${c}${'z'.repeat(rng.between(17_000, 70_000))}`]);
    },
  },
  {
    name: 'bad-percent',
    weight: 2,
    refuses: never,
    safeExtra: true,
    applies: (d) => d.query.length > 0,
    apply(d, rng) {
      const i = rng.between(0, d.query.length - 1);
      d.query[i] = [d.query[i]![0], rng.pick(['%', '%ZZ', '%E0%A4%A', '%00', '%ED%A0%80', '+%2B%20', '%C0%AF', `${d.query[i]![1]}%`, '%%%'])];
    },
  },
];

function requiredPaths(d: Draft): Path[] {
  const b = bodyObj(d);
  if (!b) return [];
  return paths(b).filter((p) => (schemaAt(d.op.body, p.slice(0, -1))?.required ?? []).includes(p[p.length - 1]!));
}

/** Domain ingredients: refusals only the state of a seeded ownership guarantees. */
export interface Ingredient {
  name: string;
  applies: (d: Draft, w: World) => boolean;
  apply: (d: Draft, rng: Rng, w: World) => void;
}

export const DOMAIN_INGREDIENTS: Ingredient[] = [
  {
    // the fuzz's sessions are never a seeded owner's
    name: 'wrong-session',
    applies: (d) => d.model.cls === 'ownerOnly' && hasBodyObj(d) && d.seeded !== null,
    apply(d, rng, w) {
      bodyObj(d)!.executionSessionId = rng.pick(w.sessions);
    },
  },
  {
    name: 'wrong-epoch',
    applies: (d) => d.model.cls === 'ownerOnly' && hasBodyObj(d) && d.seeded !== null,
    apply(d, rng) {
      bodyObj(d)!.epoch = d.seeded!.epoch + rng.between(1, 5);
    },
  },
  {
    name: 'other-worker',
    applies: (d, w) =>
      d.model.cls === 'ownerOnly' &&
      d.seeded !== null &&
      Object.values(w.principals).some((p) => p.kind === 'executor' && p.workerId !== d.seeded!.ownerWorker),
    apply(d, rng, w) {
      const p = rng.pick(Object.values(w.principals).filter((x) => x.kind === 'executor' && x.workerId !== d.seeded!.ownerWorker));
      setToken(d, w, p.name);
      d.principal = `${p.name}(other-worker)`;
    },
  },
  {
    // seeded ownerships have no pending handoff under any id the fuzz makes up
    name: 'wrong-handoff',
    applies: (d) => d.op.key.endsWith('/handoff/accept') && hasBodyObj(d) && d.seeded !== null,
    apply(d, rng) {
      bodyObj(d)!.handoffId = `hnd_${rng.tag(12)}`;
    },
  },
  {
    // the seeded owners hold a day-long lease: never stale, so an unforced reclaim is refused
    name: 'unforced-reclaim',
    applies: (d) => d.op.key.endsWith('/reclaim') && hasBodyObj(d) && d.seeded !== null,
    apply(d) {
      delete bodyObj(d)!.force;
    },
  },
  {
    name: 'executor-force',
    applies: (d) => d.op.key.endsWith('/reclaim') && hasBodyObj(d),
    apply(d, rng, w) {
      const b = bodyObj(d)!;
      b.force = true;
      b.reason = 'fz';
      const p = rng.pick(['executor', 'otherExecutor'] as const);
      setToken(d, w, p);
      d.principal = `${p}(force)`;
      // the executor acts for its own worker: a worker named for admin would be worker_mismatch instead
      delete b.worker;
      delete b.workerId;
      delete b.runId;
    },
  },
  {
    // the fuzz's sessions are never a seeded owner's: a bind of its worktree is worktree_owned
    name: 'non-owner-bind',
    applies: (d) => d.model.cls === 'bind' && hasBodyObj(d) && d.seeded !== null,
    apply(d, rng, w) {
      const b = bodyObj(d)!;
      b.executionSessionId = rng.pick(w.sessions);
      b.worktreePath = d.seeded!.worktreePath;
      // the seeded ownership's own workflow: another host would be another worktree identity
      delete b.hostId;
    },
  },
  {
    name: 'stale-observation',
    applies: (d) => d.model.cls === 'conversation' && hasBodyObj(d) && isObj(bodyObj(d)!.conversation),
    apply(d, rng) {
      const conv = bodyObj(d)!.conversation as Record<string, unknown>;
      conv.observedAt = new Date(Date.now() + (rng.chance(0.5) ? -3_600_000 : 3_600_000)).toISOString();
    },
  },
];
