import { z } from 'zod';
import { refusal, type Refusal } from './reasons';

/** Identities of spec §4 / ARCHITECTURE §2. Pure: imported by workflow code too. */

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** Identifiers chosen by callers: printable, bounded, no whitespace, so they are safe in git config and logs. */
export const IdString = z.string().min(1).max(200).regex(/^[A-Za-z0-9._:@/+-]+$/, 'identifier characters only');
export const FreeText = z.string().max(500);
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

/** The spec's logical worker. Called AgentWorkerRef in code: Worker/runId already mean Temporal things. */
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
  repoRoot: z.string().min(1).max(4096),
  worktreePath: z.string().min(1).max(4096),
  branch: z.string().min(1).max(255),
  hostId: IdString,
});
export type WorktreeRef = z.infer<typeof WorktreeRefSchema>;

/**
 * Canonical conversation identity from an observed URL and id (spec §5): lowercase UUID, never nil,
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
