import { z } from 'zod';
import { FREE_STATES, isFreeState } from '../domain/states';
import { MAX_HOLDS, TENURE_HASH_WORDS } from '../domain/tenure';
import { GitSideError } from './errors';
import { HOLD_KEY_PREFIX, HOLD_KEYS } from './projection-keys';

export * from './projection-keys';

/**
 * The local projection's format: the fields, their git config keys, and the one config file
 * (overdeck.config) od-worktree writes whole and the hooks read (hooks/overdeck-guard.sh, with
 * shell builtins, and src/gate/guard.ts). Rendering and parsing are inverse over one table of keys. Pure.
 */

/** Values go into git config and into hook messages: one line, no control characters. */
const text = z
  .string()
  .max(2048)
  // eslint-disable-next-line no-control-regex -- control characters are what this screens out
  .regex(/^[^\x00-\x1f\x7f]*$/, 'control characters are not allowed');
const required = text.min(1);
const instant = required.refine((s) => !Number.isNaN(Date.parse(s)), 'not a timestamp');
const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const tenureHashWords = z.string().regex(TENURE_HASH_WORDS, 'lowercase hex SHA-256 digests, space separated');

/**
 * A live child hold's standing in the worktree (docs/ownership-record.md#child-holds): its id, the
 * child session and the hashes of the child's own tenure secret (src/keys/tenure.ts
 * holdTenureHashWords), under the owner's tenure and epoch. A hold's id names a config subsection
 * (`overdeck.hold.<holdId>.*`), so it is identifier characters only, never a quote or a backslash.
 */
export const ProjectedHoldSchema = z.strictObject({
  holdId: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9_:@+-][A-Za-z0-9._:@+-]*$/, 'identifier characters only'),
  executionSessionId: required,
  tenureHash: tenureHashWords,
});
export type ProjectedHold = z.infer<typeof ProjectedHoldSchema>;

export const LocalProjectionSchema = z.object({
  ownershipId: required,
  executionSessionId: required,
  runtime: required,
  conversationId: text.nullable(),
  conversationUrl: text.nullable(),
  workerId: text.nullable(),
  runId: text.nullable(),
  lane: text.nullable(),
  planRef: text.nullable(),
  epoch: count,
  seq: count,
  state: required,
  claimedAt: instant,
  lastSeenAt: instant,
  provisional: z.boolean().optional(),
  idempotencyKey: text.nullable().optional(),
  /** SHA-256 of the tenure's secret for each service key (src/keys/tenure.ts): a hash, never the secret. Absent: no proof to ask for (a provisional claim, a writer without the key). */
  tenureHash: tenureHashWords.nullable().optional(),
  /** The live child holds under this tenure whose hashes the writer had (absent or empty: none). Written only beside the owner's tenureHash. */
  holds: z.array(ProjectedHoldSchema).max(MAX_HOLDS).optional(),
});

export type LocalProjection = z.infer<typeof LocalProjectionSchema>;

/** States in which nobody holds the worktree (src/domain/states.ts): the guard lets anyone through and the lock is dropped. */
export const NON_LIVE_STATES: readonly string[] = FREE_STATES;

/** A local projection's state holds the worktree: any durable held state, and a provisional claim. */
export function isLiveState(state: string): boolean {
  return !isFreeState(state);
}

/** The fields of one key each; `holds` is a subsection per hold (HOLD_KEY_PREFIX). */
type Field = Exclude<keyof LocalProjection, 'holds'>;

/** git config key of every field (docs/git-projection.md, Keys): the one table both directions use. */
export const PROJECTION_KEYS: Readonly<Record<Field, string>> = {
  ownershipId: 'overdeck.owner.ownership-id',
  executionSessionId: 'overdeck.owner.execution-session-id',
  runtime: 'overdeck.owner.runtime',
  conversationId: 'overdeck.owner.conversation-id',
  conversationUrl: 'overdeck.owner.conversation-url',
  workerId: 'overdeck.owner.worker-id',
  runId: 'overdeck.owner.run-id',
  lane: 'overdeck.lane',
  planRef: 'overdeck.plan-ref',
  epoch: 'overdeck.owner.epoch',
  seq: 'overdeck.owner.seq',
  state: 'overdeck.owner.state',
  claimedAt: 'overdeck.owner.claimed-at',
  lastSeenAt: 'overdeck.owner.last-seen-at',
  provisional: 'overdeck.owner.provisional',
  idempotencyKey: 'overdeck.owner.idempotency-key',
  tenureHash: 'overdeck.owner.tenure-hash',
};

