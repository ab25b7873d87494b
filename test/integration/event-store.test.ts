import { randomUUID } from 'node:crypto';
import { parseEvent, type OwnershipEvent } from '../../src/domain/events';
import { project, type OwnershipRecord } from '../../src/domain/projection';
import { createPool, type Pool } from '../../src/store/db';
import { appendEvents, readEvents, SecondLiveOwner } from '../../src/store/event-store';

/**
 * The log write against real PostgreSQL (src/store/event-store.ts, migrations/1700000000018):
 * with the record the log folds to before the batch, one statement writes the events, their
 * indexes and the row; without it (or with a row elsewhere) the write folds from the row as before.
 * Both paths leave the same tables, and PostgreSQL takes the writer's record only where the row
 * stands right at the batch: a base of another seq, a row behind the log, a retried batch and
 * another writer's events are each answered from the log, never from the writer's record.
 * Planted in the migration, each of these fails a test here: a rename that does not close the old
 * name, a receipt without its seq, the row's position unchecked, another writer's events unchecked
 * (then the fold path answers, in more than one statement).
 */
let pool: Pool;
beforeAll(() => {
  pool = createPool(process.env.OD_TEST_DATABASE_URL!);
});
afterAll(async () => pool?.end());

const AT = '2026-12-07T10:00:00.000Z';
const HEAD_A = 'a'.repeat(40);
const HEAD_B = 'b'.repeat(40);

/** A claim, a rename, a plan change, a landing and the same landing again: every index the log feeds. */
function lifecycle(ownershipId: string, worktreePath: string): OwnershipEvent[] {
  const place = { ownershipId, repoRoot: '/srv/es/repo', worktreePath, hostId: 'es-host' };
  const actor = { executionSessionId: `s-${ownershipId}`, principal: 'executor:es' };
  const receipt = {
    ownershipId,
    sourceBranch: 'feat/renamed',
    sourceHead: HEAD_A,
    landedBranch: 'main',
    landedHead: HEAD_B,
    landedAt: AT,
    worktreePath,
    executionSessionId: actor.executionSessionId,
    worker: null,
    conversation: null,
  };
  const raw = [
    {
      type: 'ownership.claimed',
      branch: 'feat/one',
      data: {
        owner: {
          executionSessionId: actor.executionSessionId,
          runtime: 'codex-cli',
          parentExecutionSessionId: null,
          conversation: null,
          worker: { runId: null, workerId: 'es-worker' },
          process: null,
        },
        epoch: 1,
        via: 'bind',
        handoffId: null,
        previousExecutionSessionId: null,
        lane: 'lane-a',
        planRef: null,
        requestId: null,
      },
    },
    { type: 'ownership.branch_renamed', branch: 'feat/one', data: { from: 'feat/one', to: 'feat/renamed' } },
    { type: 'ownership.plan_bound', branch: 'feat/renamed', data: { lane: 'lane-b', planRef: 'docs/plan.md', requestId: null } },
    { type: 'ownership.landed', branch: 'feat/renamed', data: { receipt } },
    { type: 'ownership.landed', branch: 'feat/renamed', data: { receipt } },
  ];
  return raw.map((e, i) => parseEvent({ ...place, ...e, seq: i + 1, at: AT, actor }));
}

/** Everything the log write leaves for an ownership, its id written as X so two ownerships compare. */
async function tables(ownershipId: string) {
  const q = async (sql: string) => {
    const rows = (await pool.query<Record<string, unknown>>(sql, [ownershipId])).rows.map(({ updated_at: _, ...r }) => r);
    return JSON.parse(JSON.stringify(rows).replaceAll(ownershipId, 'X')) as unknown;
  };
  return {
    row: await q('SELECT * FROM ownerships WHERE ownership_id = $1'),
    names: await q('SELECT * FROM branch_names WHERE ownership_id = $1 ORDER BY from_seq'),
    receipts: await q('SELECT * FROM landing_receipts WHERE ownership_id = $1 ORDER BY landed_head'),
    log: await q(
      'SELECT ownership_id, seq, type, at, actor_session_id, repo_root, worktree_path, branch, host_id, event, message_id FROM ownership_events WHERE ownership_id = $1 ORDER BY seq',
    ),
  };
}

/** The pool as the worker holds it, counting what each write asks of it. */
function counted(): { pool: Pool; calls: string[] } {
  const calls: string[] = [];
  const proxy = new Proxy(pool, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver) as unknown;
      if ((key === 'query' || key === 'connect') && typeof v === 'function')
        return (...args: unknown[]) => {
          calls.push(String(key));
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      return v;
    },
  });
  return { pool: proxy, calls };
}

const fresh = () => {
  const id = `own_${randomUUID().replace(/-/g, '')}`;
  return { id, workflowId: `ownership/test/${id}`, events: lifecycle(id, `/srv/es/repo/.worktrees/${id}`) };
};

