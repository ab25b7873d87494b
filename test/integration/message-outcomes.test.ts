import type { OwnershipViewOut } from '../../src/contract/http';
import type { ClaimInput } from '../../src/domain/commands';
import { decideBindPlan, decideClaim, decideRelease, type Decision } from '../../src/domain/decide';
import { stampEvent, type OwnershipEvent } from '../../src/domain/events';
import { applyEvent, type OwnershipRecord } from '../../src/domain/projection';
import { newOwnershipId } from '../../src/ids/workflow-id';
import { appendEvents, messageOutcome, readEvents, settleRefused } from '../../src/store/event-store';
import { OwnershipError } from '../../src/client/errors';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { executorPrincipal, startBelieving } from '../support/harness';

/**
 * An answer is the log's answer. Every update is a message with an id; its events record it, and
 * the log keeps one outcome per message (message_outcomes). Each case is the interleaving that
 * broke it under contention, made to happen: a message refused by the API before a workflow task
 * wrote it, a message decided twice, a message applied by a task Temporal lost and then refused by
 * a run that never heard of it. Real PostgreSQL, Temporal, API and git worktrees.
 */

let s: ApiStack;
let repo: RepoFixture;
beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(4);
});
afterAll(async () => s?.stop());

const events = (d: Decision) => {
  if ('code' in d) throw new Error(`refused: ${d.code}`);
  return d.events;
};
const fold = (es: OwnershipEvent[]): OwnershipRecord | null => es.reduce<OwnershipRecord | null>((r, e) => applyEvent(r, e), null);

function forgedLifecycle(i: number, session: string) {
  const wt = repo.worktrees[i]!;
  const ownershipId = newOwnershipId();
  const principal = executorPrincipal(s.workerId);
  const claimInput: ClaimInput = {
    ownershipId,
    branch: wt.branch,
    executionSessionId: session,
    runtime: 'codex-cli',
    parentExecutionSessionId: null,
    process: null,
    worker: { workerId: s.workerId, runId: null },
    principal,
    lane: null,
    planRef: null,
    requestId: null,
  };
  const place = { repoRoot: repo.repoRoot, worktreePath: wt.path, branch: wt.branch, hostId: s.h.hostId, seq: 0 };
  const claimed = stampEvent(ownershipId, place, events(decideClaim(null, claimInput, null))[0]!, new Date().toISOString(), `msg-claim-${ownershipId}`);
  const plan = (record: OwnershipRecord, planRef: string, messageId: string) =>
    stampEvent(
      ownershipId,
      record,
      events(decideBindPlan(record, { ownershipId, executionSessionId: session, epoch: 1, planRef, principal }))[0]!,
      new Date().toISOString(),
      messageId,
    );
  return { wt, ownershipId, workflowId: `msg-${ownershipId}`, principal, claimed, plan };
}

