import { decideAcceptHandoff, decideBindPlan, decideCancelHandoff, decideHandoff } from '../../src/domain/decide';
import { decideStale } from '../../src/domain/liveness';
import { stampEvent, type OwnershipEvent } from '../../src/domain/events';
import { applyEvent, type OwnershipRecord } from '../../src/domain/projection';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { executor, refusal, requests, types, until, worker } from './decision-helpers';
import { startOwnershipEnv, type OwnershipEnv } from './ownership-env';

/**
 * The log write is a local activity: its result reaches history only with the workflow task that
 * ran it, so a task lost after its write (its worker killed, the task timed out) leaves the log
 * ahead of the run. These tests put such a lost task's events into the log behind the workflow's
 * back, decided by the same pure rules on the same record (what that task would have written), and
 * check that the run adopts them: a write on the old record is decided again on the log's, a
 * refusal is given only on the log's record, and a message the lost task already decided is
 * answered with that decision (the rules answer a repeated message by its content). The integration tier kills a real worker after its write
 * (test/integration/log-ahead.test.ts).
 *
 * The worker caches two runs, and before each message the test sends two other ownerships one: the
 * message's task runs on a copy of the run rebuilt from history, which is what the task after a
 * lost one runs on (a cached copy that has seen the log answer live is never behind it).
 */
let o: OwnershipEnv;
let repo: RepoFixture;
const { bindReq, ref, owner } = requests(() => repo);

beforeAll(async () => {
  o = await startOwnershipEnv({ leaseTtlMs: 24 * 60 * 60_000 }, { maxCachedWorkflows: 2, maxConcurrentWorkflowTaskExecutions: 2 });
  repo = makeRepo(8, o.root);
  await o.client.bind(bindReq(3, 's-elsewhere'));
  await o.client.bind(bindReq(5, 's-elsewhere'));
});

/** Two other runs' tasks take the worker's two cached places: the next task of this one rebuilds it from history. */
let evictions = 0;
async function evict(): Promise<void> {
  evictions++;
  for (const i of [3, 5]) await o.client.bindPlan(ref(i), { ...owner('s-elsewhere', 1), lane: `elsewhere-${evictions}` });
}

/** No workflow task of the ownership timed out or failed: nothing here needed Temporal to retry a task. */
async function noTaskLost(i: number): Promise<void> {
  const history = await o.env.client.workflow.getHandle(await o.client.workflowIdOf(ref(i))).fetchHistory();
  expect(history.events!.filter((e) => e.workflowTaskTimedOutEventAttributes || e.workflowTaskFailedEventAttributes)).toEqual([]);
}
afterAll(async () => {
  await o?.stop();
});

/** What a lost task would have written after the log's last event: the drafts stamped onto the log's record. */
function lostTask(ownershipId: string, decide: (r: OwnershipRecord) => ReturnType<typeof decideBindPlan>, messageId?: string): OwnershipEvent[] {
  let r = o.fakes.log(ownershipId).reduce<OwnershipRecord | null>((acc, e) => applyEvent(acc, e), null)!;
  const d = decide(r);
  if ('code' in d) throw new Error(`the lost task's decision was refused: ${d.code}`);
  const out: OwnershipEvent[] = [];
  for (const draft of d.events) {
    const e = stampEvent(ownershipId, r, draft, new Date().toISOString(), messageId);
    r = applyEvent(r, e);
    o.fakes.appendBehind(e);
    out.push(e);
  }
  return out;
}

const fold = (ownershipId: string) => o.fakes.log(ownershipId).reduce<OwnershipRecord | null>((acc, e) => applyEvent(acc, e), null)!;

test('a write decided on the record before a lost task’s events is decided again on the log’s: both lanes in order, nothing overwritten', async () => {
  const bound = await o.client.bind(bindReq(0, 's-a'));
  const [lost] = lostTask(bound.ownershipId, (r) => decideBindPlan(r, { ...owner('s-a', 1), lane: 'lost-lane' }));
  await evict();
  const answer = await o.client.bindPlan(ref(0), { ...owner('s-a', 1), lane: 'second-lane' });
  expect(types(o, bound.ownershipId)).toEqual(['ownership.claimed', 'ownership.plan_bound', 'ownership.plan_bound']);
  // The lost task's event stands as written; the message was decided again after it.
  expect(o.fakes.log(bound.ownershipId)[1]).toEqual(lost);
  expect({ seq: answer.seq, lane: answer.lane }).toEqual({ seq: 3, lane: 'second-lane' });
  expect((await o.client.projection(ref(0)))?.seq).toBe(fold(bound.ownershipId).seq);
  await noTaskLost(0);
});

