import { OwnershipError, type BindRequest, type OwnershipView } from '../../src/client';
import { project } from '../../src/domain/projection';
import { readExecutorConversation, recordObservation } from '../../src/store/bindings';
import { readEvents } from '../../src/store/event-store';
import { getOwnership } from '../../src/store/lookups';
import { writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { currentProcessIdentity } from '../../src/activities/liveness';
import path from 'node:path';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { executorPrincipal as executor, startHarness, type Harness, waitForView } from '../support/harness';

const CONV = '6f1c2a34-9b7d-4e21-8c55-0d3e4f5a6b7c';

let h: Harness;
let repo: RepoFixture;

beforeAll(async () => {
  h = await startHarness();
  repo = makeRepo(4);
});
afterAll(async () => h?.shutdown());

function bindReq(wt: { path: string; branch: string }, session: string, workerId: string, extra: Partial<BindRequest> = {}): BindRequest {
  return {
    repoRoot: repo.repoRoot,
    worktreePath: wt.path,
    branch: wt.branch,
    executionSessionId: session,
    runtime: 'chatgpt-web',
    worker: { runId: `run-${workerId}`, workerId },
    principal: executor(workerId),
    lane: 'feature-x',
    planRef: 'docs/plans/feature-x.md',
    ...extra,
  };
}

/** An executor's observation of its worker's conversation (canonical URL), recorded as the API records it. */
async function observe(workerId: string, executorInstanceId: string, sequence: number, conversationId: string, title: string): Promise<void> {
  const observed = await recordObservation(
    h.pool,
    { workerId, runId: `run-${workerId}` },
    {
      executor: 'chatgpt-web',
      executorInstanceId,
      sessionGeneration: 'gen-1',
      sequence,
      conversation: { conversationId, conversationUrl: `https://chatgpt.com/c/${conversationId}`, title, observedAt: new Date().toISOString() },
    },
  );
  expect('code' in observed).toBe(false);
}

/** The invariant: folding the events read back from PostgreSQL gives exactly the live projection. */
async function expectLogMatchesProjection(view: OwnershipView): Promise<void> {
  const live = await h.client.projection({ repoRoot: view.repoRoot, worktreePath: view.worktreePath });
  expect(live).not.toBeNull();
  const { liveness: _l, projectionSync: _p, projection: _pr, ...record } = live!;
  const events = await readEvents(h.pool, view.ownershipId);
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  expect(project(events)).toEqual(record);
}

async function expectRefused(p: Promise<unknown>, code: string): Promise<OwnershipError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OwnershipError);
  expect((err as OwnershipError).code).toBe(code);
  return err as OwnershipError;
}

test('a managed ChatGPT worker binds: the record carries the observed conversation, worker, session, branch, lane and plan', async () => {
  const observed = await recordObservation(
    h.pool,
    { workerId: 'worker-chat', runId: 'run-worker-chat' },
    {
      executor: 'chatgpt-web',
      executorInstanceId: 'ext-1',
      sessionGeneration: 'gen-1',
      sequence: 1,
      conversation: {
        conversationId: CONV.toUpperCase(),
        conversationUrl: `https://chatgpt.com/g/g-abc123/c/${CONV}?model=x#frag`,
        title: 'Example lane',
        observedAt: new Date().toISOString(),
      },
    },
  );
  expect('code' in observed).toBe(false);

  const wt = repo.worktrees[0];
  const view = await h.client.bind(bindReq(wt, 'session-a', 'worker-chat'));
  expect(view.ownershipId).toMatch(/^own_[0-9A-Z]{26}$/);
  expect(view.state).toBe('active');
  expect(view.epoch).toBe(1);
  expect(view.branch).toBe(wt.branch);
  expect(view.lane).toBe('feature-x');
  expect(view.planRef).toBe('docs/plans/feature-x.md');
  expect(view.worker).toEqual({ runId: 'run-worker-chat', workerId: 'worker-chat' });
  expect(view.owner?.executionSessionId).toBe('session-a');
  expect(view.owner?.conversation).toMatchObject({
    provider: 'chatgpt-web',
    conversationId: CONV,
    conversationUrl: `https://chatgpt.com/c/${CONV}`,
    title: 'Example lane',
  });
  // Durable before acknowledged: the log already holds the claim.
  const events = await readEvents(h.pool, view.ownershipId);
  expect(events.map((e) => e.type)).toEqual(['ownership.claimed']);
  await expectLogMatchesProjection(view);

  // Replays are idempotent (docs/guarantees.md): a replayed bind returns the same record and appends nothing.
  const replay = await h.client.bind(bindReq(wt, 'session-a', 'worker-chat'));
  expect(replay.ownershipId).toBe(view.ownershipId);
  expect(replay.seq).toBe(view.seq);
  expect((await readEvents(h.pool, view.ownershipId)).length).toBe(1);

  // One live owner, service side: a second live session is refused with the owner's summary.
  const refused = await expectRefused(h.client.bind(bindReq(wt, 'session-b', 'worker-other')), 'worktree_owned');
  expect(refused.details).toMatchObject({ owner: { executionSessionId: 'session-a', ownershipId: view.ownershipId, epoch: 1 } });
  expect((await readEvents(h.pool, view.ownershipId)).length).toBe(1);
});

