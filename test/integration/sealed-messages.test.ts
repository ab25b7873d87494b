import { Client, Connection, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { OwnershipView } from '../../src/client';
import { readEvents } from '../../src/store/event-store';
import { refusalOf as recordedRefusal } from '../../src/store/refused-messages';
import { heartbeatSignal, landedSignal, reclaimUpdate, releaseUpdate } from '../../src/workflows/messages';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { executorPrincipal as executor, startHarness, waitForView, type Harness } from '../support/harness';

/**
 * The Temporal frontend is not a side door: a process that reaches it but holds no service key
 * cannot act on an ownership, whatever principal its message names. Each message below is what an
 * intruder would send with the Temporal CLI or SDK; each is refused `message_unsealed`, changes
 * nothing, is recorded for people to see, and leaves the ownership answering the next real message.
 */

let h: Harness;
let repo: RepoFixture;
let intruder: Client;
let intruderConnection: Connection;

beforeAll(async () => {
  h = await startHarness();
  repo = makeRepo(4);
  intruderConnection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  // The SDK's default data converter: no service key.
  intruder = new Client({ connection: intruderConnection, namespace: 'default' });
});
afterAll(async () => {
  await intruderConnection?.close();
  await h?.shutdown();
});

async function bound(i: number, session: string): Promise<OwnershipView & { workflowId: string }> {
  const wt = repo.worktrees[i]!;
  const workflowId = await h.client.workflowIdOf({ worktreePath: wt.path });
  return {
    workflowId,
    ...(await h.client.bind({
      repoRoot: repo.repoRoot,
      worktreePath: wt.path,
      branch: wt.branch,
      executionSessionId: session,
      runtime: 'codex-cli',
      worker: { runId: 'run-w', workerId: 'worker-w' },
      principal: executor('worker-w'),
    })),
  };
}

const adminReclaim = (extra: Record<string, unknown> = {}) => ({
  executionSessionId: 'intruder-session',
  runtime: 'codex-cli',
  worker: { runId: 'run-x', workerId: 'worker-x' },
  principal: { kind: 'admin', id: 'intruder' },
  force: true,
  reason: 'taking it',
  ...extra,
});

async function refusalOf(p: Promise<unknown>): Promise<{ type: string | null | undefined; details: unknown }> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (err as WorkflowUpdateFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return { type: (cause as ApplicationFailure).type, details: (cause as ApplicationFailure).details?.[0] };
}

async function refusedRows(
  ownershipId: string,
  n: number,
): Promise<{ message: string; problem: string; claimed_principal: string | null; message_id: string | null }[]> {
  for (let i = 0; i < 100; i++) {
    const { rows } = await h.pool.query('SELECT message, problem, claimed_principal, message_id FROM refused_messages WHERE ownership_id = $1 ORDER BY id', [
      ownershipId,
    ]);
    if (rows.length >= n) return rows;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`fewer than ${n} refused messages recorded for ${ownershipId}`);
}

test('a forced admin reclaim sent straight to Temporal without the service key is refused, recorded, and changes nothing', async () => {
  const owned = await bound(0, 'owner-0');
  const handle = intruder.workflow.getHandle(owned.workflowId);
  const before = await readEvents(h.pool, owned.ownershipId);

  const r = await refusalOf(handle.executeUpdate(reclaimUpdate, { args: [adminReclaim() as never], updateId: 'intruder-1' }));
  expect(r.type).toBe('message_unsealed');
  expect(r.details).toEqual({ problem: 'unsealed' });

  // A hand-written seal claiming to be proven is not believed either.
  const forged = await refusalOf(
    handle.executeUpdate(reclaimUpdate, {
      args: [adminReclaim({ seal: { ok: true, kid: 'x', messageId: 'intruder-2', exp: Date.now() + 60_000 } }) as never],
      updateId: 'intruder-2',
    }),
  );
  expect(forged.type).toBe('message_unsealed');

  // Nothing changed: the same events, the same owner; and the ownership answers its owner at once.
  expect(await readEvents(h.pool, owned.ownershipId)).toEqual(before);
  const after = await h.client.projection({ workflowId: owned.workflowId });
  expect(after?.owner?.executionSessionId).toBe('owner-0');
  const released = await h.client.release(
    { workflowId: owned.workflowId },
    { executionSessionId: 'owner-0', epoch: owned.epoch, principal: executor('worker-w') },
  );
  expect(released.state).toBe('released');

  const rows = await refusedRows(owned.ownershipId, 2);
  expect(rows.slice(0, 2)).toEqual([
    { message: 'reclaim', problem: 'unsealed', claimed_principal: 'admin:intruder', message_id: 'intruder-1' },
    { message: 'reclaim', problem: 'unsealed', claimed_principal: 'admin:intruder', message_id: 'intruder-2' },
  ]);
});

test('a sealed message counts only for the update it was sealed for, and only until it expires', async () => {
  const owned = await bound(1, 'owner-1');
  const handle = h.temporal.workflow.getHandle(owned.workflowId);
  const release = { executionSessionId: 'owner-1', epoch: owned.epoch, principal: executor('worker-w') };
  // Sealed with the service key (h.temporal holds it), but for another update id: a captured message sent again under a new id.
  const replayed = await refusalOf(
    handle.executeUpdate(releaseUpdate, { args: [{ ...release, seal: { messageId: 'captured', exp: Date.now() + 60_000 } }], updateId: 'replayed' }),
  );
  expect(replayed).toEqual({ type: 'message_unsealed', details: { problem: 'other_message' } });
  // Sealed for this id, but long expired: a captured message kept for later.
  const late = await refusalOf(
    handle.executeUpdate(releaseUpdate, { args: [{ ...release, seal: { messageId: 'late', exp: Date.now() - 1 } }], updateId: 'late' }),
  );
  expect(late).toEqual({ type: 'message_unsealed', details: { problem: 'expired' } });
  expect((await h.client.projection({ workflowId: owned.workflowId }))?.state).toBe('active');
  const rows = await refusedRows(owned.ownershipId, 2);
  expect(rows.map((r) => r.problem)).toEqual(['other_message', 'expired']);
});

test('signals without the service key change nothing: no landing, no heartbeat', async () => {
  const owned = await bound(2, 'owner-2');
  const ref = { workflowId: owned.workflowId };
  const submitted = await h.client.submit(ref, { executionSessionId: 'owner-2', epoch: owned.epoch, principal: executor('worker-w'), head: 'a'.repeat(40) });
  expect(submitted.state).toBe('submitted');
  const handle = intruder.workflow.getHandle(owned.workflowId);
  const landing = {
    sourceHead: 'a'.repeat(40),
    landedBranch: 'main',
    landedHead: 'b'.repeat(40),
    landedAt: new Date().toISOString(),
    principal: { kind: 'landing', id: 'intruder' },
  };
  await handle.signal(landedSignal, landing as never);
  await handle.signal(heartbeatSignal, { executionSessionId: 'owner-2', epoch: owned.epoch, seal: { ok: true } } as never);
  const rows = await refusedRows(owned.ownershipId, 2);
  expect(rows.map((r) => [r.message, r.problem, r.claimed_principal])).toEqual([
    ['landed', 'unsealed', 'landing:intruder'],
    ['heartbeat', 'unsealed', null],
  ]);
  expect((await h.client.projection(ref))?.state).toBe('submitted');
  // The same landing through the service lands.
  await h.client.landed(ref, { ...landing, principal: { kind: 'landing', id: 'lander' } });
  const landed = await waitForView(h.client, ref, (v) => v.state === 'landed');
  expect(landed.landings).toHaveLength(1);
});

test('a signal the workflow refuses is recorded under the id its sender gave it, never dropped', async () => {
  const current = await bound(3, 'owner-3');
  const workflowId = current.workflowId;
  const landing = {
    sourceHead: 'a'.repeat(40),
    landedBranch: 'main',
    landedHead: 'c'.repeat(40),
    landedAt: new Date().toISOString(),
    principal: { kind: 'landing' as const, id: 'lander' },
  };
  // Addressed to another lifecycle of this worktree: the workflow refuses it (ownership_mismatch).
  await h.client.landed({ workflowId, ownershipId: 'own_01JABCDEFGHJKMNPQRSTVWXYZ0' }, landing, { messageId: 'sig-misaddressed' });
  for (let i = 0; i < 100 && (await recordedRefusal(h.pool, current.ownershipId, 'sig-misaddressed')) === null; i++)
    await new Promise((r) => setTimeout(r, 100));
  expect(await recordedRefusal(h.pool, current.ownershipId, 'sig-misaddressed')).toBe('ownership_mismatch');
  expect((await h.client.projection({ workflowId }))!.landings).toHaveLength(0);
});
