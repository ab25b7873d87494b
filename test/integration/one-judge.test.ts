import { OwnershipError } from '../../src/client';
import type { OwnershipViewOut } from '../../src/contract/http';
import { readEvents } from '../../src/store/event-store';
import { makeRepo } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { executorPrincipal, startHarness, waitForView, type Harness } from '../support/harness';

/**
 * One judge (docs/architecture.md#one-judge): a message is decided by the workflow's update, its
 * update id is the message id, and a retry of the same id gets the same answer: within a run from
 * Temporal itself, across continue-as-new from what the run carries (the events naming the id, the
 * ids it refused after accepting them). Real stack: Temporal dev server, PostgreSQL, git worktrees.
 */

let api: ApiStack;
/** continue-as-new after the second accepted update of a run (the first run only: the worker's settings take over after) */
let h: Harness;
beforeAll(async () => {
  api = await startApiStack();
  h = await startHarness({
    // Every owner is dead when asked: a silent owner goes stale at its first lease check.
    authority: { check: async () => ({ verdict: 'dead', detail: 'test authority' }) },
    settings: { maxUpdatesPerRun: 2 },
    workerSettings: { maxUpdatesPerRun: 500 },
  });
});
afterAll(async () => {
  await api?.stop();
  await h?.shutdown();
});

const runIdOf = async (workflowId: string) => (await h.temporal.workflow.getHandle(workflowId).describe()).runId;

test('HTTP: a retried Idempotency-Key is one message, answered alike; a refusal names its message and leaves nothing in the log', async () => {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0]!;
  const bound = await api.raw('POST', '/v1/bind', {
    token: api.tokens.executor,
    body: { worktreePath: wt.path, branch: wt.branch, executionSessionId: 'oj-owner', runtime: 'codex-cli' },
  });
  expect(bound.status).toBe(200);
  const { ownershipId: id, epoch } = bound.body as OwnershipViewOut;
  const handoff = { executionSessionId: 'oj-owner', epoch, toExecutionSessionId: 'oj-next', toWorkerId: api.workerId };
  const headers = { 'idempotency-key': 'oj-handoff-1' };
  const [a, b] = await Promise.all([
    api.raw('POST', `/v1/ownerships/${id}/handoff`, { token: api.tokens.executor, body: handoff, headers }),
    api.raw('POST', `/v1/ownerships/${id}/handoff`, { token: api.tokens.executor, body: handoff, headers }),
  ]);
  expect([a.status, b.status]).toEqual([200, 200]);
  expect(a.headers.get('x-od-message-id')).toBe(b.headers.get('x-od-message-id'));
  expect((a.body as OwnershipViewOut).handoff?.handoffId).toBe((b.body as OwnershipViewOut).handoff?.handoffId);
  // Sent again later, the same key: still the same answer, still one event.
  const later = await api.raw('POST', `/v1/ownerships/${id}/handoff`, { token: api.tokens.executor, body: handoff, headers });
  expect((later.body as OwnershipViewOut).handoff?.handoffId).toBe((a.body as OwnershipViewOut).handoff?.handoffId);
  const log = await readEvents(api.h.pool, id);
  expect(log.filter((e) => e.type === 'ownership.handoff_started').map((e) => e.messageId)).toEqual([a.headers.get('x-od-message-id')]);

  const refused = await api.raw('POST', `/v1/ownerships/${id}/release`, { token: api.tokens.executor, body: { executionSessionId: 'oj-stranger', epoch } });
  expect(refused.status).toBe(409);
  const refusedId = refused.headers.get('x-od-message-id')!;
  expect(refusedId).toMatch(/^msg_/);
  expect((await readEvents(api.h.pool, id)).some((e) => e.messageId === refusedId)).toBe(false);
});

