import { NativeConnection, type Worker } from '@temporalio/worker';
import { OwnershipClient, type BindRequest } from '../../src/client';
import { gitWorktreeResolver } from '../../src/adapters/worktree-resolver';
import { createWorkers } from '../../src/infra/workers';
import { readProjection } from '../../src/git/projection';
import { keyringKeys } from '../../src/keys/message-seal';
import { holdTenureHashWords, holdTenureSecret, tenureHashWords } from '../../src/keys/tenure';
import { guardAt } from '../../src/gate/guard';
import { worktreeDirs } from '../../src/git/repo';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { executorPrincipal as executor, startHarness, testKeyring, waitForView, type Harness } from '../support/harness';

/**
 * The key off agent hosts (docs/guarantees.md#out-of-reach): a host agent that holds no service
 * key (no seal codec, no keyring) still projects every owner's tenure, because the control plane's
 * log write computes the tenure hash and the workflow carries it to the host with the record; each
 * live child hold's words are carried beside it, so the gate lets a child through on a keyless host.
 */
let h: Harness;
let repo: RepoFixture;
let keyless: { workers: Worker[]; running: Promise<unknown>[]; connection: NativeConnection; client: OwnershipClient; hostId: string };

beforeAll(async () => {
  h = await startHarness();
  repo = makeRepo(2);
  const hostId = `${h.hostId}-keyless`;
  const connection = await NativeConnection.connect({ address: h.workers.temporalAddress });
  // A host agent alone, as `OD_HOST_AGENT_KEYLESS=1 worker.ts --host-agent` makes it: no pool, a converter with no codec.
  const workers = await createWorkers({
    connection,
    namespace: 'default',
    taskQueue: h.taskQueue,
    hostId,
    allowedRoots: h.workers.allowedRoots,
    authority: { check: async () => ({ verdict: 'alive', detail: null }) },
    dataConverter: {},
    shipper: null,
  });
  const running = workers.map((w) => w.run().catch((err: unknown) => process.stderr.write(`[keyless] ${String(err)}\n`)));
  const client = new OwnershipClient({
    client: h.temporal,
    resolver: gitWorktreeResolver,
    taskQueue: h.taskQueue,
    hostId,
    allowedRoots: h.workers.allowedRoots,
  });
  keyless = { workers, running, connection, client, hostId };
}, 120_000);

afterAll(async () => {
  for (const w of keyless?.workers ?? []) if (w.getState() === 'RUNNING') w.shutdown();
  await Promise.allSettled(keyless?.running ?? []);
  await keyless?.connection.close();
  await h?.shutdown();
});

const bindReq = (wt: { path: string; branch: string }, session: string): BindRequest => ({
  repoRoot: repo.repoRoot,
  worktreePath: wt.path,
  branch: wt.branch,
  executionSessionId: session,
  runtime: 'codex-cli',
  worker: { runId: 'run-keyless', workerId: 'worker-keyless' },
  principal: executor('worker-keyless'),
});

test("a keyless host agent writes the owner's tenure hash the control plane carried, for each new tenure", async () => {
  const wt = repo.worktrees[0]!;
  const ref = { worktreePath: wt.path, repoRoot: repo.repoRoot };
  const view = await keyless.client.bind(bindReq(wt, 'keyless-a'));
  await waitForView(keyless.client, ref, (v) => v.projectionSync.localSeq >= v.seq && v.projectionSync.error === null);
  const keys = keyringKeys(testKeyring());
  const expected = (epoch: number, executionSessionId: string) => tenureHashWords(keys, { ownershipId: view.ownershipId, epoch, executionSessionId });
  expect(await readProjection(wt.path)).toMatchObject({
    ownershipId: view.ownershipId,
    epoch: 1,
    executionSessionId: 'keyless-a',
    tenureHash: expected(1, 'keyless-a'),
  });

  // A handoff is a new tenure: its hash comes with it too.
  const handoff = await keyless.client.handoff(ref, {
    executionSessionId: 'keyless-a',
    epoch: 1,
    toExecutionSessionId: 'keyless-b',
    principal: executor('worker-keyless'),
  });
  await keyless.client.acceptHandoff(ref, {
    handoffId: handoff.handoff!.handoffId,
    executionSessionId: 'keyless-b',
    runtime: 'codex-cli',
    worker: { runId: 'run-keyless', workerId: 'worker-keyless' },
    principal: executor('worker-keyless'),
  });
  const after = await waitForView(keyless.client, ref, (v) => v.epoch === 2 && v.projectionSync.localSeq >= v.seq && v.projectionSync.error === null);
  expect(after.projectionSync.error).toBeNull();
  expect(await readProjection(wt.path)).toMatchObject({ epoch: 2, executionSessionId: 'keyless-b', tenureHash: expected(2, 'keyless-b') });
});