test('a later observation of the same conversation refreshes its title where `who` reads it; the identity and URL never move', async () => {
  const wt = repo.worktrees[0];
  const ref = { repoRoot: repo.repoRoot, worktreePath: wt.path };
  const before = (await h.client.projection(ref))!;
  await observe('worker-chat', 'ext-1', 2, CONV, 'Renamed lane');
  await h.client.conversationBound(await h.client.workflowIdOf(ref), 'worker-chat');
  const after = await waitForView(h.client, ref, (v) => v.owner?.conversation?.title === 'Renamed lane' && v.projectionSync.durableSeq >= v.seq);
  expect(after.seq).toBe(before.seq + 1);
  expect(after.owner!.conversation).toEqual({ ...before.owner!.conversation, title: 'Renamed lane' });
  expect(after.lineage.at(-1)!.conversationId).toBe(CONV);
  // `who` reads the durable record (the API's get): it has the new title too.
  const stored = await getOwnership(h.pool, { ownershipId: before.ownershipId });
  expect(stored!.owner!.conversation!.title).toBe('Renamed lane');
  // The same title again records nothing.
  await h.client.conversationBound(await h.client.workflowIdOf(ref), 'worker-chat');
  await new Promise((r) => setTimeout(r, 500));
  expect((await h.client.projection(ref))!.seq).toBe(after.seq);
  await expectLogMatchesProjection(after);
});

test('a non-ChatGPT executor works with conversation = null, never a guess', async () => {
  const wt = repo.worktrees[1];
  const view = await h.client.bind(bindReq(wt, 'cli-session-1', 'worker-cli', { runtime: 'codex-cli', lane: null, planRef: null }));
  expect(view.owner?.conversation).toBeNull();
  expect(view.owner?.runtime).toBe('codex-cli');
  expect(view.lane).toBeNull();
  await expectLogMatchesProjection(view);
});

/** The activity types a workflow's history scheduled, in order. */
async function activitiesOf(workflowId: string): Promise<string[]> {
  const events = (await h.temporal.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  return events.flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name ?? '?'] : []));
}