test('a message applied in one run and sent again after continue-as-new is answered from the carried events, not decided again', async () => {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0]!;
  const principal = executorPrincipal('oj-worker');
  const bound = await h.client.bind({
    worktreePath: wt.path,
    branch: wt.branch,
    executionSessionId: 'oj-plan',
    runtime: 'codex-cli',
    worker: { workerId: 'oj-worker', runId: null },
    principal,
  });
  const ref = { workflowId: await h.client.workflowIdOf({ worktreePath: wt.path }), ownershipId: bound.ownershipId };
  const first = await h.client.bindPlan(
    ref,
    { executionSessionId: 'oj-plan', epoch: 1, planRef: 'p-first', principal },
    { messageId: `oj-plan-${bound.ownershipId}` },
  );
  const firstRun = await runIdOf(ref.workflowId);
  const other = await h.client.bindPlan(ref, { executionSessionId: 'oj-plan', epoch: 1, planRef: 'p-other', principal });
  for (let i = 0; i < 100 && (await runIdOf(ref.workflowId)) === firstRun; i++) await new Promise((r) => setTimeout(r, 50));
  expect(await runIdOf(ref.workflowId)).not.toBe(firstRun);

  // The same message again, in the next run: answered applied, the plan it set long replaced by the next one's.
  const again = await h.client.bindPlan(
    ref,
    { executionSessionId: 'oj-plan', epoch: 1, planRef: 'p-first', principal },
    { messageId: `oj-plan-${bound.ownershipId}` },
  );
  expect({ seq: again.seq, planRef: again.planRef }).toEqual({ seq: other.seq, planRef: 'p-other' });
  const events = await readEvents(h.pool, bound.ownershipId);
  expect(events.filter((e) => e.messageId === `oj-plan-${bound.ownershipId}`).map((e) => e.seq)).toEqual([first.seq]);
});

test('a message refused after it was accepted, sent again after continue-as-new, is refused alike: the run carries its refusal', async () => {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0]!;
  const bound = await h.client.bind({
    worktreePath: wt.path,
    branch: wt.branch,
    executionSessionId: 'oj-dead',
    runtime: 'codex-cli',
    worker: { workerId: 'oj-worker', runId: null },
    principal: executorPrincipal('oj-worker'),
    leaseTtlMs: 1_000,
  });
  const ref = { workflowId: await h.client.workflowIdOf({ worktreePath: wt.path }), ownershipId: bound.ownershipId };
  // The owner never heartbeats: its lease runs out, the authority says dead, it is stale.
  await waitForView(h.client, ref, (v) => v.state === 'stale', 30_000);
  const firstRun = await runIdOf(ref.workflowId);
  const reclaim = {
    executionSessionId: 'oj-successor',
    runtime: 'codex-cli',
    worker: { workerId: 'oj-worker', runId: null },
    principal: executorPrincipal('oj-worker'),
  };
  const messageId = `oj-reclaim-${bound.ownershipId}`;
  // The sender knew the host away: accepted (a stale owner may be reclaimed), then refused host_unavailable in the handler.
  const refused = await h.client.reclaim(ref, { ...reclaim, hostAway: true }, { messageId }).then(
    () => null,
    (err: unknown) => err,
  );
  expect(refused).toBeInstanceOf(OwnershipError);
  expect((refused as OwnershipError).code).toBe('host_unavailable');
  // That was the run's second update: it continues as new.
  for (let i = 0; i < 100 && (await runIdOf(ref.workflowId)) === firstRun; i++) await new Promise((r) => setTimeout(r, 50));
  expect(await runIdOf(ref.workflowId)).not.toBe(firstRun);

  // The same message in the next run, even without the flag that refused it: the same refusal, nothing decided.
  const again = await h.client.reclaim(ref, reclaim, { messageId }).then(
    () => null,
    (err: unknown) => err,
  );
  expect((again as OwnershipError | null)?.code).toBe('host_unavailable');
  expect((await readEvents(h.pool, bound.ownershipId)).some((e) => e.type === 'ownership.reclaimed')).toBe(false);
  // A new message is decided afresh: the reclaim goes through.
  const reclaimed = await h.client.reclaim(ref, reclaim, { messageId: `${messageId}-new` });
  expect(reclaimed.owner?.executionSessionId).toBe('oj-successor');
}, 60_000);
