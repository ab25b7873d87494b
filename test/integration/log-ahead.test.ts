import type { OwnershipViewOut } from '../../src/contract/http';
import type { ClaimInput } from '../../src/domain/commands';
import { decideBindPlan, decideClaim, decideHandoff, type Decision } from '../../src/domain/decide';
import { stampEvent, type OwnershipEvent } from '../../src/domain/events';
import { applyEvent, type OwnershipRecord } from '../../src/domain/projection';
import { appendEvents, readEvents } from '../../src/store/event-store';
import { newOwnershipId } from '../../src/ids/workflow-id';
import type { OwnershipView } from '../../src/workflows/messages';
import { projectionQuery } from '../../src/workflows/messages';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { executorPrincipal, startBelieving } from '../support/harness';

/**
 * The log and the workflow must never disagree for long. Two ways they can, each forged here the
 * way it happens:
 * - the log ahead: a workflow task wrote its event to PostgreSQL (its store activity ran) and then
 *   Temporal lost the task (a server crash before it was recorded). The update that caused it is
 *   gone with it; the caller got a 503 and may never send it again. The log's owner must still be
 *   the owner everywhere: its messages are taken, GET names it, others are refused.
 * - the log behind: the run's record holds events PostgreSQL never got (a sequence gap). The
 *   persist step must not retry forever: the log wins, and the message behind is decided again.
 * Real stack: Temporal dev server, PostgreSQL, the API over HTTP, git worktrees.
 */

let s: ApiStack;
let repo: RepoFixture;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(7);
});
afterAll(async () => s?.stop());

type Res = { status: number; body: unknown };
const post = (id: string, what: string, token: string, body: unknown) => s.raw('POST', `/v1/ownerships/${id}/${what}`, { token, body });
const codeOf = (r: Res) => ({ status: r.status, code: (r.body as { code?: string }).code ?? null });

function events(d: Decision) {
  if ('code' in d) throw new Error(`refused: ${d.code}`);
  return d.events;
}

const fold = (events: OwnershipEvent[]): OwnershipRecord | null => events.reduce<OwnershipRecord | null>((r, e) => applyEvent(r, e), null);

/** What a workflow task that decided `input` on the log's record would have written, written. */
async function forgeClaim(workflowId: string, ownershipId: string, session: string): Promise<OwnershipEvent> {
  const record = fold(await readEvents(s.h.pool, ownershipId));
  const input: ClaimInput = {
    ownershipId,
    branch: record!.branch,
    executionSessionId: session,
    runtime: 'codex-cli',
    parentExecutionSessionId: null,
    process: null,
    worker: { workerId: s.workerId, runId: null },
    principal: executorPrincipal(s.workerId),
    lane: null,
    planRef: null,
    requestId: null,
  };
  const [draft] = events(decideClaim(record, input, null));
  const event = stampEvent(ownershipId, record!, draft!, new Date().toISOString());
  const appended = await appendEvents(s.h.pool, workflowId, [event]);
  expect(appended).toMatchObject({ durableSeq: event.seq, replaced: [] });
  return event;
}

const live = (workflowId: string) => s.h.temporal.workflow.getHandle(workflowId).query(projectionQuery) as Promise<OwnershipView | null>;

async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Bound by A, released: the next claim is the one a lost workflow task wrote. */
async function releasedOwnership(i: number): Promise<{ id: string; workflowId: string }> {
  const wt = repo.worktrees[i]!;
  const bound = await s.raw('POST', '/v1/bind', {
    token: s.tokens.executor,
    body: { worktreePath: wt.path, branch: wt.branch, executionSessionId: `first-${i}`, runtime: 'codex-cli' },
  });
  expect(bound.status).toBe(200);
  const id = (bound.body as OwnershipViewOut).ownershipId;
  expect((await post(id, 'release', s.tokens.executor, { executionSessionId: `first-${i}`, epoch: 1 })).status).toBe(200);
  const { rows } = await s.h.pool.query<{ workflow_id: string }>('SELECT workflow_id FROM ownerships WHERE ownership_id = $1', [id]);
  return { id, workflowId: rows[0]!.workflow_id };
}

