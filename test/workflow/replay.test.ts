import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { makeRepo } from '../support/git-fixture';
import { readExecutorConversation, recordObservation } from '../../src/store/bindings';
import { readEvents } from '../../src/store/event-store';
import { dataConverterOf } from '../../src/infra/payload-codec';
import { parseKeyring } from '../../src/keys/message-seal';
import { executorPrincipal as executor, startHarness, type Harness, waitForView } from '../support/harness';

const CONV = '7a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d';

/**
 * Determinism guard. Histories recorded from the workflow as it was (committed under
 * test/fixtures/histories/: one per scenario, `<scenario>@<shape>.json`, the baseline's shape and one
 * more per patch step since) are replayed against the current workflow code: a change that alters
 * commands fails here unless it follows docs/workflow-versioning.md. OD_RECORD_HISTORIES=<shape>
 * runs the scenarios below and writes their histories as fixtures named <scenario>@<shape>.json. (Replaying this run's own
 * histories against the bundle that just wrote them could not fail: it is not done.)
 */
const FIXTURES = path.resolve(__dirname, '../fixtures/histories');
const bundle = () => ({ codePath: process.env.OD_TEST_WORKFLOW_BUNDLE! });
const RECORD = process.env.OD_RECORD_HISTORIES;
/**
 * The fixtures' service key (a test key, committed): the histories carry seals made with it, and
 * replay through the same codec as the workers ran them. A seal binds the workflow id, so each
 * fixture's workflow id is kept in WORKFLOW_IDS.
 */
// Read as text, not loaded as a deployment's key file: a committed test key is world-readable by design.
const fixtureConverter = dataConverterOf({ payloadKeyFile: '', keyring: parseKeyring(readFileSync(path.join(FIXTURES, 'service.key'), 'utf8'), 'fixtures') });
const WORKFLOW_IDS = path.join(FIXTURES, 'workflow-ids.json');
const workflowIds = (): Record<string, string> => (existsSync(WORKFLOW_IDS) ? (JSON.parse(readFileSync(WORKFLOW_IDS, 'utf8')) as Record<string, string>) : {});

/** Every scenario that has fixtures; each must keep at least one. */
const SCENARIOS = [
  'lifecycle',
  'release',
  'reclaim',
  'reclaim-missing',
  'handoff-other-worker',
  'continue-as-new-first',
  'continue-as-new-next',
  'conversation-bound',
  'branch-rename',
  'handoff-timeout',
  'binding-carried',
  'retry-across-runs',
];

let h: Harness;
/** A short history bound and a configured worker: continue-as-new within seconds, taking the worker's configuration. */
let quick: Harness;
/** A short handoff timeout: an offer expires within seconds. */
let timed: Harness;
beforeAll(async () => {
  if (!RECORD) return;
  h = await startHarness({ dataConverter: fixtureConverter });
  quick = await startHarness({ settings: { maxHistoryEvents: 40 }, workerSettings: { maxHistoryEvents: 400 }, dataConverter: fixtureConverter });
  timed = await startHarness({ settings: { handoffTimeoutMs: 1_500 }, dataConverter: fixtureConverter });
});
afterAll(async () => {
  await h?.shutdown();
  await quick?.shutdown();
  await timed?.shutdown();
});

