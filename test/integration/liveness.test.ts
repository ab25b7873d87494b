import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import type { Pool } from 'pg';
import { createHostActivities, createStoreActivities } from '../../src/activities';
import { OwnershipClient, OwnershipError, type BindRequest } from '../../src/client';
import { gitWorktreeResolver } from '../../src/adapters/worktree-resolver';
import { hostTaskQueue } from '../../src/domain/queues';
import { createPool } from '../../src/store/db';
import { readEvents } from '../../src/store/event-store';
import { recordHeartbeat } from '../../src/store/heartbeats';
import { makeRepo } from '../support/git-fixture';
import { startTimeSkipping } from '../support/time-skipping';
import { scriptedAuthority, testDataConverter, testKeyring } from '../support/harness';

/**
 * Lease expiry and the liveness authority, on the time-skipping test server: minutes of lease pass
 * in milliseconds, and only a `dead` verdict may make an ownership stale.
 */
let env: TestWorkflowEnvironment;
let pool: Pool;
let client: OwnershipClient;
let worker: Worker[];
let running: Promise<void>[];
const script = scriptedAuthority('alive');
const dataConverter = testDataConverter();
/** How far the time-skipping server's clock runs ahead: seals expire by the workflow's clock. */
let skewMs = 0;
async function sleep(ms: number): Promise<void> {
  await env.sleep(ms);
  skewMs = (await env.currentTimeMs()) - Date.now();
}
const TTL = 60_000;

beforeAll(async () => {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  env = await startTimeSkipping(dataConverter);
  pool = createPool(process.env.OD_TEST_DATABASE_URL!);
  const taskQueue = `ts-${Math.random().toString(36).slice(2, 8)}`;
  const hostId = `ts-host-${Math.random().toString(36).slice(2, 8)}`;
  worker = [
    await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: process.env.OD_TEST_WORKFLOW_BUNDLE! },
      dataConverter,
      activities: createStoreActivities({ pool }),
    }),
    await Worker.create({
      connection: env.nativeConnection,
      taskQueue: hostTaskQueue(hostId),
      activities: createHostActivities({ allowedRoots: [process.env.OD_TEST_TMP!], authority: script.authority, keyring: testKeyring() }),
    }),
  ];
  running = worker.map((w) => w.run());
  client = new OwnershipClient({
    client: env.client,
    resolver: gitWorktreeResolver,
    taskQueue,
    hostId,
    allowedRoots: [process.env.OD_TEST_TMP!],
    settings: { leaseTtlMs: TTL },
    updateWithStart: false,
    now: () => Date.now() + skewMs,
  });
});

afterAll(async () => {
  worker?.forEach((w) => w.getState() === 'RUNNING' && w.shutdown());
  await Promise.allSettled(running ?? []);
  await pool?.end();
  await env?.teardown();
});

const principal = (workerId: string) => ({ kind: 'executor' as const, id: `e-${workerId}`, workerId });

function bindReq(repoRoot: string, wt: { path: string; branch: string }, session: string): BindRequest {
  return {
    repoRoot,
    worktreePath: wt.path,
    branch: wt.branch,
    executionSessionId: session,
    runtime: 'codex-cli',
    worker: { runId: null, workerId: 'w-a' },
    principal: principal('w-a'),
  };
}

const reclaimBy = (session: string, extra: Record<string, unknown> = {}) => ({
  executionSessionId: session,
  runtime: 'codex-cli',
  worker: { runId: null, workerId: 'w-b' },
  principal: principal('w-b'),
  ...extra,
});

async function refusedWith(p: Promise<unknown>): Promise<string | null> {
  try {
    await p;
    return null;
  } catch (err) {
    if (err instanceof OwnershipError) return err.code;
    throw err;
  }
}

