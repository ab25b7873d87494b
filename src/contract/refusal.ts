import type { z } from 'zod';
import { REASONS, type ReasonCode } from '../domain/reasons';

/**
 * The one refusal type of every surface (the HTTP API, the MCP tools, the Temporal client) and the
 * one converter of a zod failure into it. Here, in the contract, because every layer raises it:
 * the client below the service and the API above it both import it from here, neither from the other.
 */

/** Every refusal a caller sees: a stable reason code, a fixed message and safe details. */
export class OwnershipError extends Error {
  constructor(
    readonly code: ReasonCode,
    message?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message ?? REASONS[code]);
    this.name = 'OwnershipError';
  }
}

/** A key we may name back: the caller made up unknown keys, and they may carry anything (NUL, markup, a token). */
const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]{0,63}$/;

/** What refusalFromIssues reads of an issue: zod's issues and Fastify's validation errors both have it. */
export interface IssueLike {
  code: string;
  path: readonly PropertyKey[];
  keys?: readonly string[];
}

/** A zod failure as a refusal: an unrecognised key is `unknown_field`, anything else `invalid_input`. Field paths only, never values. */
export function refusalFromIssues(issues: readonly IssueLike[]): OwnershipError {
  const unknown = issues.some((i) => i.code === 'unrecognized_keys');
  const fields = new Set<string>();
  for (const i of issues) {
    const base = i.path.map((c) => (typeof c === 'number' || PLAIN_KEY.test(String(c)) ? String(c) : '(unnamed)')).join('.');
    if (i.code === 'unrecognized_keys' && i.keys) for (const k of i.keys) fields.add(`${base ? `${base}.` : ''}${PLAIN_KEY.test(k) ? k : '(unnamed)'}`);
    else if (base) fields.add(base);
  }
  const list = [...fields].slice(0, 20).map((f) => f.slice(0, 100));
  return new OwnershipError(unknown ? 'unknown_field' : 'invalid_input', undefined, list.length ? { fields: list } : undefined);
}

/** Parses with a schema, refusing as every surface does (refusalFromIssues). */
export function parseInput<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw refusalFromIssues(parsed.error.issues);
}
