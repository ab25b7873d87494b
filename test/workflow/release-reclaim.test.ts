import type { ReclaimInput } from '../../src/domain/commands';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { admin, executor, refusal, refusalOf, requests, types, until, worker } from './decision-helpers';
import { startOwnershipEnv, type OwnershipEnv } from './ownership-env';

/**
 * Release and reclaim decisions: a release by its owner only; a reclaim refused while the owner is
 * alive (owner_alive) or nobody can tell (liveness_unknown); allowed once the lease ran out (time
 * skipped) and the authority said dead; a forced reclaim only by an admin with a reason; a reclaim
 * retried under the same message id answered alike, nothing preserved or recorded twice.
 */
const LEASE_MS = 60_000;
let o: OwnershipEnv;
let repo: RepoFixture;
const { bindReq, ref, owner } = requests(() => repo);

beforeAll(async () => {
  o = await startOwnershipEnv({ leaseTtlMs: LEASE_MS });
  repo = makeRepo(5, o.root);
});
afterAll(async () => {
  await o?.stop();
});
beforeEach(() => o.fakes.setVerdict('alive'));

const reclaimBy = (session: string, extra: Partial<ReclaimInput> = {}): ReclaimInput => ({
  executionSessionId: session,
  runtime: 'codex-cli',
  worker: worker('w-r'),
  principal: executor('w-r'),
  ...extra,
});

test('a release is its owner’s at its epoch only (not_owner, stale_epoch); the owner’s frees the worktree', async () => {
  const bound = await o.client.bind(bindReq(0, 's-rel'));
  expect(await refusal(o.client.release(ref(0), owner('s-other', 1)))).toBe('not_owner');
  expect(await refusal(o.client.release(ref(0), owner('s-rel', 2)))).toBe('stale_epoch');
  expect(types(o, bound.ownershipId)).toEqual(['ownership.claimed']);
  const released = await o.client.release(ref(0), owner('s-rel', 1));
  expect(released.state).toBe('released');
  expect(o.fakes.projections.filter((r) => r.ownershipId === bound.ownershipId).at(-1)?.state).toBe('released');
  // A released worktree is claimed, not reclaimed.
  expect((await refusalOf(o.client.reclaim(ref(0), reclaimBy('s-after'))))?.code).toBe('invalid_state');
  expect(types(o, bound.ownershipId)).toEqual(['ownership.claimed', 'ownership.released']);
});

test('a reclaim of a live owner is refused owner_alive; past its lease with the authority unsure, liveness_unknown; nothing changes', async () => {
  const bound = await o.client.bind(bindReq(1, 's-live'));
  expect(await refusal(o.client.reclaim(ref(1), reclaimBy('s-taker')))).toBe('owner_alive');
  o.fakes.setVerdict('unknown');
  await o.advance(LEASE_MS + 1_000);
  const silent = await until(
    () => o.client.projection(ref(1)),
    (v) => v?.liveness.verdict === 'unknown',
  );
  expect({ state: silent?.state, verdict: silent?.liveness.verdict }).toEqual({ state: 'active', verdict: 'unknown' });
  expect(await refusal(o.client.reclaim(ref(1), reclaimBy('s-taker')))).toBe('liveness_unknown');
  expect(types(o, bound.ownershipId)).toEqual(['ownership.claimed']);
  expect((await o.client.projection(ref(1)))?.owner?.executionSessionId).toBe('s-live');
});

test('after a dead verdict past the lease the owner is stale and a reclaim takes it at the next epoch; a retry of that reclaim is answered alike', async () => {
  const bound = await o.client.bind(bindReq(2, 's-dies'));
  o.fakes.setVerdict('dead');
  await o.advance(LEASE_MS + 1_000);
  const stale = await until(
    () => o.client.projection(ref(2)),
    (v) => v?.state === 'stale',
  );
  expect(stale?.state).toBe('stale');
  const taken = await o.client.reclaim(ref(2), reclaimBy('s-heir'), { messageId: 'reclaim-once' });
  expect({ state: taken.state, epoch: taken.epoch, owner: taken.owner?.executionSessionId }).toEqual({ state: 'active', epoch: 2, owner: 's-heir' });
  const afterFirst = types(o, bound.ownershipId);
  expect(afterFirst.slice(0, 2)).toEqual(['ownership.claimed', 'ownership.stale']);
  expect(afterFirst.filter((t) => t === 'ownership.reclaimed')).toHaveLength(1);

  const retried = await o.client.reclaim(ref(2), reclaimBy('s-heir'), { messageId: 'reclaim-once' });
  expect({ epoch: retried.epoch, owner: retried.owner?.executionSessionId, seq: retried.seq }).toEqual({ epoch: 2, owner: 's-heir', seq: taken.seq });
  expect(types(o, bound.ownershipId)).toEqual(afterFirst);
  // The dead owner's epoch is fenced out.
  expect(await refusal(o.client.release(ref(2), owner('s-dies', 1)))).toBe('not_owner');
});

test('a forced reclaim needs an admin and a reason; with both it takes a live owner’s worktree and says so', async () => {
  const bound = await o.client.bind(bindReq(3, 's-forced'));
  expect(await refusal(o.client.reclaim(ref(3), reclaimBy('s-admin', { force: true, reason: 'stuck' })))).toBe('force_requires_admin');
  const asAdmin = { principal: admin(), worker: worker('w-admin') };
  expect(await refusal(o.client.reclaim(ref(3), reclaimBy('s-admin', { ...asAdmin, force: true })))).toBe('force_requires_reason');
  expect(await refusal(o.client.reclaim(ref(3), reclaimBy('s-admin', { ...asAdmin, force: true, reason: '  ' })))).toBe('force_requires_reason');
  expect(types(o, bound.ownershipId)).toEqual(['ownership.claimed']);
  const forced = await o.client.reclaim(ref(3), reclaimBy('s-admin', { ...asAdmin, force: true, reason: 'stuck' }));
  expect({ state: forced.state, epoch: forced.epoch, owner: forced.owner?.executionSessionId, via: forced.lineage.at(-1)?.via }).toEqual({
    state: 'active',
    epoch: 2,
    owner: 's-admin',
    via: 'forced_reclaim',
  });
});
