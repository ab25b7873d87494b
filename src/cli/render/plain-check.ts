import { CLI_ERROR_JSON_SCHEMA, WHO_OUTPUT_JSON_SCHEMA } from './output-schemas.generated';

/**
 * Plain checks of the CLI's own --json output, for the commands people call often (who): the zod
 * schemas of ./schemas.ts, turned into JSON Schema (output-schemas.generated.ts, written from them
 * by test/unit/render-plain-check.test.ts) and checked by the small interpreter below, so the hot
 * path loads neither zod nor the domain schemas. The zod schemas stay the contract and are what
 * integrators import; that test proves this check and zod accept and refuse the same values.
 */

type JsonSchema = { readonly [k: string]: unknown };
/** null: the value fits; else what is wrong, and where. */
type Check = (v: unknown, at: string) => string | null;

/** Keywords that say nothing about validity. */
const ANNOTATIONS = new Set(['$schema', 'description', 'title', 'default', 'examples', 'format']);
const KNOWN = new Set([
  ...ANNOTATIONS,
  'type',
  'const',
  'enum',
  'anyOf',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minItems',
  'maxItems',
]);

const typeOf = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v;
const fits = (want: string, v: unknown): boolean => {
  const t = typeOf(v);
  if (want === 'number') return (t === 'number' || t === 'integer') && Number.isFinite(v as number);
  return t === want;
};

/** Compiles once; a keyword it does not know is an error here, never a check silently skipped. */
export function compile(schema: JsonSchema): Check {
  const unknown = Object.keys(schema).filter((k) => !KNOWN.has(k));
  if (unknown.length > 0) throw new Error(`plain-check: unsupported JSON Schema keyword(s) ${unknown.join(', ')}`);
  // `format` is only an annotation when a pattern checks the same thing (zod writes both for its string formats).
  if (schema.format !== undefined && schema.pattern === undefined) throw new Error(`plain-check: format ${String(schema.format)} without a pattern`);
  const checks: Check[] = [];
  if (schema.anyOf !== undefined) {
    const alts = (schema.anyOf as JsonSchema[]).map(compile);
    checks.push((v, at) => (alts.some((c) => c(v, at) === null) ? null : `${at}: matches none of its alternatives`));
  }
  if (schema.type !== undefined) {
    const want = (Array.isArray(schema.type) ? schema.type : [schema.type]) as string[];
    checks.push((v, at) => (want.some((w) => fits(w, v)) ? null : `${at}: expected ${want.join(' or ')}, got ${typeOf(v)}`));
  }
  if ('const' in schema) checks.push((v, at) => (v === schema.const ? null : `${at}: expected ${JSON.stringify(schema.const)}`));
  if (schema.enum !== undefined) {
    const values = schema.enum as unknown[];
    checks.push((v, at) => (values.includes(v) ? null : `${at}: not one of ${values.map((x) => JSON.stringify(x)).join(', ')}`));
  }
  const str =
    (f: (s: string) => boolean, why: string): Check =>
    (v, at) =>
      typeof v !== 'string' || f(v) ? null : `${at}: ${why}`;
  const num =
    (f: (n: number) => boolean, why: string): Check =>
    (v, at) =>
      typeof v !== 'number' || f(v) ? null : `${at}: ${why}`;
  // Lengths in UTF-16 code units, as zod counts them.
  if (schema.minLength !== undefined) checks.push(str((s) => s.length >= (schema.minLength as number), `shorter than ${String(schema.minLength)}`));
  if (schema.maxLength !== undefined) checks.push(str((s) => s.length <= (schema.maxLength as number), `longer than ${String(schema.maxLength)}`));
  if (schema.pattern !== undefined) {
    const re = new RegExp(schema.pattern as string);
    checks.push(str((s) => re.test(s), 'does not have the expected form'));
  }
  if (schema.minimum !== undefined) checks.push(num((n) => n >= (schema.minimum as number), `below ${String(schema.minimum)}`));
  if (schema.maximum !== undefined) checks.push(num((n) => n <= (schema.maximum as number), `above ${String(schema.maximum)}`));
  if (schema.exclusiveMinimum !== undefined) checks.push(num((n) => n > (schema.exclusiveMinimum as number), `not above ${String(schema.exclusiveMinimum)}`));
  if (schema.exclusiveMaximum !== undefined) checks.push(num((n) => n < (schema.exclusiveMaximum as number), `not below ${String(schema.exclusiveMaximum)}`));
  if (schema.items !== undefined) {
    const item = compile(schema.items as JsonSchema);
    checks.push((v, at) => {
      if (!Array.isArray(v)) return null;
      for (let i = 0; i < v.length; i++) {
        const bad = item(v[i], `${at}.${i}`);
        if (bad) return bad;
      }
      return null;
    });
  }
  const arr =
    (f: (n: number) => boolean, why: string): Check =>
    (v, at) =>
      !Array.isArray(v) || f(v.length) ? null : `${at}: ${why}`;
  if (schema.minItems !== undefined) checks.push(arr((n) => n >= (schema.minItems as number), `fewer than ${String(schema.minItems)} items`));
  if (schema.maxItems !== undefined) checks.push(arr((n) => n <= (schema.maxItems as number), `more than ${String(schema.maxItems)} items`));
  if (schema.properties !== undefined || schema.required !== undefined || schema.additionalProperties !== undefined) {
    const props = new Map(Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>).map(([k, s]) => [k, compile(s)]));
    const required = (schema.required ?? []) as string[];
    const extra = schema.additionalProperties;
    if (extra !== undefined && extra !== false && !(typeof extra === 'object' && extra !== null && Object.keys(extra).length === 0)) {
      throw new Error('plain-check: additionalProperties other than false or {} is not supported');
    }
    checks.push((v, at) => {
      if (typeOf(v) !== 'object') return null;
      const o = v as Record<string, unknown>;
      for (const k of required) if (o[k] === undefined) return `${at}.${k}: missing`;
      for (const [k, x] of Object.entries(o)) {
        const c = props.get(k);
        if (c === undefined) {
          if (extra === false) return `${at}.${k}: not a field of this output`;
          continue;
        }
        // An optional field given as undefined is absent, as zod (and JSON.stringify) take it.
        if (x === undefined && !required.includes(k)) continue;
        const bad = c(x, `${at}.${k}`);
        if (bad) return bad;
      }
      return null;
    });
  }
  return (v, at) => {
    for (const c of checks) {
      const bad = c(v, at);
      if (bad) return bad;
    }
    return null;
  };
}

export interface PlainCheck {
  /** The value itself when it fits; throws, naming the first thing that does not, otherwise. */
  parse(value: unknown): unknown;
  /** null when it fits, else the first thing that does not. */
  problem(value: unknown): string | null;
}

function plainCheck(name: string, schema: JsonSchema): PlainCheck {
  let compiled: Check | undefined;
  const problem = (value: unknown) => (compiled ??= compile(schema))(value, '$');
  return {
    problem,
    parse(value) {
      const bad = problem(value);
      if (bad) throw new Error(`the ${name} to print does not match its schema: ${bad}`);
      return value;
    },
  };
}

/** WhoOutputSchema's plain check. */
export const WhoOutputCheck = plainCheck('who --json output', WHO_OUTPUT_JSON_SCHEMA);
/** CliErrorSchema's plain check. */
export const CliErrorCheck = plainCheck('--json failure', CLI_ERROR_JSON_SCHEMA);
