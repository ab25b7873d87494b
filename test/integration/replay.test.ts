import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { makeRepo } from '../support/git-fixture';
import { executorPrincipal as executor, startHarness, type Harness } from '../support/harness';

/**
 * Determinism guard. Histories recorded from earlier versions of the workflow (committed under
 * test/fixtures/histories/) and histories of this run's main scenarios are replayed against the
 * current workflow code: a change that alters commands fails here unless it is behind patched().
 * OD_RECORD_HISTORIES=<tag> writes this run's histories as new fixtures named <scenario>-<tag>.json.
 */
const FIXTURES = path.resolve(__dirname, '../fixtures/histories');
const bundle = () => ({ codePath: process.env.OD_TEST_WORKFLOW_BUNDLE! });

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.shutdown());


async function scenarios(): Promise<Record<string, string>> {
  const repo = makeRepo(3);
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
  const ho = await h.client.handoff(ref(0), { executionSessionId: 's-1', epoch: 1, principal: executor('replay-worker'), toExecutionSessionId: 's-2' });
  await h.client.acceptHandoff(ref(0), { handoffId: ho.handoff!.handoffId, executionSessionId: 's-2', runtime: 'chatgpt-web', worker: { runId: 'run-1', workerId: 'replay-worker' }, principal: executor('replay-worker') });
  await h.client.submit(ref(0), { executionSessionId: 's-2', epoch: 2, principal: executor('replay-worker'), head: 'c'.repeat(40) });
  await h.client.landed(ref(0), { sourceHead: 'c'.repeat(40), landedBranch: 'main', landedHead: 'd'.repeat(40), landedAt: new Date().toISOString(), principal: { kind: 'landing', id: 'l' } });
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
  await h.client.reclaim(ref(2), { executionSessionId: 's-6', runtime: 'codex-cli', worker: { runId: null, workerId: 'other' }, principal: { kind: 'admin', id: 'ops' }, force: true, reason: 'host lost' });
  ids.reclaim = await h.client.workflowIdOf(ref(2));
  return ids;
}

test('histories of the main scenarios replay against the current workflow code', async () => {
  const ids = await scenarios();
  const histories = await Promise.all(Object.entries(ids).map(async ([name, workflowId]) => ({ name, workflowId, history: await h.temporal.workflow.getHandle(workflowId).fetchHistory() })));
  const tag = process.env.OD_RECORD_HISTORIES;
  if (tag) {
    mkdirSync(FIXTURES, { recursive: true });
    for (const x of histories) writeFileSync(path.join(FIXTURES, `${x.name}-${tag}.json`), historyToJSON(x.history));
  }
  const results = [];
  for await (const r of Worker.runReplayHistories({ workflowBundle: bundle() }, histories.map((x) => ({ workflowId: x.workflowId, history: x.history })))) results.push(r);
  expect(results).toHaveLength(histories.length);
  for (const r of results) expect(r.error).toBeUndefined();
});

test('recorded fixture histories from earlier versions still replay', async () => {
  const files = existsSync(FIXTURES) ? readdirSync(FIXTURES).filter((f) => f.endsWith('.json')) : [];
  expect(files.length).toBeGreaterThanOrEqual(3);
  const histories = files.map((f) => ({ workflowId: f, history: historyFromJSON(JSON.parse(readFileSync(path.join(FIXTURES, f), 'utf8'))) }));
  const results = [];
  for await (const r of Worker.runReplayHistories({ workflowBundle: bundle() }, histories)) results.push(r);
  expect(results).toHaveLength(files.length);
  for (const r of results) expect({ workflowId: r.workflowId, error: r.error?.message }).toEqual({ workflowId: r.workflowId, error: undefined });
});
