import { execFileSync } from 'node:child_process';
import { OwnershipError } from '../../src/client';
import { project } from '../../src/domain/projection';
import { temporalCliPath } from '../../src/infra/tools';
import { readEvents } from '../../src/store/event-store';
import { makeRepo } from '../support/git-fixture';
import { executorPrincipal as executor, startHarness, type Harness } from '../support/harness';

/**
 * Ownership at scale on the real stack: a race of claims, continue-as-new under a stream of
 * heartbeats, and the search attributes.
 *
 * OD_SCALE_HEARTBEATS sets the heartbeat count. The CI default (4,000) crosses continue-as-new
 * several times at maxHistoryEvents 400 (the test asserts at least 3 runs); the long mode is
 * `OD_SCALE_HEARTBEATS=20000 npx jest test/integration/ownership-scale.test.ts`.
 *
 * Why 400: the client sends one signal for the heartbeats of one tenure in flight together, so four
 * at a time are about 1,000 signals, each at least one history event (more when its workflow task is
 * not shared with the next one's). At 1,000 events a run, how many runs that made depended on how
 * the tasks happened to batch (2 runs of 1,054 and 717 events in one fresh-clone run); at 400 even
 * the fewest events (one per signal) make three.
 */
const HEARTBEATS = Number(process.env.OD_SCALE_HEARTBEATS ?? 4_000);
/** Runs the heartbeats must spread over: continue-as-new happened, and more than once. */
const MIN_RUNS = 3;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ settings: { maxHistoryEvents: 400, heartbeatLogIntervalMs: 60 * 60_000 } });
});
afterAll(async () => h?.shutdown());

