import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { executor, refusal, requests, types, until, worker } from './decision-helpers';
import { startOwnershipEnv, type OwnershipEnv } from './ownership-env';

/**
 * Continue-as-new decisions: a run past its bound (here its update count) continues as new after
 * draining what it accepted, carrying the record; an update id answered in the run before is
 * answered alike in the next (from the carried events: one event, the first plan kept), and a
 * signal id it saw acts no second time there.
 */
const MAX_UPDATES = 4;
let o: OwnershipEnv;
let repo: RepoFixture;
const { bindReq, ref, owner } = requests(() => repo);

beforeAll(async () => {
  o = await startOwnershipEnv({ maxUpdatesPerRun: MAX_UPDATES });
  repo = makeRepo(2, o.root);
});
afterAll(async () => {
  await o?.stop();
});

const runIdOf = async (i = 0) => (await o.env.client.workflow.getHandle(await o.client.workflowIdOf(ref(i))).describe()).runId;

test('a run past its bound continues as new carrying its state; retried update and signal ids are answered as in the run before', async () => {
  const bound = await o.client.bind(bindReq(0, 's-long'));
  const firstRun = await runIdOf();
  await o.client.bindPlan(ref(0), { ...owner('s-long', 1), planRef: 'docs/first.md' }, { messageId: 'plan-once' });
  const landing = (head: string, kind: 'landing' | 'executor' = 'landing') => ({
    sourceHead: 'a'.repeat(40),
    landedBranch: 'main',
    landedHead: head.repeat(40),
    landedAt: new Date(0).toISOString(),
    principal: { kind, id: 'lander' },
  });
  // A signal this run sees (and refuses: an executor may not report a landing); its id is remembered all the same.
  await o.client.landed(ref(0), landing('b', 'executor'), { messageId: 'sig-once' });
  await o.client.bindPlan(ref(0), { ...owner('s-long', 1), planRef: 'docs/second.md' });
  // The bound's last update: the run drains it, then continues as new.
  const last = await o.client.submit(ref(0), { ...owner('s-long', 1), head: 'a'.repeat(40) });
  const nextRun = await until(
    () => runIdOf(),
    (id) => id !== firstRun,
  );
  expect(nextRun).not.toBe(firstRun);

  const carried = await o.client.projection(ref(0));
  expect({ state: carried?.state, epoch: carried?.epoch, owner: carried?.owner?.executionSessionId, plan: carried?.planRef, seq: carried?.seq }).toEqual({
    state: 'submitted',
    epoch: 1,
    owner: 's-long',
    plan: 'docs/second.md',
    seq: last.seq,
  });
  expect(o.fakes.log(bound.ownershipId).map((e) => e.type)).toEqual([
    'ownership.claimed',
    'ownership.plan_bound',
    'ownership.plan_bound',
    'ownership.submitted',
  ]);

  // The first plan's id again in the next run, with another plan: answered from the carried events, nothing decided again (the later plan kept).
  const retried = await o.client.bindPlan(ref(0), { ...owner('s-long', 1), planRef: 'docs/third.md' }, { messageId: 'plan-once' });
  expect({ plan: retried.planRef, seq: retried.seq }).toEqual({ plan: 'docs/second.md', seq: last.seq });
  expect(
    o.fakes
      .log(bound.ownershipId)
      .filter((e) => e.messageId === 'plan-once')
      .map((e) => e.type),
  ).toEqual(['ownership.plan_bound']);

  // The signal's id again, now a proper landing: refused (replayed) in this run too; a new id lands.
  await o.client.landed(ref(0), landing('c'), { messageId: 'sig-once' });
  await o.client.landed(ref(0), landing('d'), { messageId: 'sig-new' });
  const after = await until(
    () => o.client.projection(ref(0)),
    (v) => (v?.landings.length ?? 0) >= 1,
  );
  expect(after?.landings.map((l) => l.landedHead)).toEqual(['d'.repeat(40)]);
  expect(types(o, bound.ownershipId).filter((t) => t === 'ownership.landed')).toHaveLength(1);
  expect(await runIdOf()).toBe(nextRun);
});

test('a message refused after it was accepted is refused alike when retried in the next run, even without what refused it', async () => {
  o.fakes.setVerdict('dead');
  const bound = await o.client.bind(bindReq(1, 's-dead'));
  const firstRun = await runIdOf(1);
  await o.advance(61_000);
  await until(
    () => o.client.projection(ref(1)),
    (v) => v?.state === 'stale',
  );
  const reclaim = (extra: { hostAway?: boolean } = {}) => ({
    executionSessionId: 's-heir',
    runtime: 'codex-cli' as const,
    worker: worker('w-r'),
    principal: executor('w-r'),
    ...extra,
  });
  // Accepted by its validator (the owner is stale), refused by its handler: the host is away.
  expect(await refusal(o.client.reclaim(ref(1), reclaim({ hostAway: true }), { messageId: 'reclaim-away' }))).toBe('host_unavailable');
  const taken = await o.client.reclaim(ref(1), reclaim(), { messageId: 'reclaim-new' });
  expect({ owner: taken.owner?.executionSessionId, epoch: taken.epoch }).toEqual({ owner: 's-heir', epoch: 2 });
  await o.client.bindPlan(ref(1), { executionSessionId: 's-heir', epoch: 2, principal: executor('w-r'), planRef: 'docs/p.md' });
  expect(
    await until(
      () => runIdOf(1),
      (id) => id !== firstRun,
    ),
  ).not.toBe(firstRun);
  // The refused id again, now without hostAway: the carried refusal answers it.
  expect(await refusal(o.client.reclaim(ref(1), reclaim(), { messageId: 'reclaim-away' }))).toBe('host_unavailable');
  expect(types(o, bound.ownershipId).filter((t) => t === 'ownership.reclaimed')).toHaveLength(1);
});