test("a keyless host writes each live child hold's words the control plane carried; the hold's end and the parent's handoff drop them, and the gate refuses the child at once", async () => {
  const wt = repo.worktrees[1]!;
  const ref = { worktreePath: wt.path, repoRoot: repo.repoRoot };
  const view = await keyless.client.bind(bindReq(wt, 'keyless-parent'));
  const keys = keyringKeys(testKeyring());
  const child = (holdId: string, executionSessionId: string, epoch = 1) => ({ ownershipId: view.ownershipId, epoch, holdId, executionSessionId });
  const principal = executor('worker-keyless');
  for (const [holdId, session] of [
    ['hld_keyless_a', 'keyless-child-a'],
    ['hld_keyless_b', 'keyless-child-b'],
  ] as const) {
    await keyless.client.grantHold(ref, {
      executionSessionId: 'keyless-parent',
      epoch: 1,
      holdId,
      childExecutionSessionId: session,
      runtime: 'codex-cli',
      principal,
    });
  }
  const synced = (v: { seq: number; projectionSync: { localSeq: number; error: string | null } }) =>
    v.projectionSync.localSeq >= v.seq && v.projectionSync.error === null;
  await waitForView(keyless.client, ref, (v) => (v.holds ?? []).length === 2 && synced(v));
  expect((await readProjection(wt.path))?.holds).toEqual([
    { holdId: 'hld_keyless_a', executionSessionId: 'keyless-child-a', tenureHash: holdTenureHashWords(keys, child('hld_keyless_a', 'keyless-child-a')) },
    { holdId: 'hld_keyless_b', executionSessionId: 'keyless-child-b', tenureHash: holdTenureHashWords(keys, child('hld_keyless_b', 'keyless-child-b')) },
  ]);
  const gd = (await worktreeDirs(wt.path)).privateDir;
  const asChild = (holdId: string, session: string, epoch = 1) =>
    guardAt(
      gd,
      {
        OVERDECK_EXECUTION_SESSION_ID: session,
        OVERDECK_EPOCH: String(epoch),
        OVERDECK_TENURE_SECRET: holdTenureSecret(keys[0]!, child(holdId, session, epoch)),
      },
      'git',
    );
  expect(asChild('hld_keyless_a', 'keyless-child-a')).toMatchObject({ status: 0, holdId: 'hld_keyless_a' });
  expect(asChild('hld_keyless_b', 'keyless-child-b')).toMatchObject({ status: 0, holdId: 'hld_keyless_b' });

  // child-a's hold ends (the child's own release): its words go at the next projection.
  await keyless.client.endHold(ref, { executionSessionId: 'keyless-child-a', epoch: 1, holdId: 'hld_keyless_a', principal });
  await waitForView(keyless.client, ref, (v) => (v.holds ?? []).length === 1 && synced(v));
  expect((await readProjection(wt.path))?.holds?.map((h) => h.holdId)).toEqual(['hld_keyless_b']);
  expect(asChild('hld_keyless_a', 'keyless-child-a')).toMatchObject({ status: 10, reason: 'not_owner' });
  expect(asChild('hld_keyless_b', 'keyless-child-b')).toMatchObject({ status: 0 });

  // The parent hands off: epoch 2 ends child-b's hold with it, and the gate refuses child-b.
  const handoff = await keyless.client.handoff(ref, { executionSessionId: 'keyless-parent', epoch: 1, toExecutionSessionId: 'keyless-next', principal });
  await keyless.client.acceptHandoff(ref, {
    handoffId: handoff.handoff!.handoffId,
    executionSessionId: 'keyless-next',
    runtime: 'codex-cli',
    worker: { runId: 'run-keyless', workerId: 'worker-keyless' },
    principal,
  });
  await waitForView(keyless.client, ref, (v) => v.epoch === 2 && synced(v));
  expect(await readProjection(wt.path)).toMatchObject({ epoch: 2, executionSessionId: 'keyless-next' });
  expect((await readProjection(wt.path))?.holds).toBeUndefined();
  expect(asChild('hld_keyless_b', 'keyless-child-b')).toMatchObject({ status: 10, reason: 'not_owner' });
});
