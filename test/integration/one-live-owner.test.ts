import { createHash } from 'node:crypto';
import path from 'node:path';
import { runner } from 'node-pg-migrate';
import { Pool } from 'pg';
import { OwnershipError } from '../../src/client';
import type { OwnershipViewOut } from '../../src/contract/http';
import { readProjection } from '../../src/git/projection';
import { dropDatabase, ensureDatabase } from '../../src/infra/postgres';
import { createServicePort } from '../../src/reconcile/service-port';
import { MIGRATIONS_DIR, migrate } from '../../src/store/db';
import { executorPrincipal } from '../support/harness';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';

/**
 * One worktree, one live owner, enforced by PostgreSQL (migrations/1700000000010_one-live-owner.sql)
 * whatever workflow id an ownership runs under, and at bind for a worktree moved while owned.
 */

let s: ApiStack;
let repo: RepoFixture;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(4);
});
afterAll(async () => s?.stop());

function expectError(res: { status: number; body: unknown }, status: number, code: string): void {
  expect({ status: res.status, code: (res.body as { code?: string }).code }).toEqual({ status, code });
}

/** The workflow id formula before the host id replaced the repository root (src/domain/workflow-id.ts, commit ec597eb). */
function oldShapeWorkflowId(repoRoot: string, worktreePath: string): string {
  const digest = createHash('sha256').update(`${repoRoot}\0${worktreePath}`).digest('hex').slice(0, 12);
  const clean = (x: string) => x.replace(/[^A-Za-z0-9._-]/g, '_') || '_';
  return `ownership/${clean(path.basename(repoRoot))}/${clean(path.basename(worktreePath))}/${digest}`;
}

async function heldAt(worktreePath: string): Promise<string[]> {
  const res = await s.h.pool.query<{ id: string }>(
    `SELECT ownership_id AS id FROM ownerships WHERE worktree_path = $1 AND state IN ('active', 'handoff_pending', 'stale', 'submitted')`,
    [worktreePath],
  );
  return res.rows.map((r) => r.id);
}

/** A bind over HTTP naming the branch git has checked out (what any caller would send). */
const bindRaw = (worktreePath: string, session: string, token: string) =>
  s.raw('POST', '/v1/bind', {
    token,
    body: { worktreePath, branch: git(worktreePath, 'symbolic-ref', '--short', 'HEAD'), executionSessionId: session, runtime: 'codex-cli' },
  });