async function inBatches<T>(items: T[], size: number, fn: (t: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

test('200 concurrent claims by 10 sessions on 20 worktrees: exactly one owner each, every loser refused with a reason, events gap-free', async () => {
  const repos = [makeRepo(10), makeRepo(10)];
  const worktrees = repos.flatMap((r) => r.worktrees.map((w) => ({ repoRoot: r.repoRoot, ...w })));
  const sessions = Array.from({ length: 10 }, (_, i) => `race-session-${i}`);
  const attempts = worktrees.flatMap((wt) => sessions.map((s) => ({ wt, s })));
  const outcomes = await Promise.all(
    attempts.map(async ({ wt, s }) => {
      const worker = `race-worker-${s.slice(-1)}`;
      try {
        const v = await h.client.bind({
          repoRoot: wt.repoRoot,
          worktreePath: wt.path,
          branch: wt.branch,
          executionSessionId: s,
          runtime: 'codex-cli',
          worker: { runId: null, workerId: worker },
          principal: executor(worker),
        });
        return { wt: wt.path, s, won: v.owner!.executionSessionId === s, ownershipId: v.ownershipId, code: null as string | null };
      } catch (err) {
        if (!(err instanceof OwnershipError)) throw err;
        return { wt: wt.path, s, won: false, ownershipId: null, code: err.code };
      }
    }),
  );
  expect(outcomes).toHaveLength(200);
  for (const wt of worktrees) {
    const mine = outcomes.filter((o) => o.wt === wt.path);
    const winners = mine.filter((o) => o.won);
    expect(winners).toHaveLength(1);
    for (const loser of mine.filter((o) => !o.won)) expect(loser.code).toBe('worktree_owned');
    const view = await h.client.projection({ repoRoot: wt.repoRoot, worktreePath: wt.path });
    expect(view!.owner!.executionSessionId).toBe(winners[0].s);
    const events = await readEvents(h.pool, view!.ownershipId);
    expect(events.map((e) => e.seq)).toEqual([1]);
    const { liveness: _l, projectionSync: _p, projection: _pr, ...record } = view!;
    expect(project(events)).toEqual(record);
  }
});

test(`${HEARTBEATS.toLocaleString('en-US')} heartbeats: every run stays below 4,096 history events and no state is lost across continue-as-new (${MIN_RUNS} runs or more)`, async () => {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0];
  const ref = { repoRoot: repo.repoRoot, worktreePath: wt.path };
  const bound = await h.client.bind({
    repoRoot: repo.repoRoot,
    worktreePath: wt.path,
    branch: wt.branch,
    executionSessionId: 'hb-session',
    runtime: 'codex-cli',
    worker: { runId: null, workerId: 'hb-worker' },
    principal: executor('hb-worker'),
    lane: 'heartbeat-lane',
    // This test is about continue-as-new, not the lease: on 2 busy cores a workflow task can wait
    // past a 60 s lease, and the lapse then revives the owner with an event of its own.
    leaseTtlMs: 3_600_000,
  });
  const planned = await h.client.bindPlan(ref, { executionSessionId: 'hb-session', epoch: 1, principal: executor('hb-worker'), planRef: 'docs/hb.md' });
  // Four in flight, as a handful of API processes relaying one owner's heartbeats would be. (A burst of
  // hundreds in flight to one workflow starves continue-as-new until Temporal's per-run signal cap
  // refuses signals; the client reports that as `unavailable`.)
  const beats = Array.from({ length: HEARTBEATS }, (_, i) => i);
  await inBatches(beats, 4, () => h.client.heartbeat(ref, { executionSessionId: 'hb-session', epoch: 1 }));

  // State survived every continue-as-new: owner, epoch, plan, seq, and the owner can still act.
  const after = await h.client.projection(ref);
  expect(after!.ownershipId).toBe(bound.ownershipId);
  expect(after!.owner!.executionSessionId).toBe('hb-session');
  expect(after!.epoch).toBe(1);
  expect(after!.planRef).toBe('docs/hb.md');
  expect(after!.lane).toBe('heartbeat-lane');
  expect(after!.seq).toBe(planned.seq);
  const released = await h.client.release(ref, { executionSessionId: 'hb-session', epoch: 1, principal: executor('hb-worker') });
  expect(released.state).toBe('released');

  const workflowId = await h.client.workflowIdOf(ref);
  // Every run, walked back from the latest through the run each one continued (not the visibility
  // list, which may not show the newest run yet).
  const lengths: number[] = [];
  let runId: string | undefined = (await h.temporal.workflow.getHandle(workflowId).describe()).runId;
  while (runId) {
    const history = await h.temporal.workflow.getHandle(workflowId, runId).fetchHistory();
    lengths.push(history.events!.length);
    runId = history.events![0]!.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  process.stderr.write(`[ownership-scale] ${HEARTBEATS} heartbeats over ${lengths.length} runs of ${lengths.reverse().join(', ')} history events\n`);
  expect(lengths.length).toBeGreaterThanOrEqual(MIN_RUNS);
  expect(lengths.filter((n) => n >= 4_096)).toEqual([]);
  const events = await readEvents(h.pool, bound.ownershipId);
  const { liveness: _l, projectionSync: _p, projection: _pr, ...record } = (await h.client.projection(ref))!;
  expect(project(events)).toEqual(record);
}, 400_000);

test('`temporal workflow list --query OwnershipBranch=...` finds the ownership', async () => {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0];
  const branch = `wt/sa-${Math.random().toString(36).slice(2, 8)}`;
  execFileSync('git', ['-C', wt.path, 'branch', '-m', branch]);
  const view = await h.client.bind({
    repoRoot: repo.repoRoot,
    worktreePath: wt.path,
    branch,
    executionSessionId: 'sa-session',
    runtime: 'codex-cli',
    worker: { runId: null, workerId: 'sa-worker' },
    principal: executor('sa-worker'),
  });
  const workflowId = await h.client.workflowIdOf({ repoRoot: repo.repoRoot, worktreePath: wt.path });
  // Visibility is eventually consistent; poll briefly.
  let out = '';
  for (let i = 0; i < 50 && !out.includes(workflowId); i++) {
    out = execFileSync(
      temporalCliPath(),
      ['workflow', 'list', '--address', process.env.TEMPORAL_ADDRESS!, '--query', `OwnershipBranch='${branch}'`, '--output', 'json'],
      { encoding: 'utf8' },
    );
    if (!out.includes(workflowId)) await new Promise((r) => setTimeout(r, 200));
  }
  expect(out).toContain(workflowId);
  const byId = execFileSync(
    temporalCliPath(),
    [
      'workflow',
      'list',
      '--address',
      process.env.TEMPORAL_ADDRESS!,
      '--query',
      `OwnershipId='${view.ownershipId}' AND OwnershipState='active'`,
      '--output',
      'json',
    ],
    {
      encoding: 'utf8',
    },
  );
  expect(byId).toContain(workflowId);
});