async function scenarios(): Promise<Record<string, string>> {
  const repo = makeRepo(5);
  const ids: Record<string, string> = {};
  const bind = (i: number, session: string) =>
    h.client.bind({
      repoRoot: repo.repoRoot,
      worktreePath: repo.worktrees[i].path,
      branch: repo.worktrees[i].branch,
      executionSessionId: session,
      runtime: 'chatgpt-web',
      worker: { runId: 'run-1', workerId: 'replay-worker' },
      principal: executor('replay-worker'),
      lane: 'replay',
    });
  const ref = (i: number) => ({ repoRoot: repo.repoRoot, worktreePath: repo.worktrees[i].path });

  // Full lifecycle: bind, plan, heartbeat, handoff, accept, submit, landed, removed (completes).
  await bind(0, 's-1');
  await h.client.bindPlan(ref(0), { executionSessionId: 's-1', epoch: 1, principal: executor('replay-worker'), planRef: 'docs/p.md' });
  await h.client.heartbeat(ref(0), { executionSessionId: 's-1', epoch: 1 });
  const ho = await h.client.handoff(ref(0), {
    executionSessionId: 's-1',
    epoch: 1,
    principal: executor('replay-worker'),
    toExecutionSessionId: 's-2',
    toWorkerId: 'replay-worker',
  });
  await h.client.acceptHandoff(ref(0), {
    handoffId: ho.handoff!.handoffId,
    executionSessionId: 's-2',
    runtime: 'chatgpt-web',
    worker: { runId: 'run-1', workerId: 'replay-worker' },
    principal: executor('replay-worker'),
  });
  await h.client.submit(ref(0), { executionSessionId: 's-2', epoch: 2, principal: executor('replay-worker'), head: 'c'.repeat(40) });
  await h.client.landed(ref(0), {
    sourceHead: 'c'.repeat(40),
    landedBranch: 'main',
    landedHead: 'd'.repeat(40),
    landedAt: new Date().toISOString(),
    principal: { kind: 'landing', id: 'l' },
  });
  await h.client.worktreeRemoved(ref(0), { principal: { kind: 'system', id: 'host' } });
  ids.lifecycle = await h.client.workflowIdOf(ref(0));
  await h.temporal.workflow.getHandle(ids.lifecycle).result();

  // Release, then another session claims the released worktree; a refused claim in between.
  await bind(1, 's-3');
  await bind(1, 's-4').catch(() => undefined);
  await h.client.release(ref(1), { executionSessionId: 's-3', epoch: 1, principal: executor('replay-worker') });
  await bind(1, 's-4');
  ids.release = await h.client.workflowIdOf(ref(1));

  // Forced admin reclaim of a dirty worktree (WIP preserved).
  await bind(2, 's-5');
  writeFileSync(path.join(repo.worktrees[2].path, 'dirty.txt'), 'x\n');
  await h.client.reclaim(ref(2), {
    executionSessionId: 's-6',
    runtime: 'codex-cli',
    worker: { runId: null, workerId: 'other' },
    principal: { kind: 'admin', id: 'ops' },
    force: true,
    reason: 'host lost',
  });
  ids.reclaim = await h.client.workflowIdOf(ref(2));

  // A reclaim of a worktree deleted behind the service's back: no WIP, recorded as such.
  await bind(3, 's-7');
  rmSync(repo.worktrees[3].path, { recursive: true, force: true });
  await h.client.reclaim(ref(3), {
    executionSessionId: 's-8',
    runtime: 'codex-cli',
    worker: { runId: null, workerId: 'other' },
    principal: { kind: 'admin', id: 'ops' },
    force: true,
    reason: 'worktree deleted',
  });
  ids['reclaim-missing'] = await h.client.workflowIdOf(ref(3));

  // Handoff to another worker, refused accepts by the wrong worker, a stale heartbeat, then a burst of heartbeats.
  await bind(4, 's-9');
  const ho2 = await h.client.handoff(ref(4), {
    executionSessionId: 's-9',
    epoch: 1,
    principal: executor('replay-worker'),
    toExecutionSessionId: 's-10',
    toWorkerId: 'other-worker',
  });
  await h.client
    .acceptHandoff(ref(4), {
      handoffId: ho2.handoff!.handoffId,
      executionSessionId: 's-10',
      runtime: 'codex-cli',
      worker: { runId: null, workerId: 'replay-worker' },
      principal: executor('replay-worker'),
    })
    .catch(() => undefined);
  await h.client.acceptHandoff(ref(4), {
    handoffId: ho2.handoff!.handoffId,
    executionSessionId: 's-10',
    runtime: 'codex-cli',
    worker: { runId: null, workerId: 'other-worker' },
    principal: executor('other-worker'),
  });
  await h.client.heartbeat(ref(4), { executionSessionId: 's-9', epoch: 1 });
  await Promise.all(Array.from({ length: 50 }, () => h.client.heartbeat(ref(4), { executionSessionId: 's-10', epoch: 2 })));
  ids['handoff-other-worker'] = await h.client.workflowIdOf(ref(4));
  return ids;
}

type Recorded = { name: string; workflowId: string; runId?: string; on: Harness };

