import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { buildServer } from '../../src/server/app';
import type { App } from '../../src/api/http';
import { createAuthenticator } from '../../src/auth/principals';
import { generateToken, hashToken } from '../../src/auth/tokens';
import { OwnershipClient } from '../../src/client';
import { gitWorktreeResolver } from '../../src/adapters/worktree-resolver';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/infra/logger';
import { freePort } from '../../src/infra/ports';
import { createPool } from '../../src/store/db';
import { readHeartbeat } from '../../src/store/heartbeats';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { startHarness, type Harness } from '../support/harness';

/**
 * Temporal or PostgreSQL unavailable: 503 with Retry-After and a fixed `{code, message}` body, never
 * a 500 or a stack; reads that PostgreSQL can serve keep working without Temporal.
 */

let h: Harness;
let repo: RepoFixture;
const token = generateToken();
const authenticator = createAuthenticator([{ id: 'exec-u', kind: 'executor', workerId: 'worker-u', tokenSha256: hashToken(token) }]);
const apps: App[] = [];
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  h = await startHarness();
  repo = makeRepo(2);
});
afterAll(async () => {
  for (const app of apps) await app.close();
  for (const c of closers) await c();
  await h?.shutdown();
});

async function serve(deps: { temporal: Client; client: OwnershipClient; pool: ReturnType<typeof createPool> }): Promise<string> {
  const config = loadConfig({
    ...process.env,
    TEMPORAL_TASK_QUEUE: h.taskQueue,
    OD_HOST_ID: h.hostId,
    OD_ALLOWED_ROOTS: process.env.OD_TEST_TMP,
    LOG_LEVEL: 'silent',
  });
  const app = await buildServer({ config, ...deps, authenticator, logger: createLogger('silent'), temporalTimeoutMs: 1_500 });
  apps.push(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

async function call(base: string, method: string, p: string, body?: unknown) {
  const res = await fetch(base + p, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, unknown> };
}

function expectUnavailable(res: { status: number; retryAfter: string | null; body: Record<string, unknown> }): void {
  expect(res.status).toBe(503);
  expect(Number(res.retryAfter)).toBeGreaterThan(0);
  expect(res.body).toEqual({ code: 'unavailable', message: expect.any(String) });
}

const bindBody = (i: number, session: string) => ({
  repoRoot: repo.repoRoot,
  worktreePath: repo.worktrees[i]!.path,
  branch: repo.worktrees[i]!.branch,
  executionSessionId: session,
  runtime: 'codex-cli',
});

test('PostgreSQL unavailable: lookups and writes answer 503 with Retry-After', async () => {
  const deadPool = createPool(`postgres://postgres:x@127.0.0.1:${await freePort()}/nothing`, { connectionTimeoutMillis: 1_000 });
  closers.push(() => deadPool.end());
  const base = await serve({ temporal: h.temporal, client: h.client, pool: deadPool });
  expectUnavailable(await call(base, 'GET', `/v1/ownership?worktreePath=${encodeURIComponent(repo.worktrees[0]!.path)}`));
  expectUnavailable(await call(base, 'GET', '/v1/ownerships'));
  expectUnavailable(await call(base, 'POST', '/v1/ownerships/own_01JZZZZZZZZZZZZZZZZZZZZZZZ/heartbeat', { executionSessionId: 's', epoch: 1 }));
  expectUnavailable(
    await call(base, 'POST', '/v1/executor/conversation', {
      executor: 'chatgpt-web',
      executorInstanceId: 'ext',
      sessionGeneration: 'g',
      sequence: 1,
      conversation: {
        conversationId: '11111111-2222-4333-8444-555555555555',
        conversationUrl: 'https://chatgpt.com/c/11111111-2222-4333-8444-555555555555',
        observedAt: new Date().toISOString(),
      },
    }),
  );
  // bad input is still refused as bad input, without touching the database
  const bad = await call(base, 'POST', '/v1/bind', { ...bindBody(0, 'u-s0'), bogus: 1 });
  expect(bad.status).toBe(400);
  expect(bad.body.code).toBe('unknown_field');
  const health = await fetch(`${base}/healthz`);
  expect(health.status).toBe(503);
  expect(await health.json()).toMatchObject({ ok: false, postgres: 'down' });
});

test("Temporal unavailable: messages answer 503, an active owner's heartbeat is still recorded in PostgreSQL, reads keep working", async () => {
  // A real ownership first, through the working stack.
  const view = await h.client.bind({
    ...bindBody(1, 'u-s1'),
    worker: { workerId: 'worker-u', runId: null },
    principal: { kind: 'executor', id: 'exec-u', workerId: 'worker-u' },
  });
  // No retry interceptor: Temporal's default keeps retrying UNAVAILABLE for ~20 s in the background
  // after our deadline answered 503, and closing the channel under a pending retry throws in a timer.
  const connection = Connection.lazy({ address: `127.0.0.1:${await freePort()}`, interceptors: [] });
  closers.push(() => connection.close());
  const temporal = new Client({ connection, namespace: 'default' });
  const client = new OwnershipClient({
    client: temporal,
    resolver: gitWorktreeResolver,
    taskQueue: h.taskQueue,
    hostId: h.hostId,
    allowedRoots: [process.env.OD_TEST_TMP!],
  });
  const base = await serve({ temporal, client, pool: h.pool });

  expectUnavailable(await call(base, 'POST', '/v1/bind', bindBody(0, 'u-s0')));
  // An active owner's heartbeat is a row in PostgreSQL, read by the workflow when the lease runs
  // out: it needs no Temporal, so it is recorded and acknowledged (the workflow finds it later).
  const beat = await call(base, 'POST', `/v1/ownerships/${view.ownershipId}/heartbeat`, { executionSessionId: 'u-s1', epoch: 1 });
  expect({ status: beat.status, body: beat.body }).toEqual({ status: 202, body: { accepted: true } });
  expect(await readHeartbeat(h.pool, view.ownershipId)).toMatchObject({ executionSessionId: 'u-s1', epoch: 1 });
  expectUnavailable(await call(base, 'POST', `/v1/ownerships/${view.ownershipId}/release`, { executionSessionId: 'u-s1', epoch: 1 }));

  const byPath = await call(base, 'GET', `/v1/ownership?worktreePath=${encodeURIComponent(repo.worktrees[1]!.path)}`);
  expect(byPath.status).toBe(200);
  expect(byPath.body.ownershipId).toBe(view.ownershipId);
  // the live view degrades to the durable record, liveness unknown (null), rather than failing
  const byId = await call(base, 'GET', `/v1/ownerships/${view.ownershipId}`);
  expect(byId.status).toBe(200);
  expect(byId.body).toMatchObject({ ownershipId: view.ownershipId, state: 'active', liveness: null });
  const listed = await call(base, 'GET', `/v1/ownerships?repoRoot=${encodeURIComponent(repo.repoRoot)}&liveness=true`);
  expect(listed.status).toBe(200);
  expect((listed.body.items as Array<{ liveness: unknown }>)[0]!.liveness).toBeNull();
  expect((await fetch(`${base}/healthz`)).status).toBe(503);
});
