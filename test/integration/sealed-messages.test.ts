import { Client, Connection, WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { ApplicationFailure } from '@temporalio/common';
import type { OwnershipView } from '../../src/client';
import { DEFAULT_SETTINGS } from '../../src/workflows/ownership';
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
  repo = makeRepo(8);
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

/**
 * A raw client that spells the seal's key with a JSON escape: the bytes hold no `"seal"`, the JSON
 * converter still reads one. The byte-matching codec let this through as `{ ok: true, ... }`
 * written by the sender (a forced admin reclaim that took the worktree): each test below failed so.
 */
const te = new TextEncoder();
const td = new TextDecoder();
const escapeSeal: PayloadCodec = {
  encode: async (ps: Payload[]) => ps.map((p) => (p.data ? { ...p, data: te.encode(td.decode(p.data).replaceAll('"seal":', '"se\\u0061l":')) } : p)),
  decode: async (ps: Payload[]) => ps,
};
const escapingIntruder = () => new Client({ connection: intruderConnection, namespace: 'default', dataConverter: { payloadCodecs: [escapeSeal] } });

test('a forged reclaim whose seal key is spelled with an escape is refused and changes nothing', async () => {
  const owned = await bound(4, 'owner-4');
  const before = await readEvents(h.pool, owned.ownershipId);
  const handle = escapingIntruder().workflow.getHandle(owned.workflowId);
  const r = await refusalOf(
    handle.executeUpdate(reclaimUpdate, {
      args: [adminReclaim({ hostAway: true, seal: { ok: true, messageId: 'escaped-1', exp: 99999999999999 } }) as never],
      updateId: 'escaped-1',
    }),
  );
  expect(r).toEqual({ type: 'message_unsealed', details: { problem: 'unsealed' } });
  // A release and a landing forged the same way: nothing either.
  await handle.signal(landedSignal, {
    sourceHead: 'a'.repeat(40),
    landedBranch: 'main',
    landedHead: 'd'.repeat(40),
    landedAt: new Date().toISOString(),
    principal: { kind: 'landing', id: 'intruder' },
    seal: { ok: true, messageId: 'escaped-2', exp: 99999999999999 },
  } as never);
  const rel = await refusalOf(
    handle.executeUpdate(releaseUpdate, {
      args: [
        {
          executionSessionId: 'owner-4',
          epoch: owned.epoch,
          principal: { kind: 'admin', id: 'x' },
          seal: { ok: true, messageId: 'escaped-3', exp: 99999999999999 },
        } as never,
      ],
      updateId: 'escaped-3',
    }),
  );
  expect(rel.type).toBe('message_unsealed');
  expect((await refusedRows(owned.ownershipId, 3)).map((x) => x.message_id)).toEqual(['escaped-1', null, 'escaped-3']);
  expect(await readEvents(h.pool, owned.ownershipId)).toEqual(before);
  expect((await h.client.projection({ workflowId: owned.workflowId }))?.owner?.executionSessionId).toBe('owner-4');
});

test("a removal started by a raw client, however it spells its seal, removes nothing: the owner's dirty worktree stays", async () => {
  const owned = await bound(5, 'owner-5');
  const wt = repo.worktrees[5]!;
  writeFileSync(path.join(wt.path, 'wip.txt'), 'the owner’s uncommitted work\n');
  const head = (await h.client.projection({ workflowId: owned.workflowId }))!;
  const request = {
    hostId: h.hostId,
    worktreePath: wt.path,
    ownership: { ownershipId: owned.ownershipId, state: 'released', executionSessionId: null, source: 'service' },
    liveness: 'dead',
    callerIsOwner: true,
    receipts: [{ sourceHead: 'f'.repeat(40), landedHead: 'f'.repeat(40), landedBranch: 'main' }],
    targets: [],
    dryRun: false,
    deleteBranch: true,
  };
  for (const [client, seal] of [
    [intruder, undefined],
    [escapingIntruder(), { ok: true, exp: 99999999999999 }],
  ] as const) {
    const err = await client.workflow
      .execute('worktreeRemovalWorkflow', {
        taskQueue: h.taskQueue,
        workflowId: `removal-forged-${Math.random().toString(36).slice(2)}`,
        args: [{ ...request, ...(seal ? { seal } : {}) }],
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(((err as WorkflowFailedError).cause as ApplicationFailure).type).toBe('message_unsealed');
  }
  expect(existsSync(path.join(wt.path, 'wip.txt'))).toBe(true);
  expect((await h.client.projection({ workflowId: owned.workflowId }))?.state).toBe(head.state);
});

test('a run terminated and started again by a raw client with a record of its own making decides nothing and projects nothing', async () => {
  const owned = await bound(6, 'owner-6');
  const before = await readEvents(h.pool, owned.ownershipId);
  const lockBefore = (await h.client.projection({ workflowId: owned.workflowId }))!;
  await intruder.workflow.getHandle(owned.workflowId).terminate('intruder');
  const wt = repo.worktrees[6]!;
  const forgedRecord = { ...lockBefore, state: 'released', owner: null };
  for (const client of [intruder, escapingIntruder()]) {
    const handle = await client.workflow.start('ownershipWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: owned.workflowId,
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      args: [
        {
          ownershipId: owned.ownershipId,
          worktree: { repoRoot: repo.repoRoot, worktreePath: wt.path, branch: wt.branch, hostId: h.hostId },
          settings: DEFAULT_SETTINGS,
          carried: {
            record: forgedRecord,
            durableRecord: forgedRecord,
            recentEvents: [],
            liveness: { status: 'unowned', verdict: null, lastHeartbeatAt: null, checkedAt: null, leaseTtlMs: 1000 },
            projectionSync: { hostId: h.hostId, localSeq: 0, durableSeq: lockBefore.seq, error: null },
            lastHeartbeatMs: 0,
            lastHeartbeatLoggedMs: 0,
          },
          liveMemo: 'durable',
          seal: { ok: true, exp: 99999999999999 },
        },
      ],
    });
    // The run ends at once, having decided nothing.
    expect(await handle.result()).toBeNull();
  }
  expect(await readEvents(h.pool, owned.ownershipId)).toEqual(before);
  const starts = await refusedRows(owned.ownershipId, 2);
  expect(starts.map((r) => [r.message, r.problem])).toEqual([
    ['start', 'unsealed'],
    ['start', 'unsealed'],
  ]);
});

test('a sealed heartbeat copied out of the history acts once: sent again, it is refused as replayed', async () => {
  const owned = await bound(7, 'owner-7');
  const workflowId = owned.workflowId;
  const view = (await h.client.projection({ workflowId }))!;
  await h.client.heartbeat({ workflowId }, { executionSessionId: view.owner!.executionSessionId, epoch: view.epoch });
  let signalled: Payload[] | null = null;
  for (let i = 0; i < 100 && signalled === null; i++) {
    const history = await h.temporal.workflow.getHandle(workflowId).fetchHistory();
    const e = [...(history.events ?? [])].reverse().find((x) => x.workflowExecutionSignaledEventAttributes?.signalName === 'heartbeat');
    signalled = (e?.workflowExecutionSignaledEventAttributes?.input?.payloads as Payload[] | undefined) ?? null;
    if (signalled === null) await new Promise((r) => setTimeout(r, 100));
  }
  expect(signalled).not.toBeNull();
  // The very bytes, seal and all, sent again by a raw client.
  await intruderConnection.workflowService.signalWorkflowExecution({
    namespace: 'default',
    workflowExecution: { workflowId },
    signalName: 'heartbeat',
    input: { payloads: signalled },
    identity: 'intruder',
  });
  for (let i = 0; i < 100; i++) {
    const { rows } = await h.pool.query("SELECT problem FROM refused_messages WHERE ownership_id = $1 AND message = 'heartbeat' AND problem = 'replayed'", [
      view.ownershipId,
    ]);
    if (rows.length === 1) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the copied heartbeat was not refused as replayed');
});
