import Ajv, { type ValidateFunction } from 'ajv';
import fc from 'fast-check';
import type { ApiOperation, JsonSchema, Param } from './openapi';

/**
 * Requests generated from the OpenAPI document alone, as an outside client would: fast-check
 * arbitraries built from each operation's JSON schemas (patterns through fc.stringMatching, lengths
 * in code points, bounds, enums, nullables, the selectors' oneOf), and Ajv, an independent
 * validator, to say whether a case is valid per the document. Nothing here knows the server's code.
 */

/** One case of an operation: values, not yet bytes. */
export interface DocCase {
  path: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  /** undefined when the operation has no body */
  body: unknown;
}

// --- JSON Schema (OpenAPI 3.0 subset) -> fast-check ---------------------------------------------

/** Lookarounds fast-check cannot generate: generated without them, then checked with the whole pattern. */
export function withoutLookarounds(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '\\') {
      out += pattern.slice(i, i + 2);
      i++;
      continue;
    }
    if (pattern.startsWith('(?=', i) || pattern.startsWith('(?!', i) || pattern.startsWith('(?<=', i) || pattern.startsWith('(?<!', i)) {
      let depth = 0;
      let inClass = false;
      for (; i < pattern.length; i++) {
        const c = pattern[i];
        if (c === '\\') {
          i++;
          continue;
        }
        if (inClass) {
          if (c === ']') inClass = false;
          continue;
        }
        if (c === '[') inClass = true;
        else if (c === '(') depth++;
        else if (c === ')' && --depth === 0) break;
      }
      continue;
    }
    out += pattern[i];
  }
  return out;
}

const codePoints = (s: string) => [...s].length;
/** A negated class with bounds (`^[^...]{m,n}$`): any text but a few characters, better drawn from all of Unicode. */
const NEGATED_TEXT = /^\^\[\^(?:[^\]\\]|\\.)+\]\{\d+,\d+\}\$$/;

function stringArb(s: JsonSchema): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? Math.max(min, 64);
  const fits = (x: string) => codePoints(x) >= min && codePoints(x) <= max;
  if (!s.pattern) return fc.string({ unit: 'binary', minLength: min, maxLength: Math.min(max, Math.max(min, 24)) });
  const whole = new RegExp(s.pattern, 'u');
  const stripped = withoutLookarounds(s.pattern);
  const ok = (x: string) => whole.test(x) && fits(x);
  // Mostly short values, sometimes as long as the document allows.
  if (NEGATED_TEXT.test(stripped)) {
    // Built once: an arbitrary made inside chain() would be made again for every value.
    const matching = fc.stringMatching(new RegExp(stripped, 'u'));
    const drawn = [Math.min(max, Math.max(min, 24)), max].map((hi) =>
      fc.oneof(
        fc.string({ unit: 'binary', minLength: min, maxLength: hi }),
        fc.string({ unit: 'grapheme', minLength: min, maxLength: hi }).filter((x) => codePoints(x) <= max),
        matching,
      ),
    );
    return fc.oneof({ weight: 5, arbitrary: drawn[0]! }, { weight: 1, arbitrary: drawn[1]! }).filter(ok);
  }
  // The rest: the pattern's own language. A miss (a lookaround the stripped pattern ignored, a length)
  // stays a miss: the case is judged by Ajv and is not sent as a valid one.
  return fc.stringMatching(new RegExp(stripped, 'u'));
}

function integerArb(s: JsonSchema): fc.Arbitrary<number> {
  let lo = s.minimum ?? -(2 ** 53 - 1);
  let hi = s.maximum ?? 2 ** 53 - 1;
  if (s.exclusiveMinimum === true) lo += 1;
  else if (typeof s.exclusiveMinimum === 'number') lo = s.exclusiveMinimum + 1;
  if (s.exclusiveMaximum === true) hi -= 1;
  else if (typeof s.exclusiveMaximum === 'number') hi = s.exclusiveMaximum - 1;
  const small = fc.integer({ min: Math.max(lo, -(2 ** 31)), max: Math.min(hi, 2 ** 31 - 1) });
  if (lo >= -(2 ** 31) && hi <= 2 ** 31 - 1) return small;
  return fc.oneof(small, fc.bigInt({ min: BigInt(lo), max: BigInt(hi) }).map(Number));
}

/** `not: { required: [a], anyOf: [{ required: [b] }, ...] }`: either a or all the b's are left out. */
function exclusionsOfNot(not: JsonSchema | undefined): string[][] {
  if (!not?.required || !not.anyOf) return [[]];
  const others = not.anyOf.flatMap((x) => x.required ?? []);
  return [not.required, others];
}

/** Branches of a oneOf / anyOf that only require or forbid properties (the lookups' selectors, a landing's names). */
function selectorBranches(s: JsonSchema): { include: string[]; exclude: string[] }[] {
  const branches = s.oneOf ?? s.anyOf;
  if (!branches?.every((b) => b.required && !b.properties)) return [{ include: [], exclude: [] }];
  return branches.map((b) => ({ include: b.required ?? [], exclude: b.not?.anyOf?.flatMap((x) => x.required ?? []) ?? [] }));
}

