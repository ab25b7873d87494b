import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { refusal, refusalOf, requests, types } from './decision-helpers';
import { startOwnershipEnv, type OwnershipEnv } from './ownership-env';

/**
 * Claim decisions: a first claim, two sessions racing for one worktree (exactly one wins, the other
 * is refused worktree_owned and leaves nothing in the log), and a claim retried under the same
 * message id (one decision, answered alike, one event).
 */
let o: OwnershipEnv;
let repo: RepoFixture;
const { bindReq, ref } = requests(() => repo);

beforeAll(async () => {
  o = await startOwnershipEnv();
  repo = makeRepo(4, o.root);
});
afterAll(async () => {
  await o?.stop();
});

test('a first claim: active at epoch 1, its event bearing the message id, durable before the answer', async () => {
  const view = await o.client.bind(bindReq(0, 's-first'), { messageId: 'claim-first' });
  expect({ state: view.state, epoch: view.epoch, owner: view.owner?.executionSessionId, lease: view.liveness.status }).toEqual({
    state: 'active',
    epoch: 1,
    owner: 's-first',
    lease: 'live',
  });
  expect(o.fakes.log(view.ownershipId).map((e) => [e.type, e.seq, e.messageId])).toEqual([['ownership.claimed', 1, 'claim-first']]);
});

test('two sessions claiming at once: exactly one owns it, the other is refused worktree_owned, one event', async () => {
  const [a, b] = await Promise.allSettled([o.client.bind(bindReq(1, 's-race-a')), o.client.bind(bindReq(1, 's-race-b'))]);
  const won = [a, b].filter((r) => r.status === 'fulfilled');
  const lost = [a, b].filter((r) => r.status === 'rejected');
  expect([won.length, lost.length]).toEqual([1, 1]);
  const winner = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof o.client.bind>>>).value;
  const loser = await refusalOf(Promise.reject((lost[0] as PromiseRejectedResult).reason));
  expect(loser?.code).toBe('worktree_owned');
  expect(types(o, winner.ownershipId)).toEqual(['ownership.claimed']);
  const now = await o.client.projection(ref(1));
  expect({ owner: now?.owner?.executionSessionId, epoch: now?.epoch }).toEqual({ owner: winner.owner?.executionSessionId, epoch: 1 });
  // The loser stays refused afterwards too: the race did not leave the worktree open.
  const other = winner.owner?.executionSessionId === 's-race-a' ? 's-race-b' : 's-race-a';
  expect(await refusal(o.client.bind(bindReq(1, other)))).toBe('worktree_owned');
});

test('a claim retried under the same message id is one decision, answered alike, with one event', async () => {
  const first = await o.client.bind(bindReq(2, 's-retry'), { messageId: 'claim-retry' });
  const again = await o.client.bind(bindReq(2, 's-retry'), { messageId: 'claim-retry' });
  expect({ epoch: again.epoch, owner: again.owner?.executionSessionId, seq: again.seq }).toEqual({ epoch: first.epoch, owner: 's-retry', seq: first.seq });
  expect(o.fakes.log(first.ownershipId).map((e) => [e.type, e.messageId])).toEqual([['ownership.claimed', 'claim-retry']]);
});

test('a claim by another session while one is held: refused worktree_owned, nothing written', async () => {
  const first = await o.client.bind(bindReq(3, 's-holder'), { messageId: 'claim-held' });
  expect(await refusal(o.client.bind(bindReq(3, 's-intruder'), { messageId: 'claim-other' }))).toBe('worktree_owned');
  expect(types(o, first.ownershipId)).toEqual(['ownership.claimed']);
});
