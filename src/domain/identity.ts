import { z } from 'zod';
import { refusal, type Refusal } from './reasons';

/** Identities (docs/identities.md). Pure: imported by workflow code too. */

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** Identifiers chosen by callers: printable, bounded, no whitespace, so they are safe in git config and logs. */
/** A full object id (SHA-1 or SHA-256): an abbreviation is ambiguous over time and would break idempotency. */
export const FULL_SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
export const FullSha = z.string().regex(FULL_SHA);

export const IdString = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._:@/+-]+$/, 'identifier characters only');
/**
 * What every later store can hold, one character at a time: PostgreSQL refuses NUL and lone
 * surrogates, git config (lane, plan) and logs control characters. Refused here, at the edge,
 * rather than wedging a store that retries. A character class for `u`-flag regexes: there a
 * surrogate pair is one character, and only a lone surrogate falls in \uD800-\uDFFF.
 */
const UNSTORABLE = String.raw`\x00-\x1f\x7f\uD800-\uDFFF`;
/**
 * A string of `min` to `max` storable characters, refusing `also` (class syntax) as well. One
 * regex is the check and the document's pattern, and it counts code points as JSON Schema's
 * min/maxLength do (zod's .max() would count UTF-16 units: 300 emoji are 300 characters to a
 * client that follows the document, 600 to .max()). `lookahead` adds whole-string rules.
 */
function storableText(min: number, max: number, o: { also?: string; lookahead?: string; message: string }) {
  const re = new RegExp(`^${o.lookahead ?? ''}[^${UNSTORABLE}${o.also ?? ''}]{${min},${max}}$`, 'u');
  return z.string().regex(re, o.message).meta({ minLength: min, maxLength: max });
}
/** Storable text of `min` to `max` characters (code points), nothing else asked of it. */
export const StorableText = (min: number, max: number) => storableText(min, max, { message: 'control characters and unpaired surrogates are not allowed' });
export const FreeText = StorableText(0, 500);
/** A branch name git would accept (check-ref-format, conservatively) and every store can hold. */
export const BranchName = storableText(1, 255, {
  also: String.raw`\s~^:?*[\\`,
  lookahead: String.raw`(?!.*(?:\.\.|@\{|//|/\.|[/.]$|\.lock$))(?![-/.])(?!@$)`,
  message: 'not a valid branch name',
});
/**
 * An absolute or relative path: storable, at most 4096 characters, each component at most 255.
 * The kernel counts bytes (NAME_MAX, PATH_MAX): a path within these bounds that is longer in
 * UTF-8 cannot exist, and the path normaliser says so (path_not_found), as it says of any other
 * path that does not resolve.
 */
export const PathString = z
  .string()
  .regex(new RegExp(`^(?=[\\s\\S]{1,4096}$)/*(?:[^/${UNSTORABLE}]{1,255}(?:/+|$))*$`, 'u'), 'not a usable path')
  .meta({ minLength: 1, maxLength: 4096 });
export const IsoTime = z.string().datetime({ offset: true });

// A calendar date of 1970..9998 (the leap days of those years only), a time, an offset of at most ±14:00.
const YEAR = String.raw`(?:19[7-9]\d|[2-8]\d{3}|9(?:[0-8]\d\d|9[0-8]\d|99[0-8]))`;
const LEAP_YEAR = String.raw`(?:19(?:[79][26]|8[048])|[2-9]\d(?:[2468][048]|[13579][26]|0[48])|(?:[2468][048]|[3579][26])00)`;
const MONTH_DAY = String.raw`(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|02-(?:0[1-9]|1\d|2[0-8]))`;
const TIME_OF_DAY = String.raw`T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?(?:Z|[+-](?:(?:0\d|1[0-3]):[0-5]\d|14:00))`;
const STORABLE_TIME = new RegExp(`^(?:${LEAP_YEAR}-02-29|${YEAR}-${MONTH_DAY})${TIME_OF_DAY}$`);
/**
 * A time as a caller may give it (a landing, an observation, a reconciliation): RFC 3339, a
 * calendar date of 1970 to 9998, an offset within ±14:00, at most 9 fractional digits. Every such
 * time is one JavaScript and PostgreSQL (timestamptz) both hold, its instant within 1969-12-31 and
 * 9999-01-01 in UTC. IsoTime stays as it was for what is already stored.
 */
export const StorableTime = z
  .string()
  .regex(STORABLE_TIME, 'an RFC 3339 time of 1970 to 9998, offset within ±14:00')
  .meta({ format: 'date-time', description: 'RFC 3339 (e.g. 2026-05-01T12:00:00Z): a date of 1970 to 9998, an offset within ±14:00' });
/** A caller's time, normalised to UTC with millisecond precision: one spelling per instant wherever it is stored. */
export const IsoTimeInput = StorableTime.transform((t) => new Date(t).toISOString()).meta({
  description: 'RFC 3339 (e.g. 2026-05-01T12:00:00Z): a date of 1970 to 9998, an offset within ±14:00; stored in UTC, to the millisecond',
});
export const OwnershipIdSchema = z.string().regex(/^own_[0-9A-HJKMNP-TV-Z]{26}$/, 'own_<ULID>');

