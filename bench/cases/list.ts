import { isDeepStrictEqual } from 'node:util';
import type { Pool } from 'pg';
import { OwnershipRecordSchema, project } from '../../src/domain/projection';
import { readEvents } from '../../src/store/event-store';
import { listOwnerships } from '../../src/store/lookups';
import { round } from '../breakdown';
import type { BenchContext } from '../context';
import { latencyRow, type Row } from '../report';
import { log } from '../stack';
import { summarize, timeOnce } from '../stats';
import { lifecycle, type SyntheticIdentity } from '../synthetic';

export const HISTORY_REPO = '/srv/bench-history/product';
const HOST = 'bench-history-host';

/**
 * Templates of historical ownerships: each one's events and folded record (by the product's own
 * reducer), with placeholders the SQL below replaces per row. 1 in 10 still active, 1 in 10 closed
 * (worktree removed), the rest released.
 */
function templates(repoRoot: string) {
  const id: SyntheticIdentity = {
    ownershipId: 'own_@@ID@@',
    repoRoot,
    worktreePath: `${repoRoot}/.worktrees/h-@@N@@`,
    branch: 'hist/h-@@N@@',
    hostId: HOST,
    executionSessionId: 'hist-session-@@N@@',
    workerId: 'hist-worker-@@N@@',
  };
  const make = (state: 'active' | 'released' | 'closed', classes: number[]) => {
    const events = lifecycle(id, state, '@@T1@@', '@@T2@@');
    const record = project(events)!;
    return { state, classes, events: events.map((e) => JSON.stringify(e)), record: JSON.stringify(record), updatedAt: events.length > 1 ? '@@T2@@' : '@@T1@@' };
  };
  return [make('active', [0]), make('closed', [1]), make('released', [2, 3, 4, 5, 6, 7, 8, 9])];
}

const R = (x: string) => `replace(replace(replace(replace(${x}, '@@ID@@', g.id), '@@N@@', g.n), '@@T1@@', g.t1s), '@@T2@@', g.t2s)`;
const GEN = `SELECT i::text AS n, upper(lpad(to_hex(i), 26, '0')) AS id,
    to_char((timestamptz '2024-01-01T00:00:00Z' + i * interval '5 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS t1s,
    to_char((timestamptz '2024-01-01T01:00:00Z' + i * interval '5 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS t2s
  FROM generate_series($1::int, $2::int) AS i WHERE i % 10 = ANY($3::int[])`;

/**
 * Inserts historical ownerships [from, to] the way appendEvents leaves them (log rows, projection
 * row with its columns taken from the record, branch_names), in set-based statements: every
 * column is derived from the event / record JSON, exactly as the store derives it.
 */
