import type { z } from 'zod';

/**
 * Validators compiled from the zod schemas, for workflow code. The schemas stay the one home of
 * every rule; this turns one, once, into a plain function of its definition, so a workflow checks
 * its messages without calling into zod (whose instances are shared and frozen across workflows,
 * see src/infra/workers.ts WORKFLOW_PRELOAD_MODULES, and cost ~1 MiB per workflow when they are
 * not). Compile at module load; only the definition kinds our schemas use are supported, and any
 * other one fails the compile loudly. test/unit/domain-check.test.ts holds it to zod's verdicts.
 */

export type CheckFailure = 'unknown_field' | 'invalid_input';
export type Check = (x: unknown) => CheckFailure | null;

type Def = { type: string; [k: string]: unknown };
type CheckDef = { check: string; [k: string]: unknown };

const defOf = (s: unknown): Def => (s as { _zod: { def: Def } })._zod.def;
const checkDefOf = (c: unknown): CheckDef => (c as { _zod: { def: CheckDef } })._zod.def;

/** Worse wins: an unknown field anywhere is reported as such, as zod's issues would show it. */
const worst = (a: CheckFailure | null, b: CheckFailure | null): CheckFailure | null =>
  a === 'unknown_field' || b === 'unknown_field' ? 'unknown_field' : (a ?? b);

function compileChecks(checks: unknown, kind: 'string' | 'number' | 'array'): ((x: never) => boolean)[] {
  return ((checks as unknown[] | undefined) ?? []).map((c): ((x: never) => boolean) => {
    const d = checkDefOf(c);
    switch (d.check) {
      case 'min_length':
        return (s: string | unknown[]) => s.length >= (d.minimum as number);
      case 'max_length':
        return (s: string | unknown[]) => s.length <= (d.maximum as number);
      case 'string_format': {
        const given = d.pattern as RegExp | undefined;
        if (!(given instanceof RegExp)) throw new Error(`check: string format ${String(d.format)} without a pattern`);
        // A stateless copy: no lastIndex to carry between calls (and the shared one is frozen).
        const re = new RegExp(given.source, given.flags.replace(/[gy]/g, ''));
        return (s: string) => re.test(s);
      }
      case 'number_format':
        if (d.format !== 'safeint' && d.format !== 'int32') throw new Error(`check: number format ${String(d.format)}`);
        return (n: number) => Number.isSafeInteger(n);
      case 'greater_than':
        return (n: number) => (d.inclusive ? n >= (d.value as number) : n > (d.value as number));
      case 'less_than':
        return (n: number) => (d.inclusive ? n <= (d.value as number) : n < (d.value as number));
      case 'custom': {
        const fn = d.fn as (x: unknown) => unknown;
        return (x: never) => fn(x) === true;
      }
      default:
        throw new Error(`check: unsupported ${kind} check ${d.check}`);
    }
  });
}

function compileDef(schema: unknown): Check {
  const d = defOf(schema);
  switch (d.type) {
    case 'string': {
      const checks = compileChecks(d.checks, 'string');
      return (x) => (typeof x === 'string' && checks.every((c) => c(x as never)) ? null : 'invalid_input');
    }
    case 'number': {
      const checks = compileChecks(d.checks, 'number');
      return (x) => (typeof x === 'number' && Number.isFinite(x) && checks.every((c) => c(x as never)) ? null : 'invalid_input');
    }
    case 'boolean':
      return (x) => (typeof x === 'boolean' ? null : 'invalid_input');
    case 'enum': {
      const values = new Set(Object.values(d.entries as Record<string, unknown>));
      return (x) => (values.has(x) ? null : 'invalid_input');
    }
    case 'literal': {
      const values = new Set(d.values as unknown[]);
      return (x) => (values.has(x) ? null : 'invalid_input');
    }
    case 'optional': {
      const inner = compileDef(d.innerType);
      return (x) => (x === undefined ? null : inner(x));
    }
    case 'nullable': {
      const inner = compileDef(d.innerType);
      return (x) => (x === null ? null : inner(x));
    }
    case 'object': {
      if (!d.catchall || defOf(d.catchall).type !== 'never') throw new Error('check: only strict objects are supported');
      const fields = Object.entries(d.shape as Record<string, unknown>).map(([k, s]) => [k, compileDef(s)] as const);
      const known = new Set(fields.map(([k]) => k));
      return (x) => {
        if (typeof x !== 'object' || x === null || Array.isArray(x)) return 'invalid_input';
        const o = x as Record<string, unknown>;
        let verdict: CheckFailure | null = Object.keys(o).some((k) => !known.has(k)) ? 'unknown_field' : null;
        for (const [k, check] of fields) verdict = worst(verdict, check(o[k]));
        return verdict;
      };
    }
    case 'array': {
      const element = compileDef(d.element);
      const checks = compileChecks(d.checks, 'array');
      return (x) => {
        if (!Array.isArray(x) || !checks.every((c) => c(x as never))) return 'invalid_input';
        let verdict: CheckFailure | null = null;
        for (const e of x) verdict = worst(verdict, element(e));
        return verdict;
      };
    }
    default:
      throw new Error(`check: unsupported schema type ${d.type}`);
  }
}

/** A plain validator with zod's verdict for `schema` (accepted, or which kind of refusal). */
export function compileCheck<S extends z.ZodType>(schema: S): (x: unknown) => x is z.infer<S> {
  const check = compileDef(schema);
  const accepts = (x: unknown): x is z.infer<S> => check(x) === null;
  return Object.assign(accepts, { failure: check });
}

/** Why `compileCheck`'s validator refused (null when it accepts). */
export function checkFailure(validator: (x: unknown) => boolean, x: unknown): CheckFailure | null {
  return (validator as unknown as { failure: Check }).failure(x);
}