test("the log's owner, unknown to the workflow, is taken at its first heartbeat", async () => {
  const { id, workflowId } = await releasedOwnership(0);
  const claim = await forgeClaim(workflowId, id, 'lost-claim-0');
  // The split, as a server crash leaves it: the log says active, the workflow still says released.
  expect(await live(workflowId)).toMatchObject({ state: 'released', seq: claim.seq - 1 });

  expect((await post(id, 'heartbeat', s.tokens.executor, { executionSessionId: 'lost-claim-0', epoch: 2 })).status).toBe(202);
  const v = await eventually(
    () => live(workflowId),
    (x) => x?.seq === claim.seq,
  );
  expect(v).toMatchObject({ state: 'active', epoch: 2, seq: claim.seq, owner: { executionSessionId: 'lost-claim-0' }, liveness: { status: 'live' } });
  // ...and it acts as the owner; the log stays gap-free and holds every acknowledged event once.
  expect((await post(id, 'release', s.tokens.executor, { executionSessionId: 'lost-claim-0', epoch: 2 })).status).toBe(200);
  expect((await readEvents(s.h.pool, id)).map((e) => `${e.seq}:${e.type}`)).toEqual([
    '1:ownership.claimed',
    '2:ownership.released',
    '3:ownership.claimed',
    '4:ownership.released',
  ]);
});

test("an update from the log's owner is answered about the log, not refused by a workflow behind it", async () => {
  const { id, workflowId } = await releasedOwnership(1);
  await forgeClaim(workflowId, id, 'lost-claim-1');
  // Before the fix: 409 not_owner from the workflow, while GET (the durable row) named this session.
  const again = {
    token: s.tokens.executor,
    body: { executionSessionId: 'lost-claim-1', epoch: 2, planRef: 'plan-after-crash' },
    headers: { 'idempotency-key': 'plan-after-crash-1' },
  };
  const planned = await s.raw('POST', `/v1/ownerships/${id}/plan`, again);
  expect(codeOf(planned)).toEqual({ status: 200, code: null });
  expect(planned.body).toMatchObject({ state: 'active', epoch: 2, planRef: 'plan-after-crash', owner: { executionSessionId: 'lost-claim-1' } });
  // The workflow refused the first message (it was behind): the request went on under its
  // successor id, which the plan's event carries. A retry of the same request is answered as the
  // first was, never refused by the settled first message.
  const planEvents = (await readEvents(s.h.pool, id)).filter((e) => e.type === 'ownership.plan_bound');
  expect(planEvents.map((e) => e.messageId?.endsWith('.1'))).toEqual([true]);
  const retried = await s.raw('POST', `/v1/ownerships/${id}/plan`, again);
  expect(codeOf(retried)).toEqual({ status: 200, code: null });
  expect(retried.body).toMatchObject({ state: 'active', epoch: 2, planRef: 'plan-after-crash' });
  expect((await readEvents(s.h.pool, id)).filter((e) => e.type === 'ownership.plan_bound')).toHaveLength(1);
  // Somebody else is refused as the log says: the worktree is owned.
  const wt = repo.worktrees[1]!;
  const other = await s.raw('POST', '/v1/bind', {
    token: s.tokens.executor,
    body: { worktreePath: wt.path, branch: wt.branch, executionSessionId: 'someone-else', runtime: 'codex-cli' },
  });
  expect(codeOf(other)).toEqual({ status: 409, code: 'worktree_owned' });
});