const NUMERIC: ReadonlySet<Field> = new Set<Field>(['epoch', 'seq']);
const BOOLEAN: ReadonlySet<Field> = new Set<Field>(['provisional']);
const FIELD_BY_KEY = new Map<string, Field>(Object.entries(PROJECTION_KEYS).map(([f, k]) => [k, f as Field]));

/** Include target, relative so git resolves it next to config.worktree (the private git dir) even if the repo moves. */
export const PROJECTION_FILE = 'overdeck.config';

function quote(v: string): string {
  return `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The whole key set as one config file; absent (null/undefined) fields are simply not written. */
export function renderProjection(p: LocalProjection): string {
  const sections = new Map<string, string[]>();
  for (const [field, key] of Object.entries(PROJECTION_KEYS) as [Field, string][]) {
    const value = p[field];
    if (value === null || value === undefined) continue;
    const parts = key.split('.');
    const name = parts.pop() as string;
    const header = parts.length === 2 ? `[${parts[0]} "${parts[1]}"]` : `[${parts[0]}]`;
    const lines = sections.get(header) ?? [];
    lines.push(`\t${name} = ${quote(String(value))}`);
    sections.set(header, lines);
  }
  for (const h of p.holds ?? []) {
    sections.set(`[overdeck "hold.${h.holdId}"]`, [
      `\t${HOLD_KEYS.executionSessionId} = ${quote(h.executionSessionId)}`,
      `\t${HOLD_KEYS.tenureHash} = ${quote(h.tenureHash)}`,
    ]);
  }
  const body = [...sections].map(([header, lines]) => `${header}\n${lines.join('\n')}\n`).join('');
  return `# Written by od-worktree; replaced as a whole on every change. Do not edit.\n${body}`;
}

/** Inverse of renderProjection over `git config` output; null when no projection key is present. */
export function parseProjectionEntries(entries: ReadonlyMap<string, string>): LocalProjection | null {
  const raw: Record<string, unknown> = {};
  const holds = new Map<string, Record<string, string>>();
  let any = false;
  for (const [key, value] of entries) {
    const hold = holdKeyOf(key);
    if (hold !== null) {
      const h = holds.get(hold.holdId) ?? { holdId: hold.holdId };
      h[hold.field] = value;
      holds.set(hold.holdId, h);
      continue;
    }
    const field = FIELD_BY_KEY.get(key);
    if (field === undefined) continue;
    any = true;
    if (NUMERIC.has(field)) raw[field] = /^\d+$/.test(value) ? Number(value) : value;
    else if (BOOLEAN.has(field)) raw[field] = value === 'true' ? true : value === 'false' ? false : value;
    else raw[field] = value;
  }
  if (!any) return null;
  for (const field of ['conversationId', 'conversationUrl', 'workerId', 'runId', 'lane', 'planRef'] as const) raw[field] ??= null;
  if (holds.size > 0) raw.holds = [...holds.values()];
  const parsed = LocalProjectionSchema.safeParse(raw);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => i.path.join('.')).join(', ');
    throw new GitSideError('projection_corrupt', `overdeck keys present but invalid (${fields})`);
  }
  return parsed.data;
}

/**
 * The hold and field a `overdeck.hold.<holdId>.<key>` key names (git lowercases the key, never the
 * subsection); null for any other key. A key of a hold's section this version does not write is
 * kept under its own name, which the strict hold schema refuses: corrupt, never ignored.
 */
function holdKeyOf(key: string): { holdId: string; field: string } | null {
  if (!key.startsWith(HOLD_KEY_PREFIX)) return null;
  const rest = key.slice(HOLD_KEY_PREFIX.length);
  const dot = rest.lastIndexOf('.');
  if (dot <= 0) return null;
  const name = rest.slice(dot + 1);
  const field = (Object.keys(HOLD_KEYS) as (keyof typeof HOLD_KEYS)[]).find((f) => HOLD_KEYS[f] === name);
  return { holdId: rest.slice(0, dot), field: field ?? name };
}

/** `git config -z` output: entries are `key\nvalue\0` (or `key\0` for a valueless boolean). */
export function parseConfigZ(out: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const entry of out.split('\0')) {
    if (entry === '') continue;
    const nl = entry.indexOf('\n');
    if (nl === -1) map.set(entry, 'true');
    else map.set(entry.slice(0, nl), entry.slice(nl + 1)); // later entries win, as in git
  }
  return map;
}
