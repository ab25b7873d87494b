import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ulid } from 'ulidx';
import type { OwnershipView } from '../../src/client';
import type { OwnershipEvent } from '../../src/domain/events';
import type { Owner, Principal } from '../../src/domain/identity';
import { emptyRecord, OWNERSHIP_STATES } from '../../src/domain/projection';
import { ownershipWorkflowId } from '../../src/ids/workflow-id';
import { recordObservation } from '../../src/store/bindings';
import { appendEvents } from '../../src/store/event-store';
import { buildListQuery, getHistory, getOwnership, listOwnerships } from '../../src/store/lookups';
import { compareProjection, rebuildProjection } from '../../src/store/rebuild';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { executorPrincipal as executor, startHarness, type Harness, waitForView } from '../support/harness';

let h: Harness;
let repo: RepoFixture;

beforeAll(async () => {
  h = await startHarness();
  repo = makeRepo(2);
});
afterAll(async () => h?.shutdown());

const lander: Principal = { kind: 'landing', id: 'lander' };

const waitFor = (ref: { repoRoot: string; worktreePath: string }, pred: (v: OwnershipView) => boolean) => waitForView(h.client, ref, pred);

/** Resolves once Temporal no longer knows the execution: its deletion is asynchronous (tens of seconds on the dev server). */
async function workflowGone(workflowId: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const gone = await h.temporal.workflow
      .getHandle(workflowId)
      .describe()
      .then(
        () => false,
        (err: unknown) => (err as Error).name === 'WorkflowNotFoundError',
      );
    if (gone) return;
    if (Date.now() > deadline) throw new Error('workflow execution still present');
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** What the history-survives-deletion test needs to check again once everything outside PostgreSQL is gone. */
interface Landed {
  ownershipId: string;
  workflowId: string;
  repoRoot: string;
  worktreePath: string;
  branch: string;
  landedHead: string;
  sourceHead: string;
  conversationId: string;
}
let landedScenario: Landed | null = null;

async function expectAnswersFully(x: Landed): Promise<void> {
  const byBranch = await getOwnership(h.pool, { branch: x.branch, repoRoot: x.repoRoot });
  expect(byBranch).not.toBeNull();
  // (Without a repoRoot a branch name may match other repositories' ownerships: other suites use wt/feature-0 too.)
  expect(await getOwnership(h.pool, { worktreePath: x.worktreePath })).toEqual(byBranch);
  expect(await getOwnership(h.pool, { ownershipId: x.ownershipId })).toEqual(byBranch);
  expect(byBranch).toMatchObject({
    ownershipId: x.ownershipId,
    state: 'closed',
    worktreeRemoved: true,
    branch: x.branch,
    lane: 'lookups',
    worker: { runId: 'run-l1', workerId: 'worker-l1' },
    owner: { executionSessionId: 'session-l2', conversation: { conversationId: x.conversationId } },
  });
  expect(byBranch!.landings).toHaveLength(1);
  expect(byBranch!.landings[0]).toMatchObject({
    landedHead: x.landedHead,
    sourceHead: x.sourceHead,
    sourceBranch: x.branch,
    executionSessionId: 'session-l2',
    conversation: { conversationId: x.conversationId, title: 'Lookup lane' },
  });

  const histories = [
    await getHistory(h.pool, { branch: x.branch, repoRoot: x.repoRoot }),
    await getHistory(h.pool, { worktreePath: x.worktreePath }),
    await getHistory(h.pool, { landedCommit: x.landedHead }),
    await getHistory(h.pool, { landedCommit: x.landedHead.slice(0, 9).toUpperCase() }),
    await getHistory(h.pool, { ownershipId: x.ownershipId }),
  ];
  for (const hist of histories) {
    expect(hist.ownerships).toHaveLength(1);
    const [o] = hist.ownerships;
    expect(o!.ownershipId).toBe(x.ownershipId);
    expect(o!.record).toEqual(byBranch);
    expect(o!.events.map((e) => e.seq)).toEqual(o!.events.map((_, i) => i + 1));
    expect(o!.events.map((e) => e.type)).toEqual([
      'ownership.claimed',
      'ownership.handoff_started',
      'ownership.claimed',
      'ownership.landed',
      'ownership.worktree_removed',
    ]);
    expect(o!.lineage).toEqual([
      expect.objectContaining({ executionSessionId: 'session-l1', via: 'bind', epoch: 1, previousExecutionSessionId: null, conversationId: x.conversationId }),
      expect.objectContaining({
        executionSessionId: 'session-l2',
        via: 'handoff',
        epoch: 2,
        previousExecutionSessionId: 'session-l1',
        conversationId: x.conversationId,
      }),
    ]);
  }
  expect(await getOwnership(h.pool, { branch: x.branch, repoRoot: '/nowhere' })).toBeNull();
  expect(await getHistory(h.pool, { landedCommit: 'f'.repeat(40) })).toEqual({ ownerships: [] });
}

test('history survives deletion: bind, hand off, land (replayed: one receipt), remove worktree and branch, delete the workflow: lookups answer from PostgreSQL', async () => {
  const CONV = '0b5f8e2a-4c1d-4e6f-9a7b-3c2d1e0f9a8b';
  const observed = await recordObservation(
    h.pool,
    { workerId: 'worker-l1', runId: 'run-l1' },
    {
      executor: 'chatgpt-web',
      executorInstanceId: 'ext-l1',
      sessionGeneration: 'gen-1',
      sequence: 1,
      conversation: { conversationId: CONV, conversationUrl: `https://chatgpt.com/c/${CONV}`, title: 'Lookup lane', observedAt: new Date().toISOString() },
    },
  );
  expect('code' in observed).toBe(false);

  const wt = repo.worktrees[0]!;
  const repoRoot = await h.client.normalize(repo.repoRoot);
  const worktreePath = await h.client.normalize(wt.path);
  const ref = { repoRoot, worktreePath };
  const worker = { runId: 'run-l1', workerId: 'worker-l1' };
  const bound = await h.client.bind({
    repoRoot,
    worktreePath,
    branch: wt.branch,
    executionSessionId: 'session-l1',
    runtime: 'chatgpt-web',
    worker,
    principal: executor('worker-l1'),
    lane: 'lookups',
  });
  // A handoff, so that the lineage has two links to derive.
  const started = await h.client.handoff(ref, {
    executionSessionId: 'session-l1',
    epoch: 1,
    principal: executor('worker-l1'),
    toExecutionSessionId: 'session-l2',
    toWorkerId: 'worker-l1',
  });
  await h.client.acceptHandoff(ref, {
    handoffId: started.handoff!.handoffId,
    executionSessionId: 'session-l2',
    runtime: 'chatgpt-web',
    worker,
    principal: executor('worker-l1'),
  });

  // Real work, landed with a real merge.
  writeFileSync(path.join(wt.path, 'lookups.txt'), 'work\n');
  git(wt.path, 'add', 'lookups.txt');
  git(wt.path, 'commit', '-q', '-m', 'lookups work');
  const sourceHead = git(wt.path, 'rev-parse', 'HEAD');
  git(repo.repoRoot, 'merge', '-q', '--no-ff', '-m', 'land lookups', wt.branch);
  const landedHead = git(repo.repoRoot, 'rev-parse', 'HEAD');

  // Replayed landed signals: one receipt.
  const landing = { sourceHead, landedBranch: 'main', landedHead, landedAt: new Date().toISOString(), principal: lander };
  for (let i = 0; i < 3; i++) await h.client.landed(ref, landing);
  const landed = await waitFor(ref, (v) => v.state === 'landed' && v.projectionSync.localSeq >= v.seq);
  expect(landed.landings).toHaveLength(1);
  const receipts = await h.pool.query('SELECT count(*)::int AS n FROM landing_receipts WHERE ownership_id = $1', [bound.ownershipId]);
  expect(receipts.rows[0].n).toBe(1);

  // Landing unlocked the worktree: remove it and its branch, tell the service, then delete the workflow.
  git(repo.repoRoot, 'worktree', 'remove', '--force', wt.path);
  git(repo.repoRoot, 'branch', '-D', wt.branch);
  await h.client.worktreeRemoved(ref, { principal: { kind: 'system', id: 'host' } });
  const workflowId = await h.client.workflowIdOf(ref);
  expect(((await h.temporal.workflow.getHandle(workflowId).result()) as { state: string }).state).toBe('closed');
  await h.temporal.workflowService.deleteWorkflowExecution({ namespace: 'default', workflowExecution: { workflowId } });

  landedScenario = { ownershipId: bound.ownershipId, workflowId, repoRoot, worktreePath, branch: wt.branch, landedHead, sourceHead, conversationId: CONV };
  await expectAnswersFully(landedScenario);
  // The remaining check (execution really gone) is the last test of this file, so Temporal's
  // asynchronous deletion runs while the other tests do.
});

test('a renamed branch keeps one ownership record, found by its old name too', async () => {
  const wt = repo.worktrees[1]!;
  const repoRoot = await h.client.normalize(repo.repoRoot);
  const worktreePath = await h.client.normalize(wt.path);
  const ref = { repoRoot, worktreePath };
  const bound = await h.client.bind({
    repoRoot,
    worktreePath,
    branch: wt.branch,
    executionSessionId: 'session-r1',
    runtime: 'codex-cli',
    worker: { runId: null, workerId: 'worker-r1' },
    principal: executor('worker-r1'),
  });
  const renamed = `${wt.branch}-renamed`;
  git(wt.path, 'branch', '-m', wt.branch, renamed);
  const view = await h.client.renameBranch(ref, { executionSessionId: 'session-r1', epoch: 1, principal: executor('worker-r1'), from: wt.branch, to: renamed });
  expect(view.branch).toBe(renamed);

  const byOld = await getOwnership(h.pool, { branch: wt.branch, repoRoot });
  const byNew = await getOwnership(h.pool, { branch: renamed });
  expect(byOld?.ownershipId).toBe(bound.ownershipId);
  expect(byOld).toEqual(byNew);
  expect(byOld).toMatchObject({ branch: renamed, branchNames: [wt.branch, renamed], state: 'active' });
  const hist = await getHistory(h.pool, { branch: wt.branch, repoRoot });
  expect(hist.ownerships.map((o) => o.ownershipId)).toEqual([bound.ownershipId]);
  expect(hist.ownerships[0]!.events.at(-1)).toMatchObject({ type: 'ownership.branch_renamed', data: { from: wt.branch, to: renamed } });
  const names = await h.pool.query('SELECT branch, from_seq, to_seq FROM branch_names WHERE ownership_id = $1 ORDER BY from_seq', [bound.ownershipId]);
  expect(names.rows).toEqual([
    { branch: wt.branch, from_seq: 1, to_seq: 1 },
    { branch: renamed, from_seq: 2, to_seq: null },
  ]);
});

test('the event log refuses UPDATE and DELETE at the database, whoever asks', async () => {
  const any = await h.pool.query<{ id: string }>('SELECT ownership_id AS id FROM ownership_events LIMIT 1');
  const id = any.rows[0]!.id;
  await expect(h.pool.query("UPDATE ownership_events SET type = 'ownership.heartbeat' WHERE ownership_id = $1", [id])).rejects.toThrow(
    /append-only: UPDATE refused/,
  );
  await expect(h.pool.query('DELETE FROM ownership_events WHERE ownership_id = $1', [id])).rejects.toThrow(/append-only: DELETE refused/);
  await expect(h.pool.query('TRUNCATE ownership_events')).rejects.toThrow(/append-only: TRUNCATE refused/);
});

// --- list: 100,000 rows ------------------------------------------------------------------------

type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] };
function planNodes(n: PlanNode): PlanNode[] {
  return [n, ...(n.Plans ?? []).flatMap(planNodes)];
}
async function explain(q: { text: string; values: unknown[] }): Promise<PlanNode[]> {
  const res = await h.pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${q.text}`, q.values);
  return planNodes(res.rows[0]!['QUERY PLAN'][0].Plan);
}

describe('listOwnerships over 100,000 ownerships', () => {
  const PREFIX = `/list-bench-${ulid()}`;
  beforeAll(async () => {
    // Projection rows only (no events): this measures the read path, and is removed afterwards.
    const template = emptyRecord({ ownershipId: 'x', repoRoot: 'x', worktreePath: 'x', branch: 'x', hostId: 'bench' });
    await h.pool.query(
      `INSERT INTO ownerships (ownership_id, workflow_id, repo_root, worktree_path, branch, host_id, state, epoch, seq, updated_at, record)
       SELECT id, 'bench', repo, repo || '/wt-' || i, 'wt/' || i, 'bench', st, 1, 1, ts,
              $2::jsonb || jsonb_build_object('ownershipId', id, 'repoRoot', repo, 'worktreePath', repo || '/wt-' || i,
                                              'branch', 'wt/' || i, 'branchNames', jsonb_build_array('wt/' || i), 'state', st)
         FROM (SELECT i, 'own_BENCH' || lpad(i::text, 22, '0') AS id, $1 || '/repo-' || (i % 10) AS repo,
                      ($3::text[])[1 + (i / 10) % 7] AS st,
                      -- blocks of 210 share one instant: three rows of each (repo, state) tie, to exercise the tie-break
                      timestamptz '2001-01-01 00:00:00+00' + make_interval(secs => (100000 - i / 210) * 1.000001) AS ts
                 FROM generate_series(1, 100000) AS i) AS g`,
      [PREFIX, JSON.stringify(template), OWNERSHIP_STATES],
    );
    await h.pool.query('ANALYZE ownerships');
  });
  afterAll(async () => {
    await h.pool.query('DELETE FROM ownerships WHERE repo_root LIKE $1', [`${PREFIX}/%`]);
  });

  async function all(input: Parameters<typeof listOwnerships>[1]): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await listOwnerships(h.pool, { ...input, cursor });
      ids.push(...page.items.map((r) => r.ownershipId));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    return { ids, pages };
  }

  test('repoRoot + state: every row once, in (updated_at desc, ownership_id desc) order, across pages', async () => {
    const repoRoot = `${PREFIX}/repo-3`;
    const expected = await h.pool.query<{ id: string }>(
      "SELECT ownership_id AS id FROM ownerships WHERE repo_root = $1 AND state = 'active' ORDER BY updated_at DESC, ownership_id DESC",
      [repoRoot],
    );
    expect(expected.rows.length).toBeGreaterThan(1000);
    const got = await all({ repoRoot, state: 'active', limit: 500 });
    expect(got.ids).toEqual(expected.rows.map((r) => r.id));
    expect(got.pages).toBe(Math.ceil(expected.rows.length / 500));

    const several = await all({ repoRoot, state: ['stale', 'released'], limit: 137 });
    const expected2 = await h.pool.query<{ id: string }>(
      "SELECT ownership_id AS id FROM ownerships WHERE repo_root = $1 AND state IN ('stale', 'released') ORDER BY updated_at DESC, ownership_id DESC",
      [repoRoot],
    );
    expect(several.ids).toEqual(expected2.rows.map((r) => r.id));

    const first = await listOwnerships(h.pool, { repoRoot });
    expect(first.items).toHaveLength(50);
    expect(first.items.every((r) => r.repoRoot === repoRoot)).toBe(true);
  });

  test('index-only plans: no sequential scan of ownerships, first page or later, with or without filters', async () => {
    const repoRoot = `${PREFIX}/repo-5`;
    const page1 = await listOwnerships(h.pool, { repoRoot, state: 'active', limit: 100 });
    const cursor = page1.nextCursor!;
    const cases = [
      { repoRoot, state: 'active' as const, limit: 100 },
      { repoRoot, state: 'active' as const, limit: 100, cursor },
      { repoRoot, state: ['active', 'stale'] as ('active' | 'stale')[], limit: 500, cursor },
      { repoRoot },
      { state: 'landed' as const },
      {},
    ];
    for (const input of cases) {
      const nodes = await explain(buildListQuery(input));
      expect(nodes.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'ownerships')).toEqual([]);
    }
    const repoState = await explain(buildListQuery(cases[1]!));
    expect(repoState.some((n) => n['Index Name'] === 'ownerships_repo_state_idx')).toBe(true);
    // Speed itself is the bench's to measure (bench/), never a test's to assert: the plans above are the property.
  });
});

// --- rebuild: 1,000 synthetic ownerships ---------------------------------------------------------

/** A small generator of valid logs: the shapes the workflow emits, in orders the state machine allows. */
function syntheticLog(prefix: string, i: number): { workflowId: string; events: OwnershipEvent[] } {
  const ownershipId = `own_${ulid()}`;
  const repoRoot = `${prefix}/repo-${i % 20}`;
  const worktreePath = `${repoRoot}/.worktrees/wt-${i}`;
  let branch = `wt/s-${i}`;
  const t0 = Date.UTC(2025, 0, 1) + i * 60_000;
  const events: OwnershipEvent[] = [];
  const push = (type: OwnershipEvent['type'], data: OwnershipEvent['data'], actor: string | null = null) => {
    const seq = events.length + 1;
    events.push({
      ownershipId,
      seq,
      at: new Date(t0 + seq * 1000).toISOString(),
      actor: { executionSessionId: actor, principal: actor ? 'executor:e' : 'system:x' },
      repoRoot,
      worktreePath,
      branch,
      hostId: 'synth-host',
      type,
      data,
    } as OwnershipEvent);
  };
  const conv = (n: number) => {
    const id = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    return {
      provider: 'chatgpt-web' as const,
      conversationId: id,
      conversationUrl: `https://chatgpt.com/c/${id}`,
      title: `lane ${n}`,
      observedAt: new Date(t0).toISOString(),
    };
  };
  const owner = (s: string, withConv: boolean): Owner => ({
    executionSessionId: s,
    runtime: withConv ? 'chatgpt-web' : 'codex-cli',
    parentExecutionSessionId: null,
    conversation: withConv ? conv(i) : null,
    worker: { runId: `run-${i}`, workerId: `worker-${i}` },
    process: null,
  });
  const s = (n: number) => `syn-${i}-${n}`;
  const claimed = (o: Owner, epoch: number, via: 'bind' | 'handoff' | 'after_release', prev: string | null) =>
    push(
      'ownership.claimed',
      {
        owner: o,
        epoch,
        via,
        handoffId: via === 'handoff' ? `hof_${i}` : null,
        previousExecutionSessionId: prev,
        lane: via === 'bind' ? `lane-${i % 7}` : null,
        planRef: null,
        requestId: null,
      },
      o.executionSessionId,
    );

  const withConv = i % 3 !== 0;
  claimed(owner(s(1), withConv), 1, 'bind', null);
  let epoch = 1;
  let current = s(1);
  if (!withConv && i % 2 === 0) push('ownership.conversation_bound', { executionSessionId: current, conversation: conv(i) }, current);
  if (i % 4 === 1) push('ownership.plan_bound', { lane: `lane-x-${i}`, planRef: `docs/plans/${i}.md`, requestId: null }, current);
  if (i % 5 >= 2) {
    push(
      'ownership.handoff_started',
      {
        handoffId: `hof_${i}`,
        fromExecutionSessionId: current,
        toExecutionSessionId: s(2),
        reason: 'resume',
        expiresAt: new Date(t0 + 3_600_000).toISOString(),
      },
      current,
    );
    if (i % 5 === 2) push('ownership.handoff_cancelled', { handoffId: `hof_${i}`, reason: 'timeout' });
    else {
      claimed(owner(s(2), withConv), ++epoch, 'handoff', current);
      current = s(2);
    }
  }
  if (i % 6 === 3) {
    push('ownership.released', { executionSessionId: current, epoch, reason: null }, current);
    claimed(owner(s(3), withConv), ++epoch, 'after_release', current);
    current = s(3);
  }
  if (i % 7 === 4) {
    push('ownership.stale', { executionSessionId: current, epoch, verdict: 'dead', detail: null });
    push('ownership.wip_preserved', { executionSessionId: current, ref: `refs/overdeck/wip/${ownershipId}/1`, sha: 'a'.repeat(40) }, s(4));
    push(
      'ownership.reclaimed',
      {
        previousOwner: owner(current, withConv),
        owner: owner(s(4), withConv),
        epoch: ++epoch,
        forced: false,
        reason: null,
        principal: { kind: 'executor', id: 'e', workerId: `worker-${i}` },
      },
      s(4),
    );
    current = s(4);
  }
  if (i % 8 === 5) {
    const to = `wt/s-${i}-renamed`;
    const from = branch;
    branch = to;
    push('ownership.branch_renamed', { from, to }, current);
  }
  if (i % 3 === 1) {
    push('ownership.submitted', { executionSessionId: current, epoch, head: 'c'.repeat(40) }, current);
    const receipt = (head: string) => ({
      ownershipId,
      sourceBranch: branch,
      sourceHead: 'c'.repeat(40),
      landedBranch: 'main',
      landedHead: head,
      landedAt: new Date(t0 + 50_000).toISOString(),
      worktreePath,
      executionSessionId: current,
      worker: { runId: `run-${i}`, workerId: `worker-${i}` },
      conversation: withConv ? conv(i) : null,
    });
    push('ownership.landed', { receipt: receipt(i.toString(16).padStart(40, 'd')) });
    if (i % 9 === 1) push('ownership.landed', { receipt: receipt(i.toString(16).padStart(40, 'e')) });
    if (i % 2 === 1) push('ownership.worktree_removed', { reason: null });
  }
  return { workflowId: ownershipWorkflowId('synth-host', worktreePath), events };
}

