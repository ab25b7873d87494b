import { LandingReceiptSchema, type LandingReceipt } from '../domain/events';
import type { Provenance } from '../contract/provenance';
import type { Pool } from './db';
import { headMatch } from './lookups';

/** The landing receipts provenance reads (src/provenance/provenance.ts): sent ones and those `landings scan` inferred. */
export interface StoredReceipt {
  /** position in landing order (landed_at, seq, ownership id): lower is earlier */
  order: number;
  receipt: LandingReceipt;
  kind: Provenance['receiptKind'];
  method: string | null;
}

const RECEIPT_ORDER = 'landed_at, seq, ownership_id';

/** Receipts sent by landing controllers, then those `landings scan` inferred (only when no sent one names the head). */
const ALL_RECEIPTS = `
  SELECT receipt, repo_root, landed_head, landed_at, seq, ownership_id, 'receipt' AS kind, NULL::text AS method FROM landing_receipts
  UNION ALL
  SELECT i.receipt, i.repo_root, i.landed_head, (i.receipt->>'landedAt')::timestamptz, 0, i.ownership_id, 'inferred', i.method
    FROM inferred_landings i WHERE i.receipt IS NOT NULL`;

function stored(rows: { receipt: unknown; kind: string; method: string | null }[]): StoredReceipt[] {
  return rows.map((r, i) => ({
    order: i,
    receipt: LandingReceiptSchema.parse(r.receipt),
    kind: r.kind === 'inferred' ? 'inferred' : 'receipt',
    method: r.method,
  }));
}

export async function receiptsByHead(pool: Pool, head: string, roots: string[]): Promise<StoredReceipt[]> {
  const res = await pool.query<{ receipt: unknown; kind: string; method: string | null }>(
    `SELECT receipt, kind, method FROM (${ALL_RECEIPTS}) r WHERE ${headMatch('$1')} ORDER BY (repo_root = ANY($2)) DESC, (kind = 'receipt') DESC, ${RECEIPT_ORDER} LIMIT 50`,
    [head, roots],
  );
  return stored(res.rows);
}

export async function receiptsOfRepo(pool: Pool, roots: string[]): Promise<StoredReceipt[]> {
  const res = await pool.query<{ receipt: unknown; kind: string; method: string | null }>(
    `SELECT receipt, kind, method FROM (${ALL_RECEIPTS}) r WHERE repo_root = ANY($1) ORDER BY ${RECEIPT_ORDER}`,
    [roots],
  );
  return stored(res.rows);
}

export async function receiptOf(pool: Pool, ownershipId: string, landedHead: string): Promise<StoredReceipt | null> {
  const res = await pool.query<{ receipt: unknown; kind: string; method: string | null }>(
    `SELECT receipt, kind, method FROM (${ALL_RECEIPTS}) r WHERE ownership_id = $1 AND landed_head = $2 ORDER BY (kind = 'receipt') DESC LIMIT 1`,
    [ownershipId, landedHead],
  );
  return stored(res.rows)[0] ?? null;
}

/** The principal ("kind:id") whose landing event recorded this receipt, if any. */
export async function landerPrincipalOf(pool: Pool, ownershipId: string, landedHead: string): Promise<string | null> {
  // The event's actor names the principal as "kind:id" (src/domain/decide.ts).
  const res = await pool.query<{ principal: string | null }>(
    `SELECT event->'actor'->>'principal' AS principal FROM ownership_events
      WHERE ownership_id = $1 AND type = 'ownership.landed' AND event->'data'->'receipt'->>'landedHead' = $2 ORDER BY seq LIMIT 1`,
    [ownershipId, landedHead],
  );
  return res.rows[0]?.principal ?? null;
}
