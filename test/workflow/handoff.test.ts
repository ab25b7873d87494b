import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { executor, refusal, refusalOf, requests, types, worker } from './decision-helpers';
import { startOwnershipEnv, type OwnershipEnv } from './ownership-env';

/**
 * Handoff decisions: an offer (owner only, current epoch only), its acceptance by the named
 * successor only, a cancel by the owner, and an offer nobody takes expiring at its timeout (the
 * timer moved by time skipping, never waited for).
 */
const HANDOFF_TIMEOUT_MS = 5 * 60_000;
let o: OwnershipEnv;
let repo: RepoFixture;
const { bindReq, ref, owner } = requests(() => repo);

beforeAll(async () => {
  o = await startOwnershipEnv({ handoffTimeoutMs: HANDOFF_TIMEOUT_MS, leaseTtlMs: 24 * 60 * 60_000 });
  repo = makeRepo(4, o.root);
});
afterAll(async () => {
  await o?.stop();
});

const offer = (i: number, from: string, epoch: number, to: string, toWorkerId = 'w-b') =>
  o.client.handoff(ref(i), { ...owner(from, epoch), toExecutionSessionId: to, toWorkerId });
const accept = (i: number, handoffId: string, session: string, workerId = 'w-b') =>
  o.client.acceptHandoff(ref(i), { handoffId, executionSessionId: session, runtime: 'codex-cli', worker: worker(workerId), principal: executor(workerId) });

test('only the owner at its current epoch may offer a handoff: not_owner, stale_epoch, nothing written', async () => {
  const bound = await o.client.bind(bindReq(0, 's-own'));
  expect(await refusal(offer(0, 's-else', 1, 's-to'))).toBe('not_owner');
  expect(await refusal(offer(0, 's-own', 2, 's-to'))).toBe('stale_epoch');
  expect(types(o, bound.ownershipId)).toEqual(['ownership.claimed']);
  expect((await o.client.projection(ref(0)))?.state).toBe('active');
});

test('an offer is accepted only by the named session on the named worker, with the offer’s id; then it owns at the next epoch', async () => {
  const bound = await o.client.bind(bindReq(1, 's-from'));
  const offered = await offer(1, 's-from', 1, 's-to');
  expect({ state: offered.state, to: offered.handoff?.toExecutionSessionId, expires: Date.parse(offered.handoff!.expiresAt) > 0 }).toEqual({
    state: 'handoff_pending',
    to: 's-to',
    expires: true,
  });
  const id = offered.handoff!.handoffId;
  expect(await refusal(accept(1, id, 's-other'))).toBe('handoff_mismatch');
  expect(await refusal(accept(1, id, 's-to', 'w-a'))).toBe('handoff_mismatch');
  expect(await refusal(accept(1, 'hof_00000000000000000000000000000000', 's-to'))).toBe('handoff_mismatch');
  expect(types(o, bound.ownershipId)).toEqual(['ownership.claimed', 'ownership.handoff_started']);
  const accepted = await accept(1, id, 's-to');
  expect({ state: accepted.state, epoch: accepted.epoch, owner: accepted.owner?.executionSessionId }).toEqual({ state: 'active', epoch: 2, owner: 's-to' });
  // The offer is spent: no second accept, and the old owner's epoch is fenced out.
  expect(await refusal(accept(1, id, 's-other'))).toBe('no_pending_handoff');
  expect(await refusal(o.client.release(ref(1), owner('s-from', 1)))).toBe('not_owner');
  expect(await refusal(o.client.release(ref(1), owner('s-to', 1, 'w-b')))).toBe('stale_epoch');
  expect(types(o, bound.ownershipId)).toEqual(['ownership.claimed', 'ownership.handoff_started', 'ownership.claimed']);
});

test('the owner cancels its offer: active again at the same epoch, and the offer cannot be taken', async () => {
  const bound = await o.client.bind(bindReq(2, 's-cancels'));
  const offered = await offer(2, 's-cancels', 1, 's-late');
  expect(await refusal(o.client.cancelHandoff(ref(2), owner('s-late', 1, 'w-b')))).toBe('not_owner');
  const cancelled = await o.client.cancelHandoff(ref(2), owner('s-cancels', 1));
  expect({ state: cancelled.state, epoch: cancelled.epoch, handoff: cancelled.handoff }).toEqual({ state: 'active', epoch: 1, handoff: null });
  expect(await refusal(accept(2, offered.handoff!.handoffId, 's-late'))).toBe('no_pending_handoff');
  expect(await refusal(o.client.cancelHandoff(ref(2), owner('s-cancels', 1)))).toBe('no_pending_handoff');
  expect(types(o, bound.ownershipId)).toEqual(['ownership.claimed', 'ownership.handoff_started', 'ownership.handoff_cancelled']);
  const e = o.fakes.log(bound.ownershipId).at(-1)!;
  expect((e.data as { handoffId: string }).handoffId).toBe(offered.handoff!.handoffId);
});

test('an offer nobody accepts stands until its timeout and expires then (time skipped): the owner keeps the worktree', async () => {
  const bound = await o.client.bind(bindReq(3, 's-waits'));
  const offered = await offer(3, 's-waits', 1, 's-gone');
  await o.advance(HANDOFF_TIMEOUT_MS - 30_000);
  expect((await o.client.projection(ref(3)))?.state).toBe('handoff_pending');
  expect(types(o, bound.ownershipId)).toEqual(['ownership.claimed', 'ownership.handoff_started']);
  await o.advance(60_000);
  const after = await o.client.projection(ref(3));
  expect({ state: after?.state, owner: after?.owner?.executionSessionId, epoch: after?.epoch }).toEqual({ state: 'active', owner: 's-waits', epoch: 1 });
  expect(o.fakes.log(bound.ownershipId).at(-1)).toMatchObject({
    type: 'ownership.handoff_cancelled',
    data: { handoffId: offered.handoff!.handoffId, reason: 'timeout' },
  });
  expect((await refusalOf(accept(3, offered.handoff!.handoffId, 's-gone')))?.code).toBe('no_pending_handoff');
  // A new offer after the expiry is a new handoff.
  const again = await offer(3, 's-waits', 1, 's-gone');
  expect(again.handoff?.handoffId).not.toBe(offered.handoff!.handoffId);
});