function objectArb(s: JsonSchema): fc.Arbitrary<Record<string, unknown>> {
  const props = s.properties ?? {};
  const required = s.required ?? [];
  const arbs = new Map(Object.entries(props).map(([k, v]) => [k, arbOf(v)] as const));
  const choices = selectorBranches(s).flatMap((b) => exclusionsOfNot(s.not).map((e) => ({ include: b.include, exclude: [...b.exclude, ...e] })));
  const records = choices.map(({ include, exclude }) => {
    const keys = Object.keys(props).filter((k) => !exclude.includes(k) && !props[k]!['x-opaque']);
    const model = Object.fromEntries(keys.map((k) => [k, arbs.get(k)!]));
    return fc.record(model, { requiredKeys: keys.filter((k) => required.includes(k) || include.includes(k)) }) as fc.Arbitrary<Record<string, unknown>>;
  });
  return fc.oneof(...records);
}

export function arbOf(s: JsonSchema): fc.Arbitrary<unknown> {
  let base: fc.Arbitrary<unknown>;
  if (s.enum && s.enum.length > 0) base = fc.constantFrom(...s.enum);
  else if (s.type === 'object' || s.properties) base = objectArb(s);
  else if (s.type === 'array') base = fc.array(arbOf(s.items ?? {}), { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 4, 4) });
  else if (s.type === 'integer') base = integerArb(s);
  else if (s.type === 'number')
    base = fc.double({
      noNaN: true,
      noDefaultInfinity: true,
      ...(s.minimum !== undefined ? { min: s.minimum } : {}),
      ...(s.maximum !== undefined ? { max: s.maximum } : {}),
    });
  else if (s.type === 'boolean') base = fc.boolean();
  else if (s.type === 'string') base = stringArb(s);
  else base = fc.jsonValue({ maxDepth: 2 });
  return s.nullable ? fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 6, arbitrary: base }) : base;
}

/** Every case of an operation, per the document: its parameters where they go, its body. */
export function caseArb(op: ApiOperation): fc.Arbitrary<DocCase> {
  const params = (ps: Param[]) => {
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const p of ps) if (!p.schema['x-opaque']) model[p.name] = arbOf(p.schema);
    return fc.record(model, { requiredKeys: ps.filter((p) => p.required && model[p.name]).map((p) => p.name) });
  };
  return fc.record({
    path: params(op.pathParams) as fc.Arbitrary<Record<string, string>>,
    query: params(op.query),
    headers: params(op.headers) as fc.Arbitrary<Record<string, string>>,
    body: op.body ? arbOf(op.body) : fc.constant(undefined),
  });
}

// --- the document's own verdict ------------------------------------------------------------------

/** OpenAPI 3.0 to the JSON Schema Ajv reads: boolean exclusive bounds become numbers; the rest is as it is. */
function toAjv(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(toAjv);
  if (!s || typeof s !== 'object') return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s))
    out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as object).map(([n, x]) => [n, toAjv(x)])) : toAjv(v);
  for (const [ex, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (out[ex] === true) {
      out[ex] = out[bound];
      delete out[bound];
    } else if (out[ex] === false) delete out[ex];
  }
  return out;
}

/**
 * Whether a case is valid per the document: every parameter and the body against its schema (a
 * parameter's absence against `required`). Ajv counts lengths in code points and reads patterns
 * with the `u` flag, as JSON Schema says; formats are left to the patterns beside them.
 */
export class DocJudge {
  private readonly ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });
  private readonly cache = new Map<JsonSchema, ValidateFunction>();

  /** Whether `v` is valid against one schema of the document. */
  check(s: JsonSchema, v: unknown): boolean {
    let f = this.cache.get(s);
    if (!f) {
      f = this.ajv.compile(toAjv(s) as object);
      this.cache.set(s, f);
    }
    return f(v) === true;
  }

  valid(op: ApiOperation, c: DocCase): boolean {
    const params = (ps: Param[], values: Record<string, unknown>) =>
      Object.keys(values).every((k) => ps.some((p) => p.name === k)) &&
      ps.every((p) => (values[p.name] === undefined ? !p.required : this.check(p.schema, values[p.name])));
    // Header names are the caller's to add (any header passes); only the documented ones are judged.
    const headers = op.headers.every((p) => (c.headers[p.name] === undefined ? !p.required : this.check(p.schema, c.headers[p.name])));
    return params(op.pathParams, c.path) && params(op.query, c.query) && headers && (op.body === null || this.check(op.body, c.body));
  }
}

// --- bytes ---------------------------------------------------------------------------------------

function queryPairs(op: ApiOperation, query: Record<string, unknown>): [string, string][] {
  const out: [string, string][] = [];
  const scalar = (v: unknown) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));
  const put = (k: string, v: unknown) => {
    if (Array.isArray(v)) for (const x of v) out.push([k, scalar(x)]);
    else out.push([k, scalar(v)]);
  };
  for (const [name, v] of Object.entries(query)) {
    const p = op.query.find((x) => x.name === name);
    // A form-exploded object parameter is its properties, each a key of the query.
    if (p && (p.style ?? 'form') === 'form' && p.explode !== false && p.schema.type === 'object' && v && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k, x] of Object.entries(v)) put(k, x);
    } else put(name, v);
  }
  return out;
}

/** The request target: path parameters and query percent-encoded (never a lone surrogate: a URL cannot carry one). */
export function targetOf(op: ApiOperation, c: DocCase): string {
  const e = encodeURIComponent;
  const path = op.path.replace(/\{(\w+)\}/g, (_m, k: string) => e(String(c.path[k] ?? '')));
  const pairs = queryPairs(op, c.query);
  return pairs.length ? `${path}?${pairs.map(([k, v]) => `${e(k)}=${e(v)}`).join('&')}` : path;
}
