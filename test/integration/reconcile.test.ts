import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { BindRequest, OwnershipView } from '../../src/client';
import { guardCheck } from '../../src/git/guard';
import { readLock, worktreeLockReason } from '../../src/git/lock';
import { offlineClaim } from '../../src/git/provisional';
import { readProjection, readSupersededProvisional, writeProjection } from '../../src/git/projection';
import { worktreeDirs } from '../../src/git/repo';
import { reconcile, type ReconcilePort, type ReconciliationEntry } from '../../src/reconcile';
import { createServicePort } from '../../src/reconcile/service-port';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { executorPrincipal as executor, startHarness, testTenureSecret, type Harness } from '../support/harness';

/** Reconciliation against the real service through the direct (service-host) port: every case of src/reconcile. */
let h: Harness;
let port: ReconcilePort;
let logged: ReconciliationEntry[];
const TMP = (): string => process.env.OD_TEST_TMP!;

beforeAll(async () => {
  h = await startHarness();
  port = createServicePort({ client: h.client, pool: h.pool, onReconciled: (e) => void logged.push(e) });
});
beforeEach(() => {
  logged = [];
});
afterAll(async () => h?.shutdown());

const as = (session: string) => ({ OVERDECK_EXECUTION_SESSION_ID: session });

function bindReq(repo: RepoFixture, wt: { path: string; branch: string }, session: string, workerId = `worker-${session}`): BindRequest {
  return {
    repoRoot: repo.repoRoot,
    worktreePath: wt.path,
    branch: wt.branch,
    executionSessionId: session,
    runtime: 'codex-cli',
    worker: { runId: null, workerId },
    principal: executor(workerId),
  };
}

/** A worktree owned through the service, its projection written by the host agent. */
async function owned(session: string): Promise<{ repo: RepoFixture; wt: { path: string; branch: string }; view: OwnershipView }> {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0];
  const view = await h.client.bind(bindReq(repo, wt, session));
  expect(view.projectionSync.localSeq).toBeGreaterThanOrEqual(view.seq);
  return { repo, wt, view };
}