test('the service reads the binding as it sends a claim, an accept and a reclaim: the messages carry it and the workflow reads nothing', async () => {
  const CARRIED = '0b6f7d2e-3c4a-4f5b-9a8c-1d2e3f4a5b6c';
  await observe('worker-carried', 'ext-carried', 1, CARRIED, 'Carried');
  // What the service reads from the binding and carries in the message (src/api/service/ownerships.ts newOwnerFacts).
  const conversation = await readExecutorConversation(h.pool, 'worker-carried');
  const fresh = makeRepo(1);
  const wt = fresh.worktrees[0];
  const ref = { worktreePath: wt.path };
  const bound = await h.client.bind({ ...bindReq(wt, 'carried-1', 'worker-carried'), repoRoot: fresh.repoRoot }, { conversation });
  expect(bound.owner?.conversation).toMatchObject({ conversationId: CARRIED, title: 'Carried' });

  // A caller cannot name the binding: a bind request with one is refused, and an accept's input
  // with one has it replaced by what the binding says (here by the workflow's own read: none carried).
  await expectRefused(
    h.client.bind({ ...bindReq(wt, 'carried-x', 'worker-carried'), repoRoot: fresh.repoRoot, binding: { conversation: null } } as BindRequest),
    'unknown_field',
  );
  const offer = await h.client.handoff(ref, {
    executionSessionId: 'carried-1',
    epoch: 1,
    principal: executor('worker-carried'),
    toExecutionSessionId: 'carried-2',
    toWorkerId: 'worker-carried',
  });
  const forged = {
    conversationId: '11111111-2222-4333-8444-555555555555',
    conversationUrl: 'https://chatgpt.com/c/11111111-2222-4333-8444-555555555555',
    observedAt: new Date().toISOString(),
  };
  const accepted = await h.client.acceptHandoff(ref, {
    handoffId: offer.handoff!.handoffId,
    executionSessionId: 'carried-2',
    runtime: 'chatgpt-web',
    worker: { runId: 'run-worker-carried', workerId: 'worker-carried' },
    principal: executor('worker-carried'),
    binding: { conversation: { provider: 'chatgpt-web', ...forged } },
  });
  expect(accepted.owner?.conversation?.conversationId).toBe(CARRIED);

  const reclaimed = await h.client.reclaim(
    ref,
    {
      executionSessionId: 'carried-3',
      runtime: 'chatgpt-web',
      worker: { runId: 'run-worker-carried', workerId: 'worker-carried' },
      principal: { kind: 'admin', id: 'ops' },
      force: true,
      reason: 'carried binding',
    },
    { conversation },
  );
  expect(reclaimed.owner?.conversation?.conversationId).toBe(CARRIED);
  // Only the accept, sent without the binding, had the workflow read it.
  const reading = (await activitiesOf(await h.client.workflowIdOf(ref))).filter((a) => a === 'readExecutorConversation');
  expect(reading).toHaveLength(1);
  await expectLogMatchesProjection(reclaimed);

  // A binding read in a spelling the message's check would not take is not sent: the workflow reads it, the claim goes on.
  const other = makeRepo(1);
  const owt = other.worktrees[0];
  const spelled = { ...conversation!, conversationUrl: `https://chatgpt.com/g/g-x/c/${conversation!.conversationId}` };
  const view = await h.client.bind({ ...bindReq(owt, 'carried-4', 'worker-carried'), repoRoot: other.repoRoot }, { conversation: spelled });
  expect(view.owner?.conversation).toMatchObject({ conversationId: CARRIED, conversationUrl: `https://chatgpt.com/c/${CARRIED}` });
  expect((await activitiesOf(await h.client.workflowIdOf({ worktreePath: owt.path }))).filter((a) => a === 'readExecutorConversation')).toHaveLength(1);
});