test('a request the API went on with under its successor id is answered so when retried, never refused by its settled first message', async () => {
  const { id, workflowId } = await releasedOwnership(6);
  await forgeClaim(workflowId, id, 'lost-claim-5');
  // The lost claim's owner also started a handoff the workflow never heard of.
  const record = fold(await readEvents(s.h.pool, id));
  const [draft] = events(
    decideHandoff(
      record,
      {
        ownershipId: id,
        executionSessionId: 'lost-claim-5',
        epoch: 2,
        principal: executorPrincipal(s.workerId),
        toExecutionSessionId: 'next-5',
        toWorkerId: s.workerId,
      },
      'hof_forged5',
      new Date(Date.now() + 600_000).toISOString(),
    ),
  );
  await appendEvents(s.h.pool, workflowId, [stampEvent(id, record!, draft!, new Date().toISOString())]);
  const cancel = { token: s.tokens.executor, body: { executionSessionId: 'lost-claim-5', epoch: 2 }, headers: { 'idempotency-key': 'cancel-5' } };
  // The workflow, behind the log, refuses the first message; the API catches it up and goes on
  // under the successor id, whose event the log holds.
  const first = await s.raw('POST', `/v1/ownerships/${id}/handoff/cancel`, cancel);
  expect(codeOf(first)).toEqual({ status: 200, code: null });
  expect(first.body).toMatchObject({ state: 'active', handoff: null });
  const cancelled = (await readEvents(s.h.pool, id)).filter((e) => e.type === 'ownership.handoff_cancelled');
  expect(cancelled.map((e) => e.messageId?.endsWith('.1'))).toEqual([true]);
  // The same request again (its answer lost, say): it took effect, so it is answered 200, and
  // nothing is recorded twice. Before: 409 no_pending_handoff, from the first message settled refused.
  const retried = await s.raw('POST', `/v1/ownerships/${id}/handoff/cancel`, cancel);
  expect(codeOf(retried)).toEqual({ status: 200, code: null });
  expect((await readEvents(s.h.pool, id)).filter((e) => e.type === 'ownership.handoff_cancelled')).toHaveLength(1);
});

test("GET names the log's owner while the workflow is behind, and the workflow catches up", async () => {
  const { id, workflowId } = await releasedOwnership(2);
  const claim = await forgeClaim(workflowId, id, 'lost-claim-2');
  const got = await s.raw('GET', `/v1/ownerships/${id}`, { token: s.tokens.reader });
  expect(got.status).toBe(200);
  expect(got.body).toMatchObject({ state: 'active', epoch: 2, seq: claim.seq, owner: { executionSessionId: 'lost-claim-2' } });
  expect(
    await eventually(
      () => live(workflowId),
      (x) => x?.seq === claim.seq,
    ),
  ).toMatchObject({ state: 'active', seq: claim.seq });
});