describe('rebuildProjection', () => {
  const PREFIX = `/rebuild-synth-${ulid()}`;
  const snapshot = async () => ({
    ownerships: (await h.pool.query('SELECT * FROM ownerships WHERE repo_root LIKE $1 ORDER BY ownership_id', [`${PREFIX}/%`])).rows,
    receipts: (await h.pool.query('SELECT * FROM landing_receipts WHERE repo_root LIKE $1 ORDER BY ownership_id, landed_head', [`${PREFIX}/%`])).rows,
    names: (await h.pool.query('SELECT * FROM branch_names WHERE repo_root LIKE $1 ORDER BY ownership_id, from_seq', [`${PREFIX}/%`])).rows,
  });

  beforeAll(async () => {
    const logs = Array.from({ length: 1000 }, (_, i) => syntheticLog(PREFIX, i));
    // Through the live write path, in the way the workflow persists: some in one call, some event by event.
    for (let k = 0; k < logs.length; k += 10) {
      await Promise.all(
        logs.slice(k, k + 10).map(async ({ workflowId, events }, j) => {
          if ((k + j) % 2 === 0) await appendEvents(h.pool, workflowId, events);
          else for (const e of events) await appendEvents(h.pool, workflowId, [e]);
        }),
      );
    }
  });

  test('on 1,000 ownerships the rebuilt projection equals the live one, row for row', async () => {
    const live = await snapshot();
    expect(live.ownerships).toHaveLength(1000);
    expect(live.receipts.length).toBeGreaterThan(300);
    expect(live.names.length).toBeGreaterThan(1000);
    expect(await compareProjection(h.pool)).toEqual([]);

    await h.pool.query('DELETE FROM ownerships WHERE repo_root LIKE $1', [`${PREFIX}/%`]);
    await h.pool.query('DELETE FROM landing_receipts WHERE repo_root LIKE $1', [`${PREFIX}/%`]);
    await h.pool.query('DELETE FROM branch_names WHERE repo_root LIKE $1', [`${PREFIX}/%`]);
    const missing = (await compareProjection(h.pool)).filter((d) => live.ownerships.some((o) => o.ownership_id === d.ownershipId));
    expect(missing).toHaveLength(1000);
    expect(new Set(missing.map((d) => d.kind))).toEqual(new Set(['missing_row']));

    const result = await rebuildProjection(h.pool, { batchSize: 150 });
    expect(result.failures).toEqual([]);
    expect(result.ownerships).toBeGreaterThanOrEqual(1000);
    expect(result.batches).toBeGreaterThanOrEqual(7);
    const rebuilt = await snapshot();
    // Every column, updated_at and workflow_id included: list order and lookups are unchanged.
    expect(rebuilt).toEqual(live);
    expect(await compareProjection(h.pool)).toEqual([]);
  });

  test('compareProjection reports a drifted row and an unbacked one; a rebuild repairs both', async () => {
    const { rows } = await h.pool.query<{ id: string }>('SELECT ownership_id AS id FROM ownerships WHERE repo_root LIKE $1 ORDER BY ownership_id LIMIT 1', [
      `${PREFIX}/%`,
    ]);
    const id = rows[0]!.id;
    const before = await snapshot();
    await h.pool.query(`UPDATE ownerships SET state = 'forged', record = jsonb_set(record, '{state}', '"forged"') WHERE ownership_id = $1`, [id]);
    await h.pool.query("UPDATE branch_names SET branch = 'wt/forged' WHERE ownership_id = $1 AND from_seq = 1", [id]);
    const orphan = `own_${ulid()}`;
    await h.pool.query(
      `INSERT INTO ownerships (ownership_id, workflow_id, repo_root, worktree_path, branch, host_id, state, epoch, seq, updated_at, record)
       SELECT $1, workflow_id, repo_root, worktree_path || '-orphan', branch, host_id, state, epoch, seq, updated_at, record FROM ownerships WHERE ownership_id = $2`,
      [orphan, id],
    );
    const diffs = await compareProjection(h.pool);
    expect(diffs).toEqual(
      expect.arrayContaining([
        { ownershipId: id, kind: 'record', detail: expect.any(String) },
        { ownershipId: id, kind: 'columns', detail: 'state' },
        { ownershipId: id, kind: 'branch_names', detail: null },
        { ownershipId: orphan, kind: 'orphan_row', detail: 'ownerships' },
      ]),
    );
    expect(diffs).toHaveLength(4);
    expect(await compareProjection(h.pool, { ownershipId: id })).toHaveLength(3);

    const one = await rebuildProjection(h.pool, { ownershipId: id });
    expect(one).toMatchObject({ ownerships: 1, removed: 0, failures: [] });
    expect(await compareProjection(h.pool, { ownershipId: id })).toEqual([]);
    const all = await rebuildProjection(h.pool);
    expect(all.removed).toBe(1);
    expect(await compareProjection(h.pool)).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });
});

test('history survives deletion (cont.): once Temporal has deleted the execution, every lookup still answers fully', async () => {
  expect(landedScenario).not.toBeNull();
  await workflowGone(landedScenario!.workflowId, 150_000);
  await expectAnswersFully(landedScenario!);
}, 180_000);