test('with its base, each batch is one statement, and the tables are what the fold from the row leaves', async () => {
  const a = fresh();
  const b = fresh();
  const c = counted();
  let base: OwnershipRecord | null = null;
  for (const e of a.events) {
    const before = c.calls.length;
    const w = await appendEvents(c.pool, a.workflowId, [e], base);
    expect({ seq: e.seq, calls: c.calls.slice(before) }).toEqual({ seq: e.seq, calls: ['query'] });
    expect(w.durableSeq).toBe(e.seq);
    base = w.record;
  }
  // The other ownership the old way, its first two events in one batch.
  await appendEvents(pool, b.workflowId, b.events.slice(0, 2));
  for (const e of b.events.slice(2)) await appendEvents(pool, b.workflowId, [e]);

  const [ta, tb] = [await tables(a.id), await tables(b.id)];
  expect(ta).toEqual(tb);
  expect(ta.names).toEqual([
    { ownership_id: 'X', repo_root: '/srv/es/repo', branch: 'feat/one', from_seq: 1, to_seq: 1 },
    { ownership_id: 'X', repo_root: '/srv/es/repo', branch: 'feat/renamed', from_seq: 2, to_seq: null },
  ]);
  // The landing repeated keeps its first seq.
  expect(ta.receipts).toMatchObject([{ ownership_id: 'X', landed_head: HEAD_B, seq: 4, source_branch: 'feat/renamed', landed_branch: 'main' }]);
  expect(ta.row).toMatchObject([
    { state: 'landed', branch: 'feat/renamed', lane: 'lane-b', plan_ref: 'docs/plan.md', epoch: 1, seq: 5, owner_session_id: 's-X' },
  ]);
  const row = await pool.query<{ record: unknown }>('SELECT record FROM ownerships WHERE ownership_id = $1', [a.id]);
  expect(row.rows[0]!.record).toEqual(JSON.parse(JSON.stringify(project(await readEvents(pool, a.id)))));
});

test("a base at another seq, or a row behind the log, is answered from the log: the writer's record is not taken", async () => {
  const a = fresh();
  const w1 = await appendEvents(pool, a.workflowId, a.events.slice(0, 2), null);
  // A base that is not where the row stands (a doctored or stale one): its fold is not what goes in.
  const wrong = { ...w1.record!, seq: 1, lane: 'not-the-log' };
  const w2 = await appendEvents(pool, a.workflowId, [a.events[2]!], wrong);
  expect(w2.record).toEqual(project(a.events.slice(0, 3)));
  // A row that fell behind its log (a rebuild between writes): the writer's base, however right its
  // seq, is not what the row holds, so the log is folded onto the row instead.
  await pool.query('UPDATE ownerships SET seq = 1, record = $2::jsonb WHERE ownership_id = $1', [a.id, JSON.stringify(project(a.events.slice(0, 1)))]);
  const w3 = await appendEvents(pool, a.workflowId, [a.events[3]!], { ...w2.record!, lane: 'not-the-log' });
  expect(w3.record).toEqual(project(a.events.slice(0, 4)));
  const row = await pool.query<{ seq: number; lane: string; record: unknown }>('SELECT seq, lane, record FROM ownerships WHERE ownership_id = $1', [a.id]);
  expect(row.rows[0]).toEqual({ seq: 4, lane: 'lane-b', record: JSON.parse(JSON.stringify(project(a.events.slice(0, 4)))) });
  // The rename folded again from that row closes no name twice.
  expect((await tables(a.id)).names).toEqual([
    { ownership_id: 'X', repo_root: '/srv/es/repo', branch: 'feat/one', from_seq: 1, to_seq: 1 },
    { ownership_id: 'X', repo_root: '/srv/es/repo', branch: 'feat/renamed', from_seq: 2, to_seq: null },
  ]);
});

test("a retried batch changes nothing; another writer's events at its seqs come back as ahead and nothing is written", async () => {
  const a = fresh();
  const w1 = await appendEvents(pool, a.workflowId, a.events.slice(0, 2), null);
  const w2 = await appendEvents(pool, a.workflowId, [a.events[2]!], w1.record);
  const before = await tables(a.id);
  // The same batch again (its first attempt's answer was lost): in already.
  expect(await appendEvents(pool, a.workflowId, [a.events[2]!], w1.record)).toMatchObject({ durableSeq: 3, record: w2.record });
  // A batch decided otherwise at seq 3 (a lost task wrote the log's): the log's events, nothing of these.
  const other = parseEvent({ ...a.events[2]!, data: { lane: 'lane-z', planRef: null, requestId: null } });
  const c = counted();
  const w3 = await appendEvents(c.pool, a.workflowId, [other, { ...a.events[3]!, seq: 4 }], w1.record);
  expect(w3).toEqual({ durableSeq: 3, record: null, ahead: [a.events[2]] });
  expect(c.calls).toEqual(['query']);
  expect(await tables(a.id)).toEqual(before);
});

test('a second live owner of one worktree is refused through the one-statement write as through the fold', async () => {
  const a = fresh();
  const b = fresh();
  const same = (e: OwnershipEvent) => parseEvent({ ...e, worktreePath: a.events[0]!.worktreePath });
  await appendEvents(pool, a.workflowId, [a.events[0]!], null);
  await expect(appendEvents(pool, b.workflowId, [same(b.events[0]!)], null)).rejects.toBeInstanceOf(SecondLiveOwner);
  await expect(appendEvents(pool, b.workflowId, [same(b.events[0]!)])).rejects.toBeInstanceOf(SecondLiveOwner);
  expect(await readEvents(pool, b.id)).toEqual([]);
});