test('heartbeats, handoff, accept, plan, submit, landing and removal: every step durable and the log folds to the projection', async () => {
  const wt = repo.worktrees[2];
  const a = await h.client.bind(bindReq(wt, 'session-h1', 'worker-h'));
  const ref = { repoRoot: repo.repoRoot, worktreePath: wt.path };

  // Heartbeat replays append nothing (coalesced), a wrong epoch is ignored.
  for (let i = 0; i < 5; i++) await h.client.heartbeat(ref, { executionSessionId: 'session-h1', epoch: 1 });
  await h.client.heartbeat(ref, { executionSessionId: 'session-h1', epoch: 7 });
  const afterHb = await h.client.projection(ref);
  expect(afterHb!.seq).toBe(a.seq);
  expect(afterHb!.liveness.status).toBe('live');

  // Owner-only updates fenced by epoch and session.
  await expectRefused(h.client.bindPlan(ref, { executionSessionId: 'session-h1', epoch: 2, principal: executor('worker-h'), lane: 'x' }), 'stale_epoch');
  await expectRefused(h.client.bindPlan(ref, { executionSessionId: 'session-zz', epoch: 1, principal: executor('worker-h'), lane: 'x' }), 'not_owner');
  await expectRefused(h.client.bindPlan(ref, { executionSessionId: 'session-h1', epoch: 1, principal: executor('worker-evil'), lane: 'x' }), 'worker_mismatch');
  const planned = await h.client.bindPlan(ref, {
    executionSessionId: 'session-h1',
    epoch: 1,
    principal: executor('worker-h'),
    lane: 'lane-2',
    planRef: 'docs/p2.md',
  });
  expect(planned.lane).toBe('lane-2');

  // Two-phase handoff keeps both identities.
  const started = await h.client.handoff(ref, {
    executionSessionId: 'session-h1',
    epoch: 1,
    principal: executor('worker-h'),
    toExecutionSessionId: 'session-h2',
    toWorkerId: 'worker-h',
    reason: 'resume after restart',
  });
  expect(started.state).toBe('handoff_pending');
  const handoffId = started.handoff!.handoffId;
  await expectRefused(
    h.client.acceptHandoff(ref, {
      handoffId,
      executionSessionId: 'session-h3',
      runtime: 'chatgpt-web',
      worker: { runId: null, workerId: 'worker-h' },
      principal: executor('worker-h'),
    }),
    'handoff_mismatch',
  );
  const accepted = await h.client.acceptHandoff(ref, {
    handoffId,
    executionSessionId: 'session-h2',
    runtime: 'chatgpt-web',
    parentExecutionSessionId: 'session-h1',
    worker: { runId: 'run-h2', workerId: 'worker-h' },
    principal: executor('worker-h'),
  });
  expect(accepted.state).toBe('active');
  expect(accepted.epoch).toBe(2);
  expect(accepted.owner?.parentExecutionSessionId).toBe('session-h1');
  expect(accepted.lineage.map((l) => [l.executionSessionId, l.via, l.epoch])).toEqual([
    ['session-h1', 'bind', 1],
    ['session-h2', 'handoff', 2],
  ]);
  // The old owner is fenced out.
  await expectRefused(h.client.release(ref, { executionSessionId: 'session-h1', epoch: 1, principal: executor('worker-h') }), 'not_owner');

  const submitted = await h.client.submit(ref, { executionSessionId: 'session-h2', epoch: 2, principal: executor('worker-h'), head: 'a'.repeat(40) });
  expect(submitted.state).toBe('submitted');

  // Landing: replayed landed signals produce one receipt.
  const landing = {
    sourceHead: 'a'.repeat(40),
    landedBranch: 'main',
    landedHead: 'b'.repeat(40),
    landedAt: new Date().toISOString(),
    principal: { kind: 'landing' as const, id: 'lander' },
  };
  await h.client.landed(ref, landing);
  await h.client.landed(ref, landing);
  await h.client.landed(ref, landing);
  const landedView = await waitFor(ref, (v) => v.state === 'landed');
  expect(landedView.landings).toHaveLength(1);
  expect(landedView.landings[0]).toMatchObject({ executionSessionId: 'session-h2', worker: { workerId: 'worker-h' }, sourceBranch: wt.branch });
  const receipts = await h.pool.query('SELECT count(*)::int AS n FROM landing_receipts WHERE ownership_id = $1', [a.ownershipId]);
  expect(receipts.rows[0].n).toBe(1);
  await expectLogMatchesProjection(landedView);

  await h.client.worktreeRemoved(ref, { principal: { kind: 'system', id: 'host' } });
  const handle = h.temporal.workflow.getHandle(await h.client.workflowIdOf(ref));
  const final = (await handle.result()) as { state: string };
  expect(final.state).toBe('closed');
  const events = await readEvents(h.pool, a.ownershipId);
  expect(events.map((e) => e.type)).toEqual([
    'ownership.claimed',
    'ownership.plan_bound',
    'ownership.handoff_started',
    'ownership.claimed',
    'ownership.submitted',
    'ownership.landed',
    'ownership.worktree_removed',
  ]);
  const row = await h.pool.query('SELECT state, record FROM ownerships WHERE ownership_id = $1', [a.ownershipId]);
  expect(row.rows[0].state).toBe('closed');
  expect(row.rows[0].record).toEqual(project(events));
});

