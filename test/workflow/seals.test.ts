import { Client, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { landedSignal, releaseUpdate, reclaimUpdate } from '../../src/workflows/messages';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { admin, requests, types, until, worker } from './decision-helpers';
import { startOwnershipEnv, type OwnershipEnv } from './ownership-env';

/**
 * Seal refusals: a message no service process sealed for this update (sent without the service
 * key, sealed for another update id, or expired) is refused message_unsealed with its problem and
 * changes nothing; an unsealed signal acts on nothing; a signal id seen before is refused
 * (replayed) however its content differs.
 */
let o: OwnershipEnv;
let repo: RepoFixture;
const { bindReq, ref, owner } = requests(() => repo);
/** A client of the same server without the service key: what an intruder's SDK would send. */
let intruder: Client;

beforeAll(async () => {
  o = await startOwnershipEnv();
  repo = makeRepo(3, o.root);
  intruder = new Client({ connection: o.env.connection, namespace: 'default' });
});
afterAll(async () => {
  await o?.stop();
});

async function updateRefusal(p: Promise<unknown>): Promise<{ type: string | null | undefined; details: unknown }> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (err as WorkflowUpdateFailedError).cause as ApplicationFailure;
  return { type: cause.type, details: cause.details?.[0] };
}

test('an update without the service’s seal is refused message_unsealed and changes nothing, a forged seal too', async () => {
  const bound = await o.client.bind(bindReq(0, 's-sealed'));
  const wf = await o.client.workflowIdOf(ref(0));
  const reclaim = { executionSessionId: 's-intruder', runtime: 'codex-cli', worker: worker('w-x'), principal: admin('intruder'), force: true, reason: 'mine' };
  const handle = intruder.workflow.getHandle(wf);
  expect(await updateRefusal(handle.executeUpdate(reclaimUpdate, { args: [reclaim as never], updateId: 'raw-1' }))).toEqual({
    type: 'message_unsealed',
    details: { problem: 'unsealed' },
  });
  const forged = { ...reclaim, seal: { ok: true, kid: 'x', messageId: 'raw-2', exp: Date.now() + 60_000 } };
  expect((await updateRefusal(handle.executeUpdate(reclaimUpdate, { args: [forged as never], updateId: 'raw-2' }))).type).toBe('message_unsealed');
  expect(types(o, bound.ownershipId)).toEqual(['ownership.claimed']);
  expect((await o.client.projection(ref(0)))?.owner?.executionSessionId).toBe('s-sealed');
});

test('a sealed update counts only under the id it was sealed for, and only until it expires', async () => {
  const bound = await o.client.bind(bindReq(1, 's-own'));
  const handle = o.env.client.workflow.getHandle(await o.client.workflowIdOf(ref(1)));
  const release = owner('s-own', 1);
  const now = await o.env.currentTimeMs();
  expect(
    await updateRefusal(
      handle.executeUpdate(releaseUpdate, { args: [{ ...release, seal: { messageId: 'captured', exp: now + 60_000 } }], updateId: 'resent' }),
    ),
  ).toEqual({ type: 'message_unsealed', details: { problem: 'other_message' } });
  expect(
    await updateRefusal(handle.executeUpdate(releaseUpdate, { args: [{ ...release, seal: { messageId: 'late', exp: now - 1 } }], updateId: 'late' })),
  ).toEqual({
    type: 'message_unsealed',
    details: { problem: 'expired' },
  });
  expect(types(o, bound.ownershipId)).toEqual(['ownership.claimed']);
  expect((await o.client.projection(ref(1)))?.state).toBe('active');
});

test('an unsealed signal lands nothing; a sealed signal’s id acts once, a copy under the same id is refused', async () => {
  const bound = await o.client.bind(bindReq(2, 's-lands'));
  await o.client.submit(ref(2), { ...owner('s-lands', 1), head: 'a'.repeat(40) });
  const wf = await o.client.workflowIdOf(ref(2));
  const landing = (head: string) => ({
    sourceHead: 'a'.repeat(40),
    landedBranch: 'main',
    landedHead: head.repeat(40),
    landedAt: new Date(0).toISOString(),
    principal: { kind: 'landing' as const, id: 'lander' },
  });
  await intruder.workflow.getHandle(wf).signal(landedSignal, landing('b') as never);
  await o.client.landed(ref(2), landing('c'), { messageId: 'sig-land-1' });
  const landed = await until(
    () => o.client.projection(ref(2)),
    (v) => v?.state === 'landed',
  );
  expect(landed?.landings.map((l) => l.landedHead)).toEqual(['c'.repeat(40)]);
  // The same signal id again, with another landing: refused as replayed, the record unchanged.
  await o.client.landed(ref(2), landing('d'), { messageId: 'sig-land-1' });
  // A later signal under a new id is handled after it: once it shows, the copy was decided.
  await o.client.heartbeat(ref(2), { executionSessionId: 's-lands', epoch: 1 });
  await o.client.landed(ref(2), landing('e'), { messageId: 'sig-land-2' });
  const after = await until(
    () => o.client.projection(ref(2)),
    (v) => (v?.landings.length ?? 0) >= 2,
  );
  expect(after?.landings.map((l) => l.landedHead)).toEqual(['c'.repeat(40), 'e'.repeat(40)]);
  expect(types(o, bound.ownershipId).filter((t) => t === 'ownership.landed')).toHaveLength(2);
});