test('a sequence gap (the run holds events the log never got) is repaired from the log, not retried forever', async () => {
  const wt = repo.worktrees[3]!;
  const ownershipId = newOwnershipId();
  const workflowId = `gap-${ownershipId}`;
  const principal = executorPrincipal(s.workerId);
  const worker = { workerId: s.workerId, runId: null };
  // The log: a claim and a plan, as a first run wrote them.
  const claimInput: ClaimInput = {
    ownershipId,
    branch: wt.branch,
    executionSessionId: 'gap-owner',
    runtime: 'codex-cli',
    parentExecutionSessionId: null,
    process: null,
    worker,
    principal,
    lane: null,
    planRef: null,
    requestId: null,
  };
  const place = { repoRoot: repo.repoRoot, worktreePath: wt.path, branch: wt.branch, hostId: s.h.hostId, seq: 0 };
  const claimed = stampEvent(ownershipId, place, events(decideClaim(null, claimInput, null))[0]!, new Date().toISOString());
  const planned = stampEvent(
    ownershipId,
    { ...place, seq: 1 },
    events(decideBindPlan(applyEvent(null, claimed), { ownershipId, executionSessionId: 'gap-owner', epoch: 1, planRef: 'p-1', principal }))[0]!,
    new Date().toISOString(),
  );
  await appendEvents(s.h.pool, workflowId, [claimed, planned]);
  const logRecord = fold([claimed, planned])!;
  // The next run believes two more events are durable (seq 4): they are not in the log.
  const ahead: OwnershipRecord = { ...logRecord, seq: 4, planRef: 'p-never-logged' };
  const handle = await startBelieving(s.h, {
    workflowId,
    ownershipId,
    repoRoot: repo.repoRoot,
    worktree: wt,
    record: ahead,
    recentEvents: [claimed, planned],
    sync: { localSeq: 0, durableSeq: 4 },
  });
  try {
    // Before the fix this update never answered: the persist of seq 5 was refused and retried forever.
    const view = await s.h.client.bindPlan({ workflowId, ownershipId }, { ownershipId, executionSessionId: 'gap-owner', epoch: 1, planRef: 'p-2', principal });
    expect(view).toMatchObject({ seq: 3, planRef: 'p-2', state: 'active' });
    expect((await readEvents(s.h.pool, ownershipId)).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(await live(workflowId)).toMatchObject({ seq: 3, planRef: 'p-2', projectionSync: { durableSeq: 3 } });
  } finally {
    await handle.terminate('test done').catch(() => undefined);
  }
});

test('a retried handoff or reclaim whose first answer was lost (in doubt) is answered with its outcome, not refused', async () => {
  const { id } = await releasedOwnership(4);
  const wt = repo.worktrees[4]!;
  const again = await s.raw('POST', '/v1/bind', {
    token: s.tokens.executor,
    body: { worktreePath: wt.path, branch: wt.branch, executionSessionId: 'retry-a', runtime: 'codex-cli' },
  });
  expect(again.status).toBe(200);
  const epoch = (again.body as OwnershipViewOut).epoch;
  const handoff = { executionSessionId: 'retry-a', epoch, toExecutionSessionId: 'retry-b', toWorkerId: s.workerId };
  const first = await post(id, 'handoff', s.tokens.executor, handoff);
  expect(first.status).toBe(200);
  // Before: 409 invalid_state, though the caller's own handoff is what is pending.
  const second = await post(id, 'handoff', s.tokens.executor, handoff);
  expect(codeOf(second)).toEqual({ status: 200, code: null });
  expect((second.body as OwnershipViewOut).handoff?.handoffId).toBe((first.body as OwnershipViewOut).handoff?.handoffId);

  const reclaim = { executionSessionId: 'retry-c', runtime: 'codex-cli', force: true, reason: 'in-doubt retry', worker: { workerId: s.workerId } };
  const took = await post(id, 'reclaim', s.tokens.admin, reclaim);
  expect(took.status).toBe(200);
  // Before: 400 invalid_input (a session reclaiming from itself).
  const retried = await post(id, 'reclaim', s.tokens.admin, reclaim);
  expect(codeOf(retried)).toEqual({ status: 200, code: null });
  expect(retried.body).toMatchObject({ state: 'active', epoch: (took.body as OwnershipViewOut).epoch, owner: { executionSessionId: 'retry-c' } });
  const types = (await readEvents(s.h.pool, id)).map((e) => e.type);
  expect(types.filter((t) => t === 'ownership.handoff_started')).toHaveLength(1);
  expect(types.filter((t) => t === 'ownership.reclaimed')).toHaveLength(1);
});

test('a log ahead of the batch it took as sent: nothing is answered as durable that the log holds otherwise', async () => {
  const wt = repo.worktrees[5]!;
  const ownershipId = newOwnershipId();
  const workflowId = `ahead-of-batch-${ownershipId}`;
  const principal = executorPrincipal(s.workerId);
  const worker = { workerId: s.workerId, runId: null };
  const place = { repoRoot: repo.repoRoot, worktreePath: wt.path, branch: wt.branch, hostId: s.h.hostId, seq: 0 };
  const claimInput: ClaimInput = {
    ownershipId,
    branch: wt.branch,
    executionSessionId: 'ahead-owner',
    runtime: 'codex-cli',
    parentExecutionSessionId: null,
    process: null,
    worker,
    principal,
    lane: null,
    planRef: null,
    requestId: null,
  };
  const claimed = stampEvent(ownershipId, place, events(decideClaim(null, claimInput, null))[0]!, new Date().toISOString());
  const plan = (record: OwnershipRecord, planRef: string, messageId?: string) =>
    stampEvent(
      ownershipId,
      record,
      events(decideBindPlan(record, { ownershipId, executionSessionId: 'ahead-owner', epoch: 1, planRef, principal }))[0]!,
      new Date().toISOString(),
      messageId,
    );
  // The log, as a workflow task that Temporal then lost wrote it: the plan the run will decide
  // again (the same message, the same decision at seq 2), and one more it will never hear of (seq 3).
  const p1 = plan(applyEvent(null, claimed), 'p-1', `msg-${ownershipId}-p1`);
  const lostTask = plan(fold([claimed, p1])!, 'p-from-a-lost-task');
  await appendEvents(s.h.pool, workflowId, [claimed, p1, lostTask]);
  // The run knows the claim only.
  const known = fold([claimed])!;
  const handle = await startBelieving(s.h, {
    workflowId,
    ownershipId,
    repoRoot: repo.repoRoot,
    worktree: wt,
    record: known,
    recentEvents: [claimed],
    sync: { localSeq: 1, durableSeq: 1 },
  });
  try {
    const ref = { workflowId, ownershipId };
    const first = await s.h.client.bindPlan(
      ref,
      { ownershipId, executionSessionId: 'ahead-owner', epoch: 1, planRef: 'p-1', principal },
      { messageId: `msg-${ownershipId}-p1` },
    );
    expect(first).toMatchObject({ seq: 2, planRef: 'p-1' });
    // Before the fix this was answered at seq 3 at once, "durable" because the log reached seq 3,
    // while the log's seq 3 is another plan: an acknowledged event that is in no log.
    const second = await s.h.client.bindPlan(ref, { ownershipId, executionSessionId: 'ahead-owner', epoch: 1, planRef: 'p-2', principal });
    const log = await readEvents(s.h.pool, ownershipId);
    const answered = log.find((e) => e.seq === second.seq);
    expect(answered).toMatchObject({ type: 'ownership.plan_bound', data: { planRef: 'p-2' } });
    expect(log.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(log[2]).toMatchObject({ data: { planRef: 'p-from-a-lost-task' } });
    expect(second).toMatchObject({ seq: 4, planRef: 'p-2' });
    expect(
      await eventually(
        () => live(workflowId),
        (v) => v?.projectionSync.durableSeq === 4,
      ),
    ).toMatchObject({ seq: 4, planRef: 'p-2', projectionSync: { durableSeq: 4 } });

    // The log moves on without the run again (another lost task): a read of its tail folds onto
    // exactly what the run adopted. Before the fix the run's durable seq was past its durable
    // record here, the fold met a gap, and every workflow task failed from then on: wedged.
    const more = plan(fold(await readEvents(s.h.pool, ownershipId))!, 'p-second-lost-task');
    await appendEvents(s.h.pool, workflowId, [more]);
    const caught = await s.h.client.catchUp(ref, more.seq);
    expect(caught).toMatchObject({ seq: 5 });
    expect(await live(workflowId)).toMatchObject({ seq: 5, planRef: 'p-second-lost-task' });
    const after = await s.h.client.bindPlan(ref, { ownershipId, executionSessionId: 'ahead-owner', epoch: 1, planRef: 'p-3', principal });
    expect(after).toMatchObject({ seq: 6, planRef: 'p-3' });
  } finally {
    await handle.terminate('test done').catch(() => undefined);
  }
});