/** A continue-as-new, a conversation bound then retitled, a branch rename, a handoff that times out. */
async function laterScenarios(): Promise<Recorded[]> {
  const repo = makeRepo(4);
  const worker = (workerId: string) => ({ runId: `run-${workerId}`, workerId });
  const bind = (i: number, session: string, workerId: string) =>
    quick.client.bind({
      worktreePath: repo.worktrees[i].path,
      branch: repo.worktrees[i].branch,
      executionSessionId: session,
      runtime: 'chatgpt-web',
      worker: worker(workerId),
      principal: executor(workerId),
      lane: 'replay',
    });
  const ref = (i: number) => ({ worktreePath: repo.worktrees[i].path });
  const owner = (session: string, workerId: string) => ({ executionSessionId: session, epoch: 1, principal: executor(workerId) });
  const out: Recorded[] = [];

  // Past maxHistoryEvents the run continues as new (taking the worker's configuration); the next run goes on.
  await bind(0, 's-20', 'replay-can');
  const canId = await quick.client.workflowIdOf(ref(0));
  const handle = quick.temporal.workflow.getHandle(canId);
  const firstRun = (await handle.describe()).runId;
  for (let round = 0; round < 12; round++) await quick.client.bindPlan(ref(0), { ...owner('s-20', 'replay-can'), lane: `round-${round}` });
  let nextRun = firstRun;
  for (let i = 0; i < 200 && nextRun === firstRun; i++) {
    await new Promise((r) => setTimeout(r, 100));
    nextRun = (await handle.describe()).runId;
  }
  expect(nextRun).not.toBe(firstRun);
  await quick.client.bindPlan(ref(0), { ...owner('s-20', 'replay-can'), lane: 'after' });
  await quick.client.heartbeat(ref(0), { executionSessionId: 's-20', epoch: 1 });
  out.push(
    { name: 'continue-as-new-first', workflowId: canId, runId: firstRun, on: quick },
    { name: 'continue-as-new-next', workflowId: canId, runId: nextRun, on: quick },
  );

  const bindT = (i: number, session: string, workerId: string) =>
    timed.client.bind({
      worktreePath: repo.worktrees[i].path,
      branch: repo.worktrees[i].branch,
      executionSessionId: session,
      runtime: 'chatgpt-web',
      worker: worker(workerId),
      principal: executor(workerId),
      lane: 'replay',
    });

  // A conversation observed after the claim is bound; a later observation retitles it.
  await bindT(1, 's-21', 'replay-conv');
  const convId = await timed.client.workflowIdOf(ref(1));
  const observe = async (sequence: number, title: string) => {
    const obs = await recordObservation(
      timed.pool,
      { workerId: 'replay-conv', runId: 'run-replay-conv' },
      {
        executor: 'chatgpt-web',
        executorInstanceId: 'ext-replay',
        sessionGeneration: 'gen-1',
        sequence,
        conversation: { conversationId: CONV, conversationUrl: `https://chatgpt.com/c/${CONV}`, title, observedAt: new Date().toISOString() },
      },
    );
    expect('code' in obs).toBe(false);
    await timed.client.conversationBound(convId, 'replay-conv');
    await waitForView(timed.client, ref(1), (v) => v.owner?.conversation?.title === title && v.projectionSync.durableSeq >= v.seq);
  };
  await observe(1, 'First title');
  await observe(2, 'Second title');
  out.push({ name: 'conversation-bound', workflowId: convId, on: timed });

  // The owner renames its branch.
  await bindT(2, 's-22', 'replay-rename');
  await timed.client.renameBranch(ref(2), { ...owner('s-22', 'replay-rename'), from: repo.worktrees[2].branch, to: `${repo.worktrees[2].branch}-renamed` });
  out.push({ name: 'branch-rename', workflowId: await timed.client.workflowIdOf(ref(2)), on: timed });

  // A handoff nobody accepts falls back to the owner when it expires.
  await bindT(3, 's-23', 'replay-timeout');
  await timed.client.handoff(ref(3), { ...owner('s-23', 'replay-timeout'), toExecutionSessionId: 's-24', toWorkerId: 'replay-timeout' });
  await waitForView(timed.client, ref(3), (v) => v.state === 'active' && v.handoff === null && v.projectionSync.durableSeq >= v.seq);
  out.push({ name: 'handoff-timeout', workflowId: await timed.client.workflowIdOf(ref(3)), on: timed });
  return out;
}

/** A claim, an accept and a forced reclaim whose messages carry the binding as the service read it (no read in the workflow). */
async function carriedScenarios(): Promise<Recorded[]> {
  const repo = makeRepo(1);
  const workerId = 'replay-carried';
  const conversationId = '5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a';
  const obs = await recordObservation(
    h.pool,
    { workerId, runId: `run-${workerId}` },
    {
      executor: 'chatgpt-web',
      executorInstanceId: 'ext-carried',
      sessionGeneration: 'gen-1',
      sequence: 1,
      conversation: { conversationId, conversationUrl: `https://chatgpt.com/c/${conversationId}`, title: 'Carried', observedAt: new Date().toISOString() },
    },
  );
  expect('code' in obs).toBe(false);
  // What the service reads from the binding and carries in the message (src/api/service/ownerships.ts newOwnerFacts).
  const conversation = await readExecutorConversation(h.pool, workerId);
  const wt = repo.worktrees[0]!;
  const ref = { worktreePath: wt.path };
  const worker = { runId: `run-${workerId}`, workerId };
  const principal = executor(workerId);
  await h.client.bind({ worktreePath: wt.path, branch: wt.branch, executionSessionId: 's-40', runtime: 'chatgpt-web', worker, principal }, { conversation });
  const offer = await h.client.handoff(ref, { executionSessionId: 's-40', epoch: 1, principal, toExecutionSessionId: 's-41', toWorkerId: workerId });
  await h.client.acceptHandoff(
    ref,
    { handoffId: offer.handoff!.handoffId, executionSessionId: 's-41', runtime: 'chatgpt-web', worker, principal },
    { conversation },
  );
  const last = await h.client.reclaim(
    ref,
    { executionSessionId: 's-42', runtime: 'chatgpt-web', worker, principal: { kind: 'admin', id: 'ops' }, force: true, reason: 'carried' },
    { conversation },
  );
  expect(last.owner?.conversation?.conversationId).toBe(conversationId);
  return [{ name: 'binding-carried', workflowId: await h.client.workflowIdOf(ref), on: h }];
}

