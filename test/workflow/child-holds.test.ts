import { OwnershipError, type BindRequest } from '../../src/client';
import type { Principal } from '../../src/domain/identity';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { startOwnershipEnv, type OwnershipEnv } from './ownership-env';

/**
 * Child holds in the workflow (docs/ownership-record.md#child-holds): the owner grants, its
 * release is refused while a child holds, the child ends its own hold, a silent child's hold
 * ends by its own lease (time skipping) without touching the parent, and an accepted handoff
 * ends every hold first. On the time-skipping server with in-memory activities.
 */
let o: OwnershipEnv;
let repo: RepoFixture;

beforeAll(async () => {
  o = await startOwnershipEnv({ handoffTimeoutMs: 5 * 60_000, leaseTtlMs: 10 * 60_000 });
  repo = makeRepo(4, o.root);
});
afterAll(async () => {
  await o?.stop();
});

const executor = (workerId: string): Principal => ({ kind: 'executor', id: `exec-${workerId}`, workerId });
const bindReq = (i: number, session: string, workerId = 'w-a'): BindRequest => ({
  worktreePath: repo.worktrees[i]!.path,
  branch: repo.worktrees[i]!.branch,
  executionSessionId: session,
  runtime: 'claude-code',
  worker: { runId: null, workerId },
  principal: executor(workerId),
});
const ref = (i: number) => ({ worktreePath: repo.worktrees[i]!.path });
const owner = (session: string, epoch = 1) => ({ executionSessionId: session, epoch, principal: executor('w-a') });

async function refused(p: Promise<unknown>): Promise<OwnershipError | null> {
  try {
    await p;
    return null;
  } catch (err) {
    if (err instanceof OwnershipError) return err;
    throw err;
  }
}

test('the owner grants holds; its release is refused holds_live naming the children; the child ends its own and the release goes through', async () => {
  const bound = await o.client.bind(bindReq(0, 'p-0'));
  const granted = await o.client.grantHold(ref(0), { ...owner('p-0'), holdId: 'hold-a', childExecutionSessionId: 'c-a', runtime: 'codex-cli' });
  expect(granted.holds?.map((h) => [h.holdId, h.executionSessionId, h.parentExecutionSessionId, h.epoch, h.runtime])).toEqual([
    ['hold-a', 'c-a', 'p-0', 1, 'codex-cli'],
  ]);
  // The grant is durable before its answer, and projected: the worktree's record names the child.
  expect(o.fakes.log(bound.ownershipId).map((e) => e.type)).toEqual(['ownership.claimed', 'ownership.hold_granted']);
  expect(
    o.fakes.projections
      .filter((r) => r.ownershipId === bound.ownershipId)
      .at(-1)
      ?.holds?.map((h) => h.holdId),
  ).toEqual(['hold-a']);
  // Only the owner grants.
  expect((await refused(o.client.grantHold(ref(0), { ...owner('c-a'), holdId: 'hold-x', childExecutionSessionId: 'c-x' })))?.code).toBe('not_owner');

  const denied = await refused(o.client.release(ref(0), owner('p-0')));
  expect(denied?.code).toBe('holds_live');
  expect(denied?.details?.children).toEqual([{ holdId: 'hold-a', executionSessionId: 'c-a', runtime: 'codex-cli' }]);

  const ended = await o.client.endHold(ref(0), { executionSessionId: 'c-a', epoch: 1, principal: executor('w-a'), holdId: 'hold-a' });
  expect(ended.holds ?? []).toEqual([]);
  expect(o.fakes.log(bound.ownershipId).at(-1)).toMatchObject({ type: 'ownership.hold_ended', data: { holdId: 'hold-a', reason: 'released' } });
  expect((await o.client.release(ref(0), owner('p-0'))).state).toBe('released');
});