test('alive verdict: the owner is silent, not stale, and reclaim is refused', async () => {
  script.set('alive');
  const repo = makeRepo(1);
  const wt = repo.worktrees[0];
  const view = await client.bind(bindReq(repo.repoRoot, wt, 'sess-alive'));
  const ref = { repoRoot: repo.repoRoot, worktreePath: wt.path };
  await sleep(TTL * 3);
  const after = await client.projection(ref);
  expect(after!.state).toBe('active');
  expect(after!.liveness).toMatchObject({ status: 'silent', verdict: 'alive' });
  expect(await refusedWith(client.reclaim(ref, reclaimBy('sess-b')))).toBe('owner_alive');
  expect((await readEvents(pool, view.ownershipId)).map((e) => e.type)).toEqual(['ownership.claimed']);
  // A heartbeat brings it back to live, with a transition event.
  await client.heartbeat(ref, { executionSessionId: 'sess-alive', epoch: 1 });
  const live = await client.projection(ref);
  expect(live!.liveness.status).toBe('live');
});

test('dead verdict: the ownership becomes stale and a successor reclaims with WIP preserved and the original owner kept in history', async () => {
  script.set('dead');
  const repo = makeRepo(1);
  const wt = repo.worktrees[0];
  const view = await client.bind(bindReq(repo.repoRoot, wt, 'sess-dies'));
  const ref = { repoRoot: repo.repoRoot, worktreePath: wt.path };
  writeFileSync(`${wt.path}/wip.txt`, 'unsaved work\n');
  await sleep(TTL * 2);
  const stale = await client.projection(ref);
  expect(stale!.state).toBe('stale');
  const reclaimed = await client.reclaim(ref, reclaimBy('sess-successor', { reason: 'owner process ended' }));
  expect(reclaimed.state).toBe('active');
  expect(reclaimed.epoch).toBe(2);
  expect(reclaimed.owner!.executionSessionId).toBe('sess-successor');
  expect(reclaimed.latestWip?.ref).toMatch(new RegExp(`^refs/overdeck/wip/${view.ownershipId}/\\d+$`));
  const events = await readEvents(pool, view.ownershipId);
  expect(events.map((e) => e.type)).toEqual(['ownership.claimed', 'ownership.stale', 'ownership.wip_preserved', 'ownership.reclaimed']);
  const rec = events[3];
  expect(rec.type === 'ownership.reclaimed' && rec.data.previousOwner?.executionSessionId).toBe('sess-dies');
  expect(reclaimed.lineage.map((l) => l.executionSessionId)).toEqual(['sess-dies', 'sess-successor']);
  // The dead owner's old epoch is fenced out.
  expect(await refusedWith(client.release(ref, { executionSessionId: 'sess-dies', epoch: 1, principal: principal('w-a') }))).toBe('not_owner');
});

test('a heartbeat the API records while the authority is being asked wins over its dead verdict', async () => {
  script.set('dead');
  const repo = makeRepo(1);
  const wt = repo.worktrees[0];
  const view = await client.bind(bindReq(repo.repoRoot, wt, 'sess-resumed'));
  const ref = { repoRoot: repo.repoRoot, worktreePath: wt.path };
  // The session resumed under a new process: the authority says its recorded process is dead, but
  // the session heartbeats (through the API, which records it in PostgreSQL) while it is asked.
  let asked = false;
  script.whenAsked(async () => {
    asked = true;
    await recordHeartbeat(pool, view.ownershipId, 'sess-resumed', 1);
  });
  await sleep(TTL + 5_000);
  expect(asked).toBe(true);
  const after = await client.projection(ref);
  expect(after!.state).toBe('active');
  expect(after!.liveness.status).toBe('live');
  expect((await readEvents(pool, view.ownershipId)).map((e) => e.type)).not.toContain('ownership.stale');
});

test("an admin's forced reclaim goes on when the owner's WIP cannot be preserved, and records why", async () => {
  script.set('unknown');
  const repo = makeRepo(1);
  const wt = repo.worktrees[0];
  const view = await client.bind(bindReq(repo.repoRoot, wt, 'sess-broken'));
  const ref = { repoRoot: repo.repoRoot, worktreePath: wt.path };
  await sleep(TTL * 2);
  // The worktree's index is corrupt: git cannot read its WIP, on any retry.
  const gitDir = execFileSync('git', ['rev-parse', '--absolute-git-dir'], { cwd: wt.path, encoding: 'utf8' }).trim();
  writeFileSync(`${gitDir}/index`, 'garbage');
  // A successor without force is refused (liveness unknown); nothing is recorded.
  expect(await refusedWith(client.reclaim(ref, reclaimBy('sess-next')))).toBe('liveness_unknown');
  const admin = { kind: 'admin' as const, id: 'ops' };
  const forced = await client.reclaim(ref, reclaimBy('sess-admin', { principal: admin, force: true, reason: 'owner machine lost' }));
  expect(forced.owner!.executionSessionId).toBe('sess-admin');
  const events = await readEvents(pool, view.ownershipId);
  expect(events.map((e) => e.type)).toEqual(['ownership.claimed', 'ownership.wip_not_preserved', 'ownership.reclaimed']);
  expect(events[1]!.data).toMatchObject({ executionSessionId: 'sess-broken', reason: 'preservation_failed' });
  expect((events[1]!.data as { detail?: unknown }).detail).toBe('git_failed');
  expect(forced.wipNotPreserved).toMatchObject({ reason: 'preservation_failed', executionSessionId: 'sess-broken' });
});