test('the store: a message settled refused is never written; one applied is never refused nor written twice', async () => {
  const f = forgedLifecycle(0, 'store-owner');
  await appendEvents(s.h.pool, f.workflowId, [f.claimed]);
  const r1 = fold([f.claimed])!;

  // Refused first (the API answered 409 or gave up): the workflow task that decided it writes nothing.
  expect(await settleRefused(s.h.pool, 'msg-refused-first', f.ownershipId, 'not_owner')).toMatchObject({ outcome: 'refused', code: 'not_owner' });
  const late = f.plan(r1, 'p-late', 'msg-refused-first');
  const appended = await appendEvents(s.h.pool, f.workflowId, [late]);
  expect(appended.settled).toEqual({ messageId: 'msg-refused-first', seq: 2, outcome: 'refused', code: 'not_owner' });
  expect((await readEvents(s.h.pool, f.ownershipId)).map((e) => e.seq)).toEqual([1]);

  // Applied first: a refusal that comes after finds the events, and that is the answer.
  const p1 = f.plan(r1, 'p-1', 'msg-applied-first');
  expect((await appendEvents(s.h.pool, f.workflowId, [p1])).settled).toBeUndefined();
  expect(await settleRefused(s.h.pool, 'msg-applied-first', f.ownershipId, 'unavailable')).toEqual({
    outcome: 'applied',
    ownershipId: f.ownershipId,
    firstSeq: 2,
  });

  // Decided twice (a run that re-decided it at the next seq): nothing written, the first one named.
  const twice = f.plan(fold([f.claimed, p1])!, 'p-1-again', 'msg-applied-first');
  expect((await appendEvents(s.h.pool, f.workflowId, [twice])).settled).toEqual({ messageId: 'msg-applied-first', seq: 3, outcome: 'applied', firstSeq: 2 });
  expect((await readEvents(s.h.pool, f.ownershipId)).map((e) => e.seq)).toEqual([1, 2]);

  // And the log itself refuses a second event of one type for one message, whoever writes it.
  await expect(
    s.h.pool.query(
      `INSERT INTO ownership_events (ownership_id, seq, type, at, actor_session_id, repo_root, worktree_path, branch, host_id, event, message_id)
       SELECT ownership_id, 3, type, at, actor_session_id, repo_root, worktree_path, branch, host_id, event, message_id FROM ownership_events WHERE ownership_id = $1 AND seq = 2`,
      [f.ownershipId],
    ),
  ).rejects.toThrow(/ownership_events_message_idx/);
  // Outcomes are settled once: the database refuses to change one.
  await expect(s.h.pool.query(`UPDATE message_outcomes SET outcome = 'refused', first_seq = NULL WHERE message_id = 'msg-applied-first'`)).rejects.toThrow(
    /append-only/,
  );
});

test('a message the API settled refused before the workflow wrote it: the update is refused with that code, and the log never holds it', async () => {
  const f = forgedLifecycle(1, 'burn-owner');
  await appendEvents(s.h.pool, f.workflowId, [f.claimed]);
  const handle = await startBelieving(s.h, {
    workflowId: f.workflowId,
    ownershipId: f.ownershipId,
    repoRoot: repo.repoRoot,
    worktree: f.wt,
    record: fold([f.claimed])!,
    recentEvents: [f.claimed],
    sync: { localSeq: 1, durableSeq: 1 },
  });
  try {
    const ref = { workflowId: f.workflowId, ownershipId: f.ownershipId };
    await settleRefused(s.h.pool, `msg-burnt-${f.ownershipId}`, f.ownershipId, 'unavailable');
    const refused = s.h.client.bindPlan(
      ref,
      { ownershipId: f.ownershipId, executionSessionId: 'burn-owner', epoch: 1, planRef: 'p-burnt', principal: f.principal },
      { messageId: `msg-burnt-${f.ownershipId}` },
    );
    await expect(refused).rejects.toMatchObject({ code: 'unavailable' });
    await expect(refused).rejects.toBeInstanceOf(OwnershipError);
    // The next message is decided on the record the log has, at the next seq.
    const next = await s.h.client.bindPlan(ref, {
      ownershipId: f.ownershipId,
      executionSessionId: 'burn-owner',
      epoch: 1,
      planRef: 'p-next',
      principal: f.principal,
    });
    expect(next).toMatchObject({ seq: 2, planRef: 'p-next' });
    const log = await readEvents(s.h.pool, f.ownershipId);
    expect(log.map((e) => e.data)).not.toContainEqual(expect.objectContaining({ planRef: 'p-burnt' }));
    expect(log.map((e) => e.seq)).toEqual([1, 2]);
  } finally {
    await handle.terminate('test done').catch(() => undefined);
  }
});