/**
 * A message answered in one run and sent again, the same id, after the run continued as new: the
 * next run answers it from the events it carries, and decides nothing again.
 */
async function retryAcrossRunsScenario(): Promise<Recorded[]> {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0]!;
  const workerId = 'replay-retry';
  const principal = executor(workerId);
  const bound = await quick.client.bind({
    worktreePath: wt.path,
    branch: wt.branch,
    executionSessionId: 's-50',
    runtime: 'codex-cli',
    worker: { workerId, runId: null },
    principal,
  });
  const ref = { workflowId: await quick.client.workflowIdOf({ worktreePath: wt.path }), ownershipId: bound.ownershipId };
  const plan = (planRef: string, messageId?: string) =>
    quick.client.bindPlan(ref, { executionSessionId: 's-50', epoch: bound.epoch, planRef, principal }, messageId ? { messageId } : {});
  const first = await plan('p-0', `replay-retry-${bound.ownershipId}`);
  const firstRun = (await quick.temporal.workflow.getHandle(ref.workflowId).describe()).runId;
  for (let i = 1; (await quick.temporal.workflow.getHandle(ref.workflowId).describe()).runId === firstRun && i < 60; i++) await plan(`p-${i}`);
  const again = await plan('p-0', `replay-retry-${bound.ownershipId}`);
  expect(again.seq).toBeGreaterThan(first.seq);
  expect((await readEvents(quick.pool, bound.ownershipId)).filter((e) => e.messageId === `replay-retry-${bound.ownershipId}`)).toHaveLength(1);
  const runId = (await quick.temporal.workflow.getHandle(ref.workflowId).describe()).runId;
  await plan('p-last');
  return [{ name: 'retry-across-runs', workflowId: ref.workflowId, runId, on: quick }];
}

// Defined only in record mode, so a normal run reports no skipped test.
if (RECORD)
  test('OD_RECORD_HISTORIES=<tag>: the scenarios run and their histories are written as fixtures', async () => {
    const earlier: Recorded[] = Object.entries(await scenarios()).map(([name, workflowId]) => ({ name, workflowId, on: h }));
    const later = [...(await laterScenarios()), ...(await carriedScenarios()), ...(await retryAcrossRunsScenario())];
    mkdirSync(FIXTURES, { recursive: true });
    const ids = workflowIds();
    for (const x of [...earlier, ...later]) {
      const history = await x.on.temporal.workflow.getHandle(x.workflowId, x.runId).fetchHistory();
      writeFileSync(path.join(FIXTURES, `${x.name}@${RECORD}.json`), historyToJSON(history));
      ids[`${x.name}@${RECORD}.json`] = x.workflowId;
    }
    writeFileSync(WORKFLOW_IDS, `${JSON.stringify(ids, null, 2)}\n`);
  }, 120_000);

test('every recorded fixture history replays against the current workflow code', async () => {
  const files = existsSync(FIXTURES) ? readdirSync(FIXTURES).filter((f) => f.endsWith('.json') && f !== 'workflow-ids.json') : [];
  const ids = workflowIds();
  // Every scenario keeps a fixture (docs/workflow-versioning.md says when one may be retired), named <scenario>@<shape>.json.
  for (const name of SCENARIOS) expect({ name, fixtures: files.some((f) => f.startsWith(`${name}@`)) }).toEqual({ name, fixtures: true });
  for (const f of files) expect({ file: f, scenario: SCENARIOS.includes(f.split('@')[0]!) }).toEqual({ file: f, scenario: true });
  const histories = files.map((f) => ({ workflowId: ids[f] ?? f, history: historyFromJSON(JSON.parse(readFileSync(path.join(FIXTURES, f), 'utf8'))) }));
  const results = [];
  for await (const r of Worker.runReplayHistories({ workflowBundle: bundle(), dataConverter: fixtureConverter }, histories)) results.push(r);
  expect(results).toHaveLength(files.length);
  for (const r of results) expect({ workflowId: r.workflowId, error: r.error?.message }).toEqual({ workflowId: r.workflowId, error: undefined });
});