test('a child silent past its own lease loses its hold (hold_ended expired); a heartbeating child keeps it; the parent is untouched', async () => {
  const bound = await o.client.bind(bindReq(1, 'p-1'));
  await o.client.grantHold(ref(1), { ...owner('p-1'), holdId: 'hold-quiet', childExecutionSessionId: 'c-quiet', leaseTtlMs: 30_000 });
  await o.client.grantHold(ref(1), { ...owner('p-1'), holdId: 'hold-busy', childExecutionSessionId: 'c-busy', leaseTtlMs: 30_000 });
  for (let i = 0; i < 3; i++) {
    await o.advance(20_000);
    await o.client.holdHeartbeat(ref(1), { holdId: 'hold-busy', executionSessionId: 'c-busy', epoch: 1 });
    // Owner heartbeats too: its own lease is the parent's business, not the children's.
    await o.client.heartbeat(ref(1), { executionSessionId: 'p-1', epoch: 1 });
  }
  const view = await o.client.projection(ref(1));
  expect(view?.holds?.map((h) => h.holdId)).toEqual(['hold-busy']);
  const ends = o.fakes.log(bound.ownershipId).filter((e) => e.type === 'ownership.hold_ended');
  expect(ends.map((e) => e.data)).toEqual([{ holdId: 'hold-quiet', executionSessionId: 'c-quiet', reason: 'expired', detail: null }]);
  expect({ state: view?.state, liveness: view?.liveness.status, owner: view?.owner?.executionSessionId }).toEqual({
    state: 'active',
    liveness: 'live',
    owner: 'p-1',
  });
  // A heartbeat naming another child (or another epoch) renews nothing: the busy hold goes quiet and ends.
  await o.client.holdHeartbeat(ref(1), { holdId: 'hold-busy', executionSessionId: 'c-quiet', epoch: 1 });
  await o.advance(31_000);
  expect((await o.client.projection(ref(1)))?.holds ?? []).toEqual([]);
  expect((await o.client.projection(ref(1)))?.state).toBe('active');
});

test('an accepted handoff ends every hold first (hold_ended epoch_ended before the claim); the parent grants no more after', async () => {
  const bound = await o.client.bind(bindReq(2, 'p-2'));
  await o.client.grantHold(ref(2), { ...owner('p-2'), holdId: 'hold-1', childExecutionSessionId: 'c-1' });
  await o.client.grantHold(ref(2), { ...owner('p-2'), holdId: 'hold-2', childExecutionSessionId: 'c-2' });
  const offered = await o.client.handoff(ref(2), { ...owner('p-2'), toExecutionSessionId: 'p-next', toWorkerId: 'w-a' });
  const accepted = await o.client.acceptHandoff(ref(2), {
    handoffId: offered.handoff!.handoffId,
    executionSessionId: 'p-next',
    runtime: 'claude-code',
    worker: { runId: null, workerId: 'w-a' },
    principal: executor('w-a'),
  });
  expect({ epoch: accepted.epoch, holds: accepted.holds ?? [] }).toEqual({ epoch: 2, holds: [] });
  expect(o.fakes.log(bound.ownershipId).map((e) => [e.type, (e.data as { reason?: string }).reason ?? null])).toEqual([
    ['ownership.claimed', null],
    ['ownership.hold_granted', null],
    ['ownership.hold_granted', null],
    ['ownership.handoff_started', null],
    ['ownership.hold_ended', 'epoch_ended'],
    ['ownership.hold_ended', 'epoch_ended'],
    ['ownership.claimed', null],
  ]);
  // The old parent's tenure is over: it grants nothing; the child of the old tenure ends nothing.
  expect((await refused(o.client.grantHold(ref(2), { ...owner('p-2'), holdId: 'hold-3', childExecutionSessionId: 'c-3' })))?.code).toBe('not_owner');
  expect((await refused(o.client.endHold(ref(2), { executionSessionId: 'c-1', epoch: 1, principal: executor('w-a'), holdId: 'hold-1' })))?.code).toBe(
    'not_found',
  );
});

test('a grant retried under the same message id is answered alike, once; at most 8 holds (holds_exhausted)', async () => {
  const bound = await o.client.bind(bindReq(3, 'p-3'));
  const grant = (n: number) => ({ ...owner('p-3'), holdId: `h-${n}`, childExecutionSessionId: `c-${n}` });
  await o.client.grantHold(ref(3), grant(0), { messageId: 'msg-grant-0' });
  await o.client.grantHold(ref(3), grant(0), { messageId: 'msg-grant-0' });
  for (let n = 1; n < 8; n++) await o.client.grantHold(ref(3), grant(n));
  expect((await refused(o.client.grantHold(ref(3), grant(8))))?.code).toBe('holds_exhausted');
  expect(o.fakes.log(bound.ownershipId).filter((e) => e.type === 'ownership.hold_granted')).toHaveLength(8);
});