test('a message a lost task applied, sent again to a run that never heard of it and would refuse it: answered from the log', async () => {
  const f = forgedLifecycle(2, 'lost-owner');
  const principal = f.principal;
  // The lost task: the owner released (seq 2) under a message whose answer never came back.
  const r1 = fold([f.claimed])!;
  const releaseMessage = `msg-release-${f.ownershipId}`;
  const released = stampEvent(
    f.ownershipId,
    r1,
    events(decideRelease(r1, { ownershipId: f.ownershipId, executionSessionId: 'lost-owner', epoch: 1, reason: null, principal }))[0]!,
    new Date().toISOString(),
    releaseMessage,
  );
  await appendEvents(s.h.pool, f.workflowId, [f.claimed, released]);
  // The run knows only the claim, and believes a plan of the owner's own is pending at seq 2.
  const handle = await startBelieving(s.h, {
    workflowId: f.workflowId,
    ownershipId: f.ownershipId,
    repoRoot: repo.repoRoot,
    worktree: f.wt,
    record: r1,
    recentEvents: [f.claimed],
    sync: { localSeq: 1, durableSeq: 1 },
  });
  try {
    const ref = { workflowId: f.workflowId, ownershipId: f.ownershipId };
    // Another message takes seq 2 in this run: the log wins, it is decided again on "released" (seq 3).
    const plan = await s.h.client.bindPlan(ref, { ownershipId: f.ownershipId, executionSessionId: 'lost-owner', epoch: 1, planRef: 'p-after', principal });
    expect(plan).toMatchObject({ seq: 3, state: 'released' });
    // The retry of the release (same message): the run has adopted it, and answers from it. Before,
    // it was decided again on "released" and refused: the owner told no, its worktree released.
    const retried = await s.h.client.release(
      ref,
      { ownershipId: f.ownershipId, executionSessionId: 'lost-owner', epoch: 1, reason: null, principal },
      { messageId: releaseMessage },
    );
    expect(retried).toMatchObject({ state: 'released' });
    expect((await readEvents(s.h.pool, f.ownershipId)).filter((e) => e.type === 'ownership.released')).toHaveLength(1);
  } finally {
    await handle.terminate('test done').catch(() => undefined);
  }
});

test('HTTP: every write answer names its message; a retried Idempotency-Key is one message, answered alike; a malformed key is refused', async () => {
  const wt = repo.worktrees[3]!;
  const bound = await s.raw('POST', '/v1/bind', {
    token: s.tokens.executor,
    body: { worktreePath: wt.path, branch: wt.branch, executionSessionId: 'http-owner', runtime: 'codex-cli' },
  });
  expect(bound.status).toBe(200);
  expect(bound.headers.get('x-od-message-id')).toMatch(/^msg_/);
  const { ownershipId: id, epoch } = bound.body as OwnershipViewOut;
  const handoff = { executionSessionId: 'http-owner', epoch, toExecutionSessionId: 'http-next', toWorkerId: s.workerId };
  const headers = { 'idempotency-key': 'handoff-1' };
  const [a, b] = await Promise.all([
    s.raw('POST', `/v1/ownerships/${id}/handoff`, { token: s.tokens.executor, body: handoff, headers }),
    s.raw('POST', `/v1/ownerships/${id}/handoff`, { token: s.tokens.executor, body: handoff, headers }),
  ]);
  expect([a.status, b.status]).toEqual([200, 200]);
  expect(a.headers.get('x-od-message-id')).toBe(b.headers.get('x-od-message-id'));
  expect((a.body as OwnershipViewOut).handoff?.handoffId).toBe((b.body as OwnershipViewOut).handoff?.handoffId);
  const log = await readEvents(s.h.pool, id);
  expect(log.filter((e) => e.type === 'ownership.handoff_started')).toHaveLength(1);
  expect(log.find((e) => e.type === 'ownership.handoff_started')!.messageId).toBe(a.headers.get('x-od-message-id'));

  // A refusal names its message too, and that message is settled refused: it never takes effect.
  const refused = await s.raw('POST', `/v1/ownerships/${id}/release`, { token: s.tokens.executor, body: { executionSessionId: 'http-stranger', epoch } });
  expect(refused.status).toBe(409);
  const refusedId = refused.headers.get('x-od-message-id')!;
  expect(await messageOutcome(s.h.pool, refusedId)).toMatchObject({ outcome: 'refused' });

  const bad = await s.raw('POST', `/v1/ownerships/${id}/release`, {
    token: s.tokens.executor,
    body: { executionSessionId: 'http-owner', epoch },
    headers: { 'idempotency-key': 'has spaces' },
  });
  expect(bad.status).toBe(400);
  expect((bad.body as { code: string }).code).toBe('invalid_input');
});