test('unknown verdict: reclaim refused unless an admin forces it with a reason, which is recorded', async () => {
  script.set('unknown');
  const repo = makeRepo(1);
  const wt = repo.worktrees[0];
  const view = await client.bind(bindReq(repo.repoRoot, wt, 'sess-unknown'));
  const ref = { repoRoot: repo.repoRoot, worktreePath: wt.path };
  await sleep(TTL * 2);
  const silent = await client.projection(ref);
  expect(silent!.state).toBe('active');
  expect(silent!.liveness).toMatchObject({ status: 'silent', verdict: 'unknown' });
  expect(await refusedWith(client.reclaim(ref, reclaimBy('sess-b')))).toBe('liveness_unknown');
  expect(await refusedWith(client.reclaim(ref, reclaimBy('sess-b', { force: true, reason: 'host lost' })))).toBe('force_requires_admin');
  const forced = await client.reclaim(ref, { ...reclaimBy('sess-b'), principal: { kind: 'admin', id: 'ops' }, force: true, reason: 'host lost' });
  expect(forced.owner!.executionSessionId).toBe('sess-b');
  const events = await readEvents(pool, view.ownershipId);
  const rec = events.at(-1)!;
  expect(rec.type).toBe('ownership.reclaimed');
  expect(rec.type === 'ownership.reclaimed' && rec.data).toMatchObject({ forced: true, reason: 'host lost', principal: { kind: 'admin', id: 'ops' } });
  expect(forced.lineage.at(-1)!.via).toBe('forced_reclaim');
});

test('a pending handoff that is never accepted times out back to the owner', async () => {
  script.set('alive');
  const repo = makeRepo(1);
  const wt = repo.worktrees[0];
  await client.bind(bindReq(repo.repoRoot, wt, 'sess-h'));
  const ref = { repoRoot: repo.repoRoot, worktreePath: wt.path };
  const pending = await client.handoff(ref, {
    executionSessionId: 'sess-h',
    epoch: 1,
    principal: principal('w-a'),
    toExecutionSessionId: 'sess-never',
    toWorkerId: 'w-a',
  });
  expect(pending.state).toBe('handoff_pending');
  await client.heartbeat(ref, { executionSessionId: 'sess-h', epoch: 1 });
  await sleep(11 * 60_000);
  const back = await client.projection(ref);
  expect(back!.state).toBe('active');
  expect(back!.owner!.executionSessionId).toBe('sess-h');
  expect(back!.handoff).toBeNull();
});

test("an owner's own lease (leaseTtlMs at bind) governs when it goes silent", async () => {
  script.set('dead');
  const repo = makeRepo(2);
  const [short, long] = repo.worktrees;
  await client.bind({ ...bindReq(repo.repoRoot, short, 'sess-short'), leaseTtlMs: 5_000 });
  await client.bind(bindReq(repo.repoRoot, long, 'sess-long'));
  await sleep(15_000);
  const s = await client.projection({ repoRoot: repo.repoRoot, worktreePath: short.path });
  const l = await client.projection({ repoRoot: repo.repoRoot, worktreePath: long.path });
  expect(s!.liveness.leaseTtlMs).toBe(5_000);
  expect(s!.state).toBe('stale');
  expect(l!.liveness.leaseTtlMs).toBe(TTL);
  expect(l!.state).toBe('active');
  expect(l!.liveness.status).toBe('live');
});