test('bad messages are refused with their reason code and change nothing', async () => {
  const fresh = makeRepo(1);
  const wt = fresh.worktrees[0];
  const base = { ...bindReq(wt, 'session-bad', 'worker-bad'), repoRoot: fresh.repoRoot };
  const view = await h.client.bind(base);
  const ref = { repoRoot: fresh.repoRoot, worktreePath: wt.path };
  const before = await readEvents(h.pool, view.ownershipId);

  await expectRefused(h.client.bind({ ...base, conversation: { conversationId: CONV } } as unknown as BindRequest), 'unknown_field');
  await expectRefused(h.client.bind({ ...base, executionSessionId: 'has spaces' }), 'invalid_input');
  await expectRefused(h.client.bind({ ...base, worktreePath: '/etc/passwd' }), 'path_outside_allowed_roots');
  await expectRefused(h.client.bind({ ...base, worktreePath: `${wt.path}/../../../../../../../etc` }), 'path_outside_allowed_roots');
  await expectRefused(h.client.bind({ ...base, principal: executor('worker-someone-else') }), 'worker_mismatch');
  await expectRefused(h.client.release(ref, { executionSessionId: 'session-bad', epoch: 2, principal: executor('worker-bad') }), 'stale_epoch');
  await expectRefused(h.client.release(ref, { executionSessionId: 'session-other', epoch: 1, principal: executor('worker-bad') }), 'not_owner');
  await expectRefused(
    h.client.release(ref, { executionSessionId: 'session-bad', epoch: 1, principal: executor('worker-bad'), extra: 1 } as never),
    'unknown_field',
  );
  await expectRefused(
    h.client.reclaim(ref, {
      executionSessionId: 'session-r',
      runtime: 'x',
      worker: { runId: null, workerId: 'worker-r' },
      principal: executor('worker-r'),
      force: true,
      reason: 'x',
    }),
    'force_requires_admin',
  );
  await expectRefused(
    h.client.reclaim(ref, {
      executionSessionId: 'session-r',
      runtime: 'x',
      worker: { runId: null, workerId: 'worker-r' },
      principal: { kind: 'admin', id: 'ops' },
      force: true,
    }),
    'force_requires_reason',
  );

  const after = await readEvents(h.pool, view.ownershipId);
  expect(after).toEqual(before);
  await expectLogMatchesProjection(view);
});

const waitFor = (ref: { repoRoot: string; worktreePath: string }, pred: (v: OwnershipView) => boolean) => waitForView(h.client, ref, pred);

test('the host agent reports HEAD and ahead/behind the base branch with each projection (docs/ownership-record.md#the-live-view)', async () => {
  const fresh = makeRepo(1);
  const wt = fresh.worktrees[0];
  const ref = { repoRoot: fresh.repoRoot, worktreePath: wt.path };
  const view = await h.client.bind({ ...bindReq(wt, 'session-head', 'worker-head'), repoRoot: fresh.repoRoot });
  expect(view.projectionSync.branch).toMatchObject({ base: 'main', ahead: 0, behind: 0, head: git(wt.path, 'rev-parse', 'HEAD') });
  writeFileSync(path.join(wt.path, 'f.txt'), 'x\n');
  git(wt.path, 'add', '.');
  git(wt.path, 'commit', '-q', '-m', 'one');
  const planned = await h.client.bindPlan(ref, { executionSessionId: 'session-head', epoch: 1, principal: executor('worker-head'), lane: 'head-lane' });
  const seen = await waitFor(ref, (v) => v.projectionSync.localSeq >= planned.seq);
  expect(seen.projectionSync.branch).toMatchObject({ base: 'main', ahead: 1, behind: 0, head: git(wt.path, 'rev-parse', 'HEAD') });
});

test("a new owner's process identity must be its session's own: pid 1, an ended process or another session's process is refused", async () => {
  const wt = repo.worktrees[3]!;
  const refusedBy = async (process: BindRequest['process']) => {
    const err = await expectRefused(h.client.bind(bindReq(wt, 'session-proc', 'worker-proc', { process })), 'process_not_session');
    return err.details?.reason;
  };
  const mine = await currentProcessIdentity(h.hostId);
  expect(await refusedBy({ ...mine, pid: 1, startTime: '1' })).toMatch(/init/);
  expect(await refusedBy({ ...mine, startTime: `${mine.startTime}0` })).toMatch(/another process/);
  const other = spawn('sleep', ['30'], { env: { ...process.env, OVERDECK_EXECUTION_SESSION_ID: 'someone-else' } });
  try {
    expect(await refusedBy(await currentProcessIdentity(h.hostId, other.pid!))).toMatch(/another session/);
  } finally {
    other.kill();
  }
  // Nothing was recorded by the refusals; the session's own process binds.
  const view = await h.client.bind(bindReq(wt, 'session-proc', 'worker-proc', { process: mine }));
  expect(view.owner?.process?.pid).toBe(mine.pid);
  expect((await readEvents(h.pool, view.ownershipId)).map((e) => e.type)).toEqual(['ownership.claimed']);
});