test('a reclaim retried as a new message while the first is still on its way to the log: answered only once the log holds a reclaim, never from the pending record', async () => {
  const fresh = makeRepo(1);
  const wt = fresh.worktrees[0]!;
  const principal = executorPrincipal(s.workerId);
  const bound = await s.h.client.bind({
    repoRoot: fresh.repoRoot,
    worktreePath: wt.path,
    branch: wt.branch,
    executionSessionId: 'rr-owner',
    runtime: 'codex-cli',
    worker: { workerId: s.workerId, runId: null },
    principal,
  });
  const ref = { workflowId: await s.h.client.workflowIdOf({ worktreePath: wt.path }), ownershipId: bound.ownershipId };
  const reclaim = {
    ownershipId: bound.ownershipId,
    executionSessionId: 'rr-new',
    runtime: 'codex-cli',
    worker: { workerId: s.workerId, runId: null },
    principal: { kind: 'admin' as const, id: 'ops' },
    force: true,
    reason: 'retried reclaim',
  };
  const first = `msg-rr-1-${bound.ownershipId}`;
  const second = `msg-rr-2-${bound.ownershipId}`;
  // The log's writer for this ownership is held: the first reclaim is decided and waits to be written.
  const holder = await s.h.pool.connect();
  let held = true;
  const release = async () => {
    if (!held) return;
    held = false;
    await holder.query('COMMIT');
    holder.release();
  };
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock(hashtext($1))', [bound.ownershipId]);
    const r1 = s.h.client.reclaim(ref, reclaim, { messageId: first }).then(
      (v) => ({ ok: v }),
      (err: unknown) => ({ err }),
    );
    // The run's events (the log's plus what it has decided, not yet durable) show it.
    const pending = async () => (await s.h.client.events(ref)).some((e) => e.type === 'ownership.reclaimed' && e.messageId === first);
    for (let i = 0; i < 200 && !(await pending()); i++) await new Promise((r) => setTimeout(r, 25));
    expect(await pending()).toBe(true);
    // The API gave up on the first (its deadline): settled refused, so its events are never written.
    expect(await settleRefused(s.h.pool, first, bound.ownershipId, 'unavailable')).toMatchObject({ outcome: 'refused' });
    // The caller tries again, as a new message: the run's record already shows its reclaim, not yet in the log.
    let answeredEarly = false;
    const r2 = s.h.client.reclaim(ref, reclaim, { messageId: second }).then(
      (v) => ((answeredEarly = held), { ok: v }),
      (err: unknown) => ({ err }),
    );
    await new Promise((r) => setTimeout(r, 1_500));
    await release();
    const [a, b] = await Promise.all([r1, r2]);
    expect(a).toMatchObject({ err: { code: 'unavailable' } });
    expect(b).toMatchObject({ ok: { owner: { executionSessionId: 'rr-new' }, state: 'active' } });
    expect(answeredEarly).toBe(false);
    // The answer is the log's: one reclaim by the new session, under the second message.
    const reclaims = (await readEvents(s.h.pool, bound.ownershipId)).filter((e) => e.type === 'ownership.reclaimed');
    expect(reclaims.map((e) => ({ messageId: e.messageId, session: (e.data as { owner: { executionSessionId: string } }).owner.executionSessionId }))).toEqual([
      { messageId: second, session: 'rr-new' },
    ]);
  } finally {
    await release().catch(() => undefined);
  }
});
