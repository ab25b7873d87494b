import { NativeConnection, type Worker } from '@temporalio/worker';
import { OwnershipClient, type BindRequest } from '../../src/client';
import { gitWorktreeResolver } from '../../src/adapters/worktree-resolver';
import { createWorkers } from '../../src/infra/workers';
import { readProjection } from '../../src/git/projection';
import { keyringKeys } from '../../src/keys/message-seal';
import { tenureHashWords } from '../../src/keys/tenure';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { executorPrincipal as executor, startHarness, testKeyring, waitForView, type Harness } from '../support/harness';

/**
 * The key off agent hosts (docs/guarantees.md#out-of-reach): a host agent that holds no service
 * key (no seal codec, no keyring) still projects every owner's tenure, because the control plane's
 * log write computes the tenure hash and the workflow carries it to the host with the record.
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
