import { REDACTED } from '../auth/redact';
import type { OwnershipRecord } from '../domain/projection';
import type { LocalProjection } from '../git/projection';

/**
 * Over the HTTP API the durable record comes redacted for the token's principal: an executor
 * reading another worker's ownership gets the conversation URL as "[redacted]" (the id stays).
 * That placeholder must never be written into the worktree, and it is no disagreement with the
 * local projection either: the URL is taken from the local projection when it names the same
 * conversation (the host agent wrote it from the full record), else it is unknown (null), as the
 * host agent's next projection will fill in.
 */
export function withoutRedaction(record: OwnershipRecord | null, local: LocalProjection | null): OwnershipRecord | null {
  const conversation = record?.owner?.conversation;
  if (!record?.owner || !conversation || conversation.conversationUrl !== REDACTED) return record;
  const same = local !== null && local.conversationId === conversation.conversationId && local.conversationUrl !== REDACTED;
  const url = same ? local.conversationUrl : null;
  // localProjectionOf maps a missing URL to null; the record type has no way to say "not shown".
  return { ...record, owner: { ...record.owner, conversation: { ...conversation, conversationUrl: url as string } } };
}