export const ConversationSchema = z.strictObject({
  provider: z.literal('chatgpt-web'),
  conversationId: z.string().regex(UUID_RE),
  conversationUrl: z.string().url(),
  title: FreeText.nullable().optional(),
  observedAt: IsoTime,
});
export type Conversation = z.infer<typeof ConversationSchema>;
/**
 * A conversation as the service stores it (canonicalConversation: `https://chatgpt.com/c/<uuid>`),
 * the shape messages carry to workflows: checkable by a plain pattern, without a URL parser.
 */
export const CanonicalConversationSchema = ConversationSchema.extend({
  conversationUrl: z.string().regex(/^https:\/\/chatgpt\.com\/c\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
});

/** The orchestrator's logical worker (docs/identities.md#agent-worker). Called AgentWorkerRef in code: Worker/runId already mean Temporal things. */
export const AgentWorkerRefSchema = z.strictObject({
  runId: IdString.nullable(),
  workerId: IdString,
});
export type AgentWorkerRef = z.infer<typeof AgentWorkerRefSchema>;

/** Enough to ask a local liveness authority whether the session's process still exists. */
export const ProcessIdentitySchema = z.strictObject({
  hostId: IdString,
  bootId: IdString,
  pid: z.number().int().positive(),
  startTime: z.string().min(1).max(64),
});
export type ProcessIdentity = z.infer<typeof ProcessIdentitySchema>;

export const OwnerSchema = z.strictObject({
  executionSessionId: IdString,
  runtime: IdString,
  parentExecutionSessionId: IdString.nullable(),
  conversation: ConversationSchema.nullable(),
  worker: AgentWorkerRefSchema.nullable(),
  process: ProcessIdentitySchema.nullable(),
});
export type Owner = z.infer<typeof OwnerSchema>;

export const PrincipalSchema = z.strictObject({
  kind: z.enum(['executor', 'landing', 'admin', 'reader', 'system']),
  id: IdString,
  /** executors are bound to one agent worker (workerId, runId) */
  workerId: IdString.nullable().optional(),
  runId: IdString.nullable().optional(),
});
export type Principal = z.infer<typeof PrincipalSchema>;

export const WorktreeRefSchema = z.strictObject({
  repoRoot: PathString,
  worktreePath: PathString,
  branch: BranchName,
  hostId: IdString,
  /**
   * false: the starter could not ask git (the worktree is on another host), so repoRoot and the
   * path's spelling are the caller's; the workflow has the host check both before the first claim.
   */
  verified: z.boolean().optional(),
});
export type WorktreeRef = z.infer<typeof WorktreeRefSchema>;

/**
 * Canonical conversation identity from an observed URL and id (docs/identities.md, Conversation): lowercase UUID, never nil,
 * https://chatgpt.com/c/<uuid>, accepting /g/<gpt>/c/<uuid> and the legacy chat.openai.com host,
 * dropping query and fragment. The id and the URL must name the same conversation.
 */
export function canonicalConversationUrl(rawUrl: string): { uuid: string; url: string } | Refusal {
  let u: URL;
  try {
    u = new URL(rawUrl);
  } catch {
    return refusal('invalid_input', { field: 'conversationUrl' });
  }
  const hostOk =
    u.protocol === 'https:' &&
    !u.username &&
    !u.password &&
    u.port === '' &&
    ['chatgpt.com', 'www.chatgpt.com', 'chat.openai.com'].includes(u.hostname.toLowerCase());
  const m = /^\/(?:g\/[A-Za-z0-9_-]+\/)?c\/([0-9A-Fa-f-]{36})\/?$/.exec(u.pathname);
  if (!hostOk || !m) return refusal('invalid_input', { field: 'conversationUrl' });
  const uuid = m[1].toLowerCase();
  if (!UUID_RE.test(uuid)) return refusal('invalid_input', { field: 'conversationUrl' });
  if (uuid === NIL_UUID) return refusal('nil_uuid');
  return { uuid, url: `https://chatgpt.com/c/${uuid}` };
}

export function canonicalConversation(input: {
  conversationId: string;
  conversationUrl: string;
  title?: string | null;
  observedAt: string;
}): Conversation | Refusal {
  const id = input.conversationId.toLowerCase();
  if (!UUID_RE.test(id)) return refusal('invalid_input', { field: 'conversationId' });
  if (id === NIL_UUID) return refusal('nil_uuid');
  const url = canonicalConversationUrl(input.conversationUrl);
  if ('code' in url) return url;
  if (url.uuid !== id) return refusal('conversation_mismatch');
  return {
    provider: 'chatgpt-web',
    conversationId: id,
    conversationUrl: url.url,
    title: input.title ?? null,
    observedAt: input.observedAt,
  };
}