test('(a) a live ownership under the old workflow id shape: a bind gets worktree_owned, through the API and straight through Temporal alike', async () => {
  const wt = repo.worktrees[0]!;
  const oldId = oldShapeWorkflowId(repo.repoRoot, wt.path);
  // A lifecycle as a client before the id formula changed started it: the claim is routed to the
  // old-shape id (the harness's client, which sends messages as the service does).
  const old = await s.h.client.bind(
    {
      worktreePath: wt.path,
      executionSessionId: 'lo-old',
      runtime: 'codex-cli',
      worker: { workerId: s.workerId, runId: null },
      principal: executorPrincipal(s.workerId),
    },
    { workflowId: oldId },
  );
  const row = await s.h.pool.query<{ workflow_id: string }>('SELECT workflow_id FROM ownerships WHERE ownership_id = $1', [old.ownershipId]);
  expect(row.rows[0]!.workflow_id).toBe(oldId);
  expect(oldId).not.toBe(await s.h.client.workflowIdOf({ worktreePath: wt.path }));

  // Through the API: refused, naming the live owner; its own replay is answered from its lifecycle.
  const other = await bindRaw(wt.path, 'lo-new', s.tokens.otherExecutor);
  expectError(other, 409, 'worktree_owned');
  expect((other.body as { details: { owner: { ownershipId: string } } }).details.owner).toMatchObject({
    ownershipId: old.ownershipId,
    executionSessionId: 'lo-old',
  });
  const replay = await bindRaw(wt.path, 'lo-old', s.tokens.executor);
  expect(replay.status).toBe(200);
  expect((replay.body as OwnershipViewOut).ownershipId).toBe(old.ownershipId);

  // Straight through Temporal at today's id (no lookup first): the second workflow's claim meets the
  // index: the log write is refused (worktree_owned, final), the claim with it, and nothing of it is recorded.
  const direct = await s.h.client
    .bind({
      worktreePath: wt.path,
      executionSessionId: 'lo-direct',
      runtime: 'codex-cli',
      worker: { workerId: s.otherWorkerId, runId: null },
      principal: executorPrincipal(s.otherWorkerId),
    })
    .then(
      () => null,
      (err: unknown) => err,
    );
  expect(direct).toBeInstanceOf(OwnershipError);
  expect((direct as OwnershipError).code).toBe('worktree_owned');
  expect(await heldAt(wt.path)).toEqual([old.ownershipId]);
  const seconds = await s.h.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ownership_events WHERE worktree_path = $1 AND ownership_id <> $2`, [
    wt.path,
    old.ownershipId,
  ]);
  expect(seconds.rows[0]!.n).toBe(0);
  const rows = await s.h.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM ownerships WHERE worktree_path = $1', [wt.path]);
  expect(rows.rows[0]!.n).toBe(1);

  // Once the old lifecycle lets go, a bind gets the worktree at today's id.
  const released = await s.raw('POST', `/v1/ownerships/${old.ownershipId}/release`, {
    token: s.tokens.executor,
    body: { executionSessionId: 'lo-old', epoch: old.epoch },
  });
  expect(released.status).toBe(200);
  const next = await bindRaw(wt.path, 'lo-new', s.tokens.otherExecutor);
  expect(next.status).toBe(200);
  expect((next.body as OwnershipViewOut).ownershipId).not.toBe(old.ownershipId);
  expect(await heldAt(wt.path)).toEqual([(next.body as OwnershipViewOut).ownershipId]);
});

test('(b) a worktree moved while owned (git worktree move): a bind at its new path is refused worktree_owned, never a second live owner', async () => {
  const wt = repo.worktrees[1]!;
  const bound = await bindRaw(wt.path, 'mv-a', s.tokens.executor);
  expect(bound.status).toBe(200);
  const owner = bound.body as OwnershipViewOut;
  // The projection the host wrote (what moves with the worktree's private git dir).
  for (let i = 0; (await readProjection(wt.path))?.ownershipId !== owner.ownershipId; i++) {
    if (i > 300) throw new Error('the projection was never written');
    await new Promise((r) => setTimeout(r, 100));
  }
  const moved = path.join(path.dirname(wt.path), 'moved-1');
  // The projection locks the worktree (git worktree lock): moving it takes a double force.
  git(repo.repoRoot, 'worktree', 'move', '-f', '-f', wt.path, moved);

  const other = await bindRaw(moved, 'mv-b', s.tokens.otherExecutor);
  expectError(other, 409, 'worktree_owned');
  expect((other.body as { details: Record<string, unknown> }).details).toMatchObject({
    owner: { ownershipId: owner.ownershipId, executionSessionId: 'mv-a' },
    worktreePath: wt.path,
  });
  // The owner itself too: its ownership is recorded at the old path until it lets go there.
  expectError(await bindRaw(moved, 'mv-a', s.tokens.executor), 409, 'worktree_owned');
  const atNewPath = await s.h.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM ownerships WHERE worktree_path = $1', [moved]);
  expect(atNewPath.rows[0]!.n).toBe(0);
  expect(await heldAt(wt.path)).toEqual([owner.ownershipId]);
});

test('(b2) the same move, bound through the service port (reconcile, admin tooling): refused worktree_owned too', async () => {
  const wt = repo.worktrees[3]!;
  const bound = await bindRaw(wt.path, 'mvp-a', s.tokens.executor);
  expect(bound.status).toBe(200);
  const owner = bound.body as OwnershipViewOut;
  for (let i = 0; (await readProjection(wt.path))?.ownershipId !== owner.ownershipId; i++) {
    if (i > 300) throw new Error('the projection was never written');
    await new Promise((r) => setTimeout(r, 100));
  }
  const moved = path.join(path.dirname(wt.path), 'moved-3');
  git(repo.repoRoot, 'worktree', 'move', '-f', '-f', wt.path, moved);
  const port = createServicePort({ client: s.h.client, pool: s.h.pool });
  const out = await port.bind({
    repoRoot: repo.repoRoot,
    worktreePath: moved,
    branch: wt.branch,
    executionSessionId: 'mvp-b',
    runtime: 'codex-cli',
    worker: { workerId: 'w-port', runId: null },
    lane: null,
    planRef: null,
    idempotencyKey: null,
    claimedAt: new Date().toISOString(),
  });
  expect(out).toMatchObject({ ok: false, code: 'worktree_owned' });
  expect(await heldAt(wt.path)).toEqual([owner.ownershipId]);
  const atNewPath = await s.h.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM ownerships WHERE worktree_path = $1', [moved]);
  expect(atNewPath.rows[0]!.n).toBe(0);
});

test('(c) PostgreSQL refuses a second live row for one worktree, and takes a free one', async () => {
  const wt = repo.worktrees[2]!;
  const bound = await bindRaw(wt.path, 'sql-a', s.tokens.executor);
  expect(bound.status).toBe(200);
  const id = (bound.body as OwnershipViewOut).ownershipId;
  const copy = (state: string) =>
    `INSERT INTO ownerships (ownership_id, workflow_id, repo_root, worktree_path, branch, host_id, state, epoch, seq, owner_session_id, owner_worker_id,
        conversation_id, lane, plan_ref, claimed_at, last_seen_at, updated_at, record)
     SELECT $2, workflow_id || '-copy', repo_root, worktree_path, branch, host_id, '${state}', epoch, seq, owner_session_id, owner_worker_id,
        conversation_id, lane, plan_ref, claimed_at, last_seen_at, now(), record FROM ownerships WHERE ownership_id = $1`;
  const client = await s.h.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SAVEPOINT live');
    await expect(client.query(copy('active'), [id, 'own_01JZZZZZZZZZZZZZZZZZZZZZZ1'])).rejects.toMatchObject({
      code: '23505',
      constraint: 'ownerships_one_live_owner',
    });
    await client.query('ROLLBACK TO SAVEPOINT live');
    await expect(client.query(copy('released'), [id, 'own_01JZZZZZZZZZZZZZZZZZZZZZZ2'])).resolves.toMatchObject({ rowCount: 1 });
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
  expect(await heldAt(wt.path)).toEqual([id]);
});

test('(d) the migration stops on worktrees that already have two live ownerships, names them, and changes nothing', async () => {
  const runDb = process.env.OD_TEST_DATABASE_URL!;
  const name = `${new URL(runDb).pathname.slice(1)}_lo${Math.random().toString(36).slice(2, 8)}`;
  const url = await ensureDatabase(runDb, name);
  const pool = new Pool({ connectionString: url, max: 1 });
  try {
    // Every migration before this one, then two live rows for one worktree.
    await runner({
      databaseUrl: url,
      dir: MIGRATIONS_DIR,
      direction: 'up',
      migrationsTable: 'pgmigrations',
      count: 10,
      log: () => undefined,
      checkOrder: true,
      verbose: false,
    });
    const row = (id: string, state: string) =>
      pool.query(
        `INSERT INTO ownerships (ownership_id, workflow_id, repo_root, worktree_path, branch, host_id, state, epoch, seq, updated_at, record)
         VALUES ($1, 'wf-' || $1, '/r', '/r/wt', 'wt/x', 'h1', $2, 1, 1, now(), '{}'::jsonb)`,
        [id, state],
      );
    await row('own_DUP_A', 'active');
    await row('own_DUP_B', 'stale');
    await row('own_FREE_C', 'released');
    const failed = await migrate(url).then(
      () => null,
      (err: unknown) => err as Error,
    );
    expect(failed).toBeInstanceOf(Error);
    expect(failed!.message).toMatch(/one live owner per worktree/);
    expect(failed!.message).toContain('own_DUP_A (active)');
    expect(failed!.message).toContain('own_DUP_B (stale)');
    expect(failed!.message).not.toContain('own_FREE_C');
    const rows = await pool.query<{ id: string; state: string }>('SELECT ownership_id AS id, state FROM ownerships ORDER BY 1');
    expect(rows.rows).toEqual([
      { id: 'own_DUP_A', state: 'active' },
      { id: 'own_DUP_B', state: 'stale' },
      { id: 'own_FREE_C', state: 'released' },
    ]);
    const index = await pool.query(`SELECT 1 FROM pg_indexes WHERE indexname = 'ownerships_one_live_owner'`);
    expect(index.rowCount).toBe(0);
  } finally {
    await pool.end();
    await dropDatabase(runDb, name);
  }
});