describe('ordinary projections', () => {
  it('in sync: nothing written, nothing logged', async () => {
    const { wt } = await owned('s-sync');
    expect(await reconcile(wt.path, port)).toMatchObject({ kind: 'in_sync', changed: false, recorded: null });
    expect(logged).toEqual([]);
  });

  it('unowned: neither side knows an owner', async () => {
    const repo = makeRepo(1);
    expect(await reconcile(repo.worktrees[0].path, port)).toMatchObject({ kind: 'unowned', local: null, durable: null });
  });

  it('behind by seq: caught up without --repair (what the host agent would write)', async () => {
    const { wt, view } = await owned('s-behind');
    const ref = { repoRoot: view.repoRoot, worktreePath: view.worktreePath };
    const planned = await h.client.bindPlan(ref, { executionSessionId: 's-behind', epoch: 1, principal: executor('worker-s-behind'), lane: 'lane-2' });
    // bindPlan does not wait for the host agent: let it finish before rolling the projection back.
    for (let v = await h.client.projection(ref); v!.projectionSync.localSeq < planned.seq; v = await h.client.projection(ref))
      await new Promise((r) => setTimeout(r, 50));
    const stale = await readProjection(wt.path);
    await writeProjection(wt.path, { ...stale!, seq: view.seq, lane: null }, { force: true });
    const res = await reconcile(wt.path, port);
    expect(res).toMatchObject({ kind: 'rehydrated', reason: 'older_seq', changed: true, repaired: false });
    // Without the service key reconcile cannot derive the tenure hash: it keeps the host agent's, the tenure being the same.
    expect(stale!.tenureHash).toMatch(/^[0-9a-f]{64}/);
    expect(await readProjection(wt.path)).toMatchObject({ seq: planned.seq, lane: 'lane-2', tenureHash: stale!.tenureHash });
    expect(logged).toEqual([expect.objectContaining({ kind: 'rehydrated', localSeq: view.seq, durableSeq: planned.seq })]);
  });

  it('missing locks (lock JSON deleted, git lock lifted) are restored', async () => {
    const { repo, wt } = await owned('s-locks');
    rmSync(path.join((await worktreeDirs(wt.path)).privateDir, 'overdeck.lock.json'));
    spawnSync('git', ['worktree', 'unlock', wt.path], { cwd: repo.repoRoot });
    expect(await reconcile(wt.path, port)).toMatchObject({ kind: 'rehydrated', reason: 'locks' });
    expect(await readLock(wt.path)).toMatchObject({ execution_session_id: 's-locks' });
    expect(await worktreeLockReason(wt.path)).toContain('s-locks');
  });

  it('corrupt (same seq, another owner): reported and left alone; --repair rewrites it', async () => {
    const { wt, view } = await owned('s-real');
    const local = await readProjection(wt.path);
    await writeProjection(wt.path, { ...local!, executionSessionId: 's-intruder' });
    expect(await guardCheck(wt.path, as('s-real'))).toMatchObject({ allowed: false }); // the danger

    const found = await reconcile(wt.path, port);
    expect(found).toMatchObject({ kind: 'corrupt', reason: 'same_seq_mismatch', changed: false, repaired: false, local: { executionSessionId: 's-intruder' } });
    expect((await readProjection(wt.path))?.executionSessionId).toBe('s-intruder');

    const fixed = await reconcile(wt.path, port, { repair: true });
    expect(fixed).toMatchObject({ kind: 'corrupt', changed: true, repaired: true });
    expect(await readProjection(wt.path)).toMatchObject({ executionSessionId: 's-real', seq: view.seq });
    expect(await guardCheck(wt.path, as('s-real'))).toEqual({ allowed: true });
    expect(logged.map((e) => [e.kind, e.repaired])).toEqual([
      ['corrupt', false],
      ['corrupt', true],
    ]);
  });

  it('corrupt (ahead of the durable seq): --repair writes the lower durable seq back', async () => {
    const { wt, view } = await owned('s-ahead');
    const local = await readProjection(wt.path);
    await writeProjection(wt.path, { ...local!, seq: view.seq + 5 });
    expect(await reconcile(wt.path, port)).toMatchObject({ kind: 'corrupt', reason: 'ahead_of_durable', changed: false });
    expect(await reconcile(wt.path, port, { repair: true })).toMatchObject({ repaired: true });
    expect((await readProjection(wt.path))?.seq).toBe(view.seq);
  });

  it('corrupt (unparseable keys): --repair rewrites it', async () => {
    const { wt, view } = await owned('s-garbage');
    const file = path.join((await worktreeDirs(wt.path)).privateDir, 'overdeck.config');
    writeFileSync(file, '[overdeck "owner"]\n\tepoch = "soon"\n\tseq = "1"\n');
    expect(await reconcile(wt.path, port)).toMatchObject({ kind: 'corrupt', reason: 'unparseable', local: null });
    expect(await reconcile(wt.path, port, { repair: true })).toMatchObject({ kind: 'corrupt', repaired: true });
    expect(await readProjection(wt.path)).toMatchObject({ executionSessionId: 's-garbage', seq: view.seq });
  });

  it('stale (a newer ownership id the service does not lead to): reported; --repair rewrites it', async () => {
    const { wt, view } = await owned('s-stale');
    const local = await readProjection(wt.path);
    await writeProjection(wt.path, { ...local!, ownershipId: 'own_7ZZZZZZZZZZZZZZZZZZZZZZZZZ', executionSessionId: 's-ghost' }, { force: true }); // tampered: ordinary writes refuse another live ownership
    expect(await reconcile(wt.path, port)).toMatchObject({ kind: 'stale', reason: 'other_ownership', changed: false });
    expect(await reconcile(wt.path, port, { repair: true })).toMatchObject({ kind: 'stale', repaired: true });
    expect(await readProjection(wt.path)).toMatchObject({ ownershipId: view.ownershipId, executionSessionId: 's-stale' });
  });

  it('stale (a projection the service knows nothing of): --repair clears it', async () => {
    const repo = makeRepo(1);
    const wt = repo.worktrees[0];
    await writeProjection(wt.path, {
      ownershipId: 'own_01ARZ3NDEKTSV4RRFFQ69G5FAV',
      executionSessionId: 's-nobody',
      runtime: 'x',
      conversationId: null,
      conversationUrl: null,
      workerId: null,
      runId: null,
      lane: null,
      planRef: null,
      epoch: 1,
      seq: 3,
      state: 'active',
      claimedAt: new Date().toISOString(),
      lastSeenAt: new Date().toISOString(),
    });
    expect(await reconcile(wt.path, port)).toMatchObject({ kind: 'stale', reason: 'unknown_to_service', durable: null });
    expect(await reconcile(wt.path, port, { repair: true })).toMatchObject({ repaired: true });
    expect(await readProjection(wt.path)).toBeNull();
  });

  it('ended lifecycle (landed, worktree reported removed): a leftover projection is cleared', async () => {
    const { wt, view } = await owned('s-ended');
    const ref = { repoRoot: view.repoRoot, worktreePath: view.worktreePath };
    const leftover = await readProjection(wt.path);
    const sha = 'c'.repeat(40);
    await h.client.landed(ref, {
      sourceHead: sha,
      landedBranch: 'main',
      landedHead: sha,
      landedAt: new Date().toISOString(),
      principal: { kind: 'landing', id: 'lander' },
    });
    await h.client.worktreeRemoved(ref, { principal: { kind: 'system', id: 'host' } });
    await h.temporal.workflow.getHandle(await h.client.workflowIdOf(ref)).result();
    await writeProjection(wt.path, leftover, { force: true }); // e.g. the host was down while it closed
    expect(await reconcile(wt.path, port)).toMatchObject({ kind: 'rehydrated', reason: 'ended', durable: { state: 'closed' } });
    expect(await readProjection(wt.path)).toBeNull();
  });
});

