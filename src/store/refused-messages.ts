import type { Pool } from 'pg';
import { type RefusedMessageRow } from '../contract/history-rows';

/**
 * Messages an ownership refused for want of a service seal (src/workflows/seal.ts): written by the
 * worker's audit sink, read beside the events by `history`. Best effort by design: a sink runs
 * outside the workflow, so a refusal the worker could not write (PostgreSQL away) is logged instead.
 */

export { RefusedMessageRowSchema, type RefusedMessageRow } from '../contract/history-rows';

export interface RefusedMessageInput {
  ownershipId: string;
  workflowId: string;
  runId: string;
  message: string;
  messageId: string | null;
  code: string;
  problem: string;
  claimedPrincipal: string | null;
}

// eslint-disable-next-line no-control-regex -- control characters are what this screens out
const clip = (s: string | null, n: number): string | null => (s === null ? null : s.replace(/[\u0000-\u001f\u007f]/g, '?').slice(0, n));

export async function recordRefusedMessage(pool: Pool, m: RefusedMessageInput): Promise<void> {
  // What came from the message is clipped and cleaned: an intruder chooses it.
  await pool.query(
    `INSERT INTO refused_messages (ownership_id, workflow_id, run_id, message, message_id, code, problem, claimed_principal) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [m.ownershipId, m.workflowId, m.runId, clip(m.message, 100), clip(m.messageId, 200), m.code, m.problem, clip(m.claimedPrincipal, 200)],
  );
}

/** The latest refused messages of each ownership, oldest first (at most `limit` each). */
export async function refusedMessagesOf(pool: Pool, ownershipIds: readonly string[], limit = 50): Promise<Map<string, RefusedMessageRow[]>> {
  const out = new Map<string, RefusedMessageRow[]>();
  if (ownershipIds.length === 0) return out;
  const { rows } = await pool.query(
    `SELECT ownership_id, message, message_id, code, problem, claimed_principal, received_at FROM (
       SELECT r.*, row_number() OVER (PARTITION BY ownership_id ORDER BY id DESC) AS n FROM refused_messages r WHERE ownership_id = ANY($1)
     ) x WHERE n <= $2 ORDER BY id`,
    [ownershipIds, limit],
  );
  for (const r of rows) {
    const row: RefusedMessageRow = {
      ownershipId: r.ownership_id,
      message: r.message,
      messageId: r.message_id,
      code: r.code,
      problem: r.problem,
      claimedPrincipal: r.claimed_principal,
      receivedAt: new Date(r.received_at).toISOString(),
    };
    out.set(row.ownershipId, [...(out.get(row.ownershipId) ?? []), row]);
  }
  return out;
}

/** The code a message was refused with (a signal the API sent under `messageId`), or null while none is recorded. */
export async function refusalOf(pool: Pool, ownershipId: string, messageId: string): Promise<string | null> {
  const { rows } = await pool.query<{ code: string }>('SELECT code FROM refused_messages WHERE ownership_id = $1 AND message_id = $2 ORDER BY id LIMIT 1', [
    ownershipId,
    messageId,
  ]);
  return rows[0]?.code ?? null;
}