test('a refusal is given only on the log’s record: the successor the lost task made owner is not refused not_owner', async () => {
  const bound = await o.client.bind(bindReq(1, 's-from'));
  // The lost task: an offer to s-to, and s-to's acceptance (epoch 2).
  const handoffId = 'hof_0123456789abcdef0123456789abcdef';
  lostTask(bound.ownershipId, (r) =>
    decideHandoff(r, { ...owner('s-from', 1), toExecutionSessionId: 's-to', toWorkerId: 'w-b' }, handoffId, new Date(Date.now() + 3_600_000).toISOString()),
  );
  lostTask(bound.ownershipId, (r) =>
    decideAcceptHandoff(r, { handoffId, executionSessionId: 's-to', runtime: 'codex-cli', worker: worker('w-b'), principal: executor('w-b') }, null),
  );
  // On the run's own record s-from still owns at epoch 1; the log says s-to at epoch 2.
  await evict();
  const answer = await o.client.bindPlan(ref(1), { ...owner('s-to', 2, 'w-b'), lane: 'after-handoff' });
  expect({ owner: answer.owner?.executionSessionId, epoch: answer.epoch, lane: answer.lane }).toEqual({ owner: 's-to', epoch: 2, lane: 'after-handoff' });
  // And the old owner is refused on the log's record too.
  expect(await refusal(o.client.release(ref(1), owner('s-from', 1)))).toBe('not_owner');
  expect(types(o, bound.ownershipId)).toEqual(['ownership.claimed', 'ownership.handoff_started', 'ownership.claimed', 'ownership.plan_bound']);
  await noTaskLost(1);
});

test('a reclaim is refused only on the log’s record: the owner the lost task found dead is reclaimed, not refused owner_alive', async () => {
  const bound = await o.client.bind(bindReq(7, 's-dead'));
  // The lost task: the authority's dead verdict made the owner stale.
  lostTask(bound.ownershipId, (r) => ({ events: decideStale(r, { executionSessionId: 's-dead', epoch: 1 }, 'dead', 'process 4242 is gone') }));
  // On the run's own record s-dead is active, and the reclaim would be refused there before any WIP is preserved.
  await evict();
  const taken = await o.client.reclaim(ref(7), { executionSessionId: 's-heir', runtime: 'codex-cli', worker: worker('w-h'), principal: executor('w-h') });
  expect({ owner: taken.owner?.executionSessionId, epoch: taken.epoch }).toEqual({ owner: 's-heir', epoch: 2 });
  expect(types(o, bound.ownershipId).slice(0, 2)).toEqual(['ownership.claimed', 'ownership.stale']);
  await noTaskLost(7);
});

test('a message the lost task decided is answered with that decision when it comes again (its id), not refused on the record it made', async () => {
  const bound = await o.client.bind(bindReq(2, 's-offers'));
  const cancelId = 'upd_lost-cancel-0001';
  lostTask(bound.ownershipId, (r) =>
    decideHandoff(
      r,
      { ...owner('s-offers', 1), toExecutionSessionId: 's-next', toWorkerId: 'w-b' },
      'hof_fedcba9876543210fedcba9876543210',
      new Date(Date.now() + 3_600_000).toISOString(),
    ),
  );
  await evict();
  // The run's record has the offer pending; the lost task also cancelled it, under cancelId.
  await o.client.handoff(ref(2), { ...owner('s-offers', 1), toExecutionSessionId: 's-next', toWorkerId: 'w-b' });
  lostTask(bound.ownershipId, (r) => decideCancelHandoff(r, owner('s-offers', 1)), cancelId);
  await evict();
  // Decided again on the log's record it would be no_pending_handoff: it is the lost task's cancel.
  const answer = await o.client.cancelHandoff(ref(2), owner('s-offers', 1), { messageId: cancelId });
  expect({ state: answer.state, seq: answer.seq }).toEqual({ state: 'active', seq: 3 });
  expect(types(o, bound.ownershipId)).toEqual(['ownership.claimed', 'ownership.handoff_started', 'ownership.handoff_cancelled']);
  await noTaskLost(2);
});

test('a message the lost task decided before another is answered with its own event, not decided again on the later record', async () => {
  const bound = await o.client.bind(bindReq(6, 's-lanes'));
  const firstId = 'upd_lost-lane-0001';
  lostTask(bound.ownershipId, (r) => decideBindPlan(r, { ...owner('s-lanes', 1), lane: 'first' }), firstId);
  lostTask(bound.ownershipId, (r) => decideBindPlan(r, { ...owner('s-lanes', 1), lane: 'second' }), 'upd_lost-lane-0002');
  await evict();
  const answer = await o.client.bindPlan(ref(6), { ...owner('s-lanes', 1), lane: 'first' }, { messageId: firstId });
  // One event per message: the first's is seq 2; the record answered is the log's (lane second).
  expect(
    o.fakes
      .log(bound.ownershipId)
      .filter((e) => e.messageId === firstId)
      .map((e) => e.seq),
  ).toEqual([2]);
  expect({ seq: answer.seq, lane: answer.lane }).toEqual({ seq: 3, lane: 'second' });
  await noTaskLost(6);
});

test('a signal decided on the record before a lost task’s events is decided again on the log’s, not lost', async () => {
  const bound = await o.client.bind(bindReq(4, 's-removed'));
  lostTask(bound.ownershipId, (r) => decideBindPlan(r, { ...owner('s-removed', 1), lane: 'lost-lane' }));
  await evict();
  await o.client.worktreeRemoved(ref(4), { principal: { kind: 'system', id: 'host' } });
  const seen = await until(
    () => Promise.resolve(types(o, bound.ownershipId)),
    (t) => t.length >= 3,
  );
  expect(seen).toEqual(['ownership.claimed', 'ownership.plan_bound', 'ownership.worktree_removed']);
  expect((await o.client.projection(ref(4)))?.worktreeRemoved).toBeTruthy();
  await noTaskLost(4);
});