describe('provisional claims', () => {
  it('superseded by the host agent before reconciliation: still reported as a conflict, the durable owner keeps the worktree', async () => {
    const repo = makeRepo(1);
    const wt = repo.worktrees[0];
    const claim = await offlineClaim(wt.path, { executionSessionId: 's-prov', runtime: 'codex-cli', workerId: 'w-prov', allowedRoots: [TMP()] });
    expect(claim.status).toBe('claimed');
    // The host agent (running) projects the other session's bind over the provisional one.
    const q = await h.client.bind(bindReq(repo, wt, 's-bound'));
    expect(q.projectionSync.localSeq).toBeGreaterThanOrEqual(q.seq);
    expect((await readProjection(wt.path))?.executionSessionId).toBe('s-bound');
    expect(await readSupersededProvisional(wt.path)).toMatchObject({ executionSessionId: 's-prov', provisional: true });

    const res = await reconcile(wt.path, port);
    expect(res).toMatchObject({ kind: 'conflict', reason: 'worktree_owned', changed: false, provisional: { executionSessionId: 's-prov' } });
    expect(logged).toEqual([
      expect.objectContaining({ kind: 'conflict', provisional: expect.objectContaining({ idempotencyKey: claim.projection!.idempotencyKey }) }),
    ]);
    // Logged durably, beside the ownership log.
    const rows = await h.pool.query('SELECT kind, reason, provisional FROM reconciliations WHERE worktree_path = $1', [q.worktreePath]);
    expect(rows.rows).toEqual([{ kind: 'conflict', reason: 'worktree_owned', provisional: expect.objectContaining({ executionSessionId: 's-prov' }) }]);
    expect(await readSupersededProvisional(wt.path)).toBeNull();
    // The durable owner, with the secret of its tenure (the projection holds its hash).
    expect(
      await guardCheck(wt.path, {
        ...as('s-bound'),
        OVERDECK_TENURE_SECRET: testTenureSecret({ ownershipId: q.ownershipId, epoch: q.epoch, executionSessionId: 's-bound' }),
      }),
    ).toEqual({ allowed: true });
    expect(await guardCheck(wt.path, as('s-prov'))).toMatchObject({ allowed: false, reason: 'not_owner' });
    expect((await reconcile(wt.path, port)).kind).toBe('in_sync');
  });

  it('made after a release: submitted as the next tenure of the same ownership', async () => {
    const { wt, view } = await owned('s-first');
    const ref = { repoRoot: view.repoRoot, worktreePath: view.worktreePath };
    const released = await h.client.release(ref, { executionSessionId: 's-first', epoch: 1, principal: executor('worker-s-first') });
    expect((await readProjection(wt.path))?.state).toBe('released');
    const claim = await offlineClaim(wt.path, { executionSessionId: 's-next', runtime: 'codex-cli', workerId: 'w-next', allowedRoots: [TMP()] });
    expect(claim.status).toBe('claimed');
    const res = await reconcile(wt.path, port);
    expect(res).toMatchObject({ kind: 'submitted', durable: { ownershipId: view.ownershipId, executionSessionId: 's-next', epoch: 2 } });
    expect(await readProjection(wt.path)).toMatchObject({ ownershipId: view.ownershipId, executionSessionId: 's-next', epoch: 2, seq: released.seq + 1 });
  });

  it('refused by the service for another reason (branch renamed under it): a conflict', async () => {
    const { repo, wt, view } = await owned('s-orig');
    const ref = { repoRoot: view.repoRoot, worktreePath: view.worktreePath };
    await h.client.release(ref, { executionSessionId: 's-orig', epoch: 1, principal: executor('worker-s-orig') });
    spawnSync('git', ['checkout', '-q', '-b', 'other-branch'], { cwd: wt.path });
    expect((await offlineClaim(wt.path, { executionSessionId: 's-late', runtime: 'codex-cli', workerId: 'w-late', allowedRoots: [TMP()] })).status).toBe(
      'claimed',
    );
    const res = await reconcile(wt.path, port);
    expect(res).toMatchObject({ kind: 'conflict', reason: 'worktree_mismatch' });
    expect(await guardCheck(wt.path, as('s-late'))).toMatchObject({ allowed: false, reason: 'provisional_conflict' });
    void repo;
  });

  it('made without a worker: refused as a usage error (claim kept), submitted once the port supplies one', async () => {
    const repo = makeRepo(1);
    const wt = repo.worktrees[0];
    expect((await offlineClaim(wt.path, { executionSessionId: 's-noworker', runtime: 'codex-cli', allowedRoots: [TMP()] })).status).toBe('claimed');
    await expect(reconcile(wt.path, port)).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(await readProjection(wt.path)).toMatchObject({ provisional: true, state: 'provisional' });
    expect(await port.durable(wt.path)).toBeNull();
    const withWorker = createServicePort({ client: h.client, pool: h.pool, defaultWorker: { workerId: 'w-default', runId: null } });
    expect(await reconcile(wt.path, withWorker)).toMatchObject({ kind: 'submitted' });
    expect((await port.durable(wt.path))?.worker).toEqual({ workerId: 'w-default', runId: null });
  });
});

// `od-worktree reconcile` itself (through the HTTP API, as the token's principal): test/integration/cli-write-auth.test.ts.
