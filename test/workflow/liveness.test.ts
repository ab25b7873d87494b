import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { requests, types, until } from './decision-helpers';
import { startOwnershipEnv, type OwnershipEnv } from './ownership-env';

/**
 * Liveness decisions: an owner is marked stale only after its lease ran out (time skipped, not
 * waited) and the authority said dead; a heartbeat of its tenure revives it; an unknown verdict
 * leaves it active; a heartbeat of an ended epoch renews nothing.
 */
const LEASE_MS = 60_000;
let o: OwnershipEnv;
let repo: RepoFixture;
const { bindReq, ref } = requests(() => repo);

beforeAll(async () => {
  o = await startOwnershipEnv({ leaseTtlMs: LEASE_MS });
  repo = makeRepo(3, o.root);
});
afterAll(async () => {
  await o?.stop();
});

test('a dead verdict counts only past the lease: active before it runs out, stale after, then a heartbeat revives the owner', async () => {
  o.fakes.setVerdict('dead');
  const bound = await o.client.bind(bindReq(0, 's-quiet'));
  await o.advance(LEASE_MS - 10_000);
  expect((await o.client.projection(ref(0)))?.state).toBe('active');
  expect(types(o, bound.ownershipId)).toEqual(['ownership.claimed']);
  await o.advance(20_000);
  const stale = await until(
    () => o.client.projection(ref(0)),
    (v) => v?.state === 'stale',
  );
  expect({ state: stale?.state, verdict: stale?.liveness.verdict }).toEqual({ state: 'stale', verdict: 'dead' });
  expect(o.fakes.log(bound.ownershipId).at(-1)).toMatchObject({ type: 'ownership.stale', data: { executionSessionId: 's-quiet', epoch: 1 } });

  await o.client.heartbeat(ref(0), { executionSessionId: 's-quiet', epoch: 1 });
  const revived = await until(
    () => o.client.projection(ref(0)),
    (v) => v?.state === 'active',
  );
  expect({ state: revived?.state, status: revived?.liveness.status, epoch: revived?.epoch }).toEqual({ state: 'active', status: 'live', epoch: 1 });
  expect(o.fakes.log(bound.ownershipId).at(-1)).toMatchObject({ type: 'ownership.heartbeat', data: { transition: 'revived' } });
});

test('heartbeats within the lease keep a dead-verdict owner active for as long as they come', async () => {
  o.fakes.setVerdict('dead');
  await o.client.bind(bindReq(1, 's-beats'));
  for (let i = 0; i < 3; i++) {
    await o.advance(LEASE_MS / 2);
    const before = (await o.client.projection(ref(1)))?.liveness.lastHeartbeatAt;
    await o.client.heartbeat(ref(1), { executionSessionId: 's-beats', epoch: 1 });
    // The signal handled before the clock moves on.
    await until(
      () => o.client.projection(ref(1)),
      (v) => v?.liveness.lastHeartbeatAt !== before,
    );
  }
  await o.advance(LEASE_MS / 2);
  expect((await o.client.projection(ref(1)))?.state).toBe('active');
});

test('an unknown verdict leaves the owner active, a stale epoch’s heartbeat renews nothing, and a later dead verdict makes it stale', async () => {
  o.fakes.setVerdict('unknown');
  const bound = await o.client.bind(bindReq(2, 's-unsure'));
  await o.advance(LEASE_MS + 1_000);
  const unsure = await until(
    () => o.client.projection(ref(2)),
    (v) => v?.liveness.verdict === 'unknown',
  );
  expect({ state: unsure?.state, verdict: unsure?.liveness.verdict }).toEqual({ state: 'active', verdict: 'unknown' });
  // Epoch 2 was never this owner's: its heartbeat is not the tenure's and revives nothing.
  await o.client.heartbeat(ref(2), { executionSessionId: 's-unsure', epoch: 2 });
  o.fakes.setVerdict('dead');
  await o.advance(LEASE_MS + 1_000);
  const stale = await until(
    () => o.client.projection(ref(2)),
    (v) => v?.state === 'stale',
  );
  expect(stale?.state).toBe('stale');
  expect(types(o, bound.ownershipId)).toEqual(['ownership.claimed', 'ownership.stale']);
});
