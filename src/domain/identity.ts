import { z } from 'zod';
import { refusal, type Refusal } from './reasons';

/** Identities (docs/identities.md). Pure: imported by workflow code too. */

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** Identifiers chosen by callers: printable, bounded, no whitespace, so they are safe in git config and logs. */
export const IdString = z.string().min(1).max(200).regex(/^[A-Za-z0-9._:@/+-]+$/, 'identifier characters only');
/**
 * Text every later store can hold: PostgreSQL refuses NUL and lone surrogates, git config (lane,
 * plan) control characters. Refused here, at the edge, rather than wedging a store that retries.
 */
const storable = (s: string) => !/[\x00-\x1f\x7f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
/** UTF-8 length without Buffer (not there in workflow code). */
function utf8Length(s: string): number {
  let n = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return n;
}
export const FreeText = z.string().max(500).refine(storable, 'control characters and unpaired surrogates are not allowed');
/** A branch name git would accept (check-ref-format, conservatively) and every store can hold. */
export const BranchName = z
  .string()
  .min(1)
  .max(255)
  .refine((b) => storable(b) && !/[\s~^:?*[\\]|\.\.|@\{|\/\/|^[-/.]|\/\.|[/.]$|\.lock$|^@$/.test(b), 'not a valid branch name');
/** An absolute or relative path, bounded like the kernel bounds it (a component of at most 255 bytes). */
export const PathString = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => storable(p) && p.split('/').every((c) => utf8Length(c) <= 255), 'not a usable path');
export const IsoTime = z.string().datetime({ offset: true });
export const OwnershipIdSchema = z.string().regex(/^own_[0-9A-HJKMNP-TV-Z]{26}$/, 'own_<ULID>');

export const ConversationSchema = z.strictObject({
  provider: z.literal('chatgpt-web'),
  conversationId: z.string().regex(UUID_RE),
  conversationUrl: z.string().url(),
  title: FreeText.nullable().optional(),
  observedAt: IsoTime,
});
export type Conversation = z.infer<typeof ConversationSchema>;

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
    u.protocol === 'https:' && !u.username && !u.password && u.port === '' && ['chatgpt.com', 'www.chatgpt.com', 'chat.openai.com'].includes(u.hostname.toLowerCase());
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