export async function insertHistory(pool: Pool, repoRoot: string, from: number, to: number): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    for (const t of templates(repoRoot)) {
      const params = [from, to, t.classes];
      await client.query(
        `INSERT INTO ownership_events (ownership_id, seq, type, at, actor_session_id, repo_root, worktree_path, branch, host_id, event)
         SELECT e->>'ownershipId', (e->>'seq')::int, e->>'type', (e->>'at')::timestamptz, e->'actor'->>'executionSessionId',
                e->>'repoRoot', e->>'worktreePath', e->>'branch', e->>'hostId', e
           FROM (SELECT ${R('t.tpl')}::jsonb AS e FROM (${GEN}) g CROSS JOIN unnest($4::text[]) AS t(tpl)) s`,
        [...params, t.events],
      );
      await client.query(
        `INSERT INTO ownerships (ownership_id, workflow_id, repo_root, worktree_path, branch, host_id, state, epoch, seq,
            owner_session_id, owner_worker_id, conversation_id, lane, plan_ref, claimed_at, last_seen_at, updated_at, record)
         SELECT r->>'ownershipId', 'ownership/history/' || (r->>'ownershipId'), r->>'repoRoot', r->>'worktreePath', r->>'branch', r->>'hostId',
                r->>'state', (r->>'epoch')::int, (r->>'seq')::int, r->'owner'->>'executionSessionId', r->'worker'->>'workerId',
                r->'owner'->'conversation'->>'conversationId', r->>'lane', r->>'planRef', (r->>'claimedAt')::timestamptz,
                (r->>'lastSeenAt')::timestamptz, u::timestamptz, r
           FROM (SELECT ${R('$4::text')}::jsonb AS r, ${R('$5::text')} AS u FROM (${GEN}) g) s`,
        [...params, t.record, t.updatedAt],
      );
      await client.query(
        `INSERT INTO branch_names (ownership_id, repo_root, branch, from_seq)
         SELECT 'own_' || g.id, $4::text, 'hist/h-' || g.n, 1 FROM (${GEN}) g`,
        [...params, repoRoot],
      );
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Grows the history to `total` ownerships in batches, with progress; then ANALYZE as autovacuum would. */
async function growHistory(pool: Pool, from: number, total: number): Promise<number> {
  const t0 = Date.now();
  const batch = 20_000;
  for (let start = from; start <= total; start += batch) {
    const end = Math.min(total, start + batch - 1);
    await insertHistory(pool, HISTORY_REPO, start, end);
    log(`list: historical ownerships ${end}/${total} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  }
  await pool.query('ANALYZE ownerships; ANALYZE ownership_events; ANALYZE branch_names');
  return Date.now() - t0;
}

/** The synthetic rows must be what the product would have written: the log folds to the stored record. */
async function verifySample(pool: Pool, ids: number[]): Promise<void> {
  for (const i of ids) {
    const ownershipId = `own_${i.toString(16).toUpperCase().padStart(26, '0')}`;
    const events = await readEvents(pool, ownershipId); // parses every event with the event schemas
    const row = await pool.query<{ record: unknown }>('SELECT record FROM ownerships WHERE ownership_id = $1', [ownershipId]);
    const stored = OwnershipRecordSchema.parse(row.rows[0]?.record);
    if (!isDeepStrictEqual(project(events), stored)) throw new Error(`synthetic ownership ${ownershipId}: log and projection disagree`);
  }
}

async function measureList(pool: Pool, warmup: number, iterations: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < warmup + iterations; i++) {
    let page: Awaited<ReturnType<typeof listOwnerships>> | undefined;
    const t = await timeOnce(async () => {
      page = await listOwnerships(pool, { repoRoot: HISTORY_REPO, limit: 50 });
    });
    if (page?.items.length !== 50 || page.nextCursor === null) throw new Error('list: expected a full first page');
    if (i >= warmup) out.push(t);
  }
  return out;
}

/**
 * 7. listOwnerships by repoRoot, first page (50), with 1,000 historical ownerships of that
 *    repository in PostgreSQL, then again after growing the history to 100,000 (scaled).
 */
export async function benchList(ctx: BenchContext): Promise<Row> {
  const { pool } = ctx.stack;
  const { small, large, warmup, iterations } = ctx.sizes.list;
  const smallMs = await growHistory(pool, 1, small);
  await verifySample(pool, [1, 2, 10, 11, small]);
  const atSmall = await measureList(pool, warmup, iterations);
  const largeMs = await growHistory(pool, small + 1, large);
  await verifySample(pool, [small + 1, Math.floor(large / 2), large]);
  const atLarge = await measureList(pool, warmup, iterations);
  const ours = summarize(atLarge);
  const base = summarize(atSmall);
  const counts = await pool.query<{ o: string; e: string }>('SELECT (SELECT count(*) FROM ownerships) AS o, (SELECT count(*) FROM ownership_events) AS e');
  return latencyRow(
    'list',
    `listOwnerships by repoRoot, ${large.toLocaleString('en')} history`,
    ours,
    base,
    `the same with ${small.toLocaleString('en')} history`,
    { on: 'ratio', op: '<=', value: 1.5, stat: 'p50' },
    {
      historicalOwnerships: { small, large },
      rowsAtEnd: { ownerships: Number(counts.rows[0].o), ownershipEvents: Number(counts.rows[0].e) },
      insertSeconds: { small: round(smallMs / 1000), large: round(largeMs / 1000) },
      insertMethod:
        'set-based INSERT … SELECT over generate_series, columns derived from event/record JSON built by the product reducer; samples verified (log folds to record)',
    },
  );
}
