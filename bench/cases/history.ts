import { execFileSync } from 'node:child_process';
import { temporal } from '@temporalio/proto';
import type { BenchContext } from '../context';
import { asTheApi, bindRequest, executor, type Worktree } from '../fixtures';
import { judge, type Row } from '../report';
import { bind as apiBind, heartbeat as apiHeartbeat } from '../../src/api/service/ownerships';
import { keyringOf } from '../../src/infra/payload-codec';

/**
 * 11. History events of the 5-step lifecycle a user sees most (bind and heartbeats through the API's
 * service, a forced reclaim, submit, land), counted by type over every run of the ownership: what each step costs
 * in the Temporal UI and in the server's storage. Goal: at most 40.
 */
export async function benchLifecycleHistory(ctx: BenchContext, wt: Worktree, heartbeats = 3): Promise<Row> {
  const { stack } = ctx;
  const req = bindRequest(wt, 9_999);
  // Through the API's service, as an orchestrator binds and heartbeats (MCP takes the same path).
  const api = { client: stack.ownership, temporal: stack.temporal, pool: stack.pool, keyring: () => keyringOf(stack.dataConverter)! };
  const view = await apiBind(api, req.principal, {
    repoRoot: req.repoRoot,
    worktreePath: req.worktreePath,
    branch: req.branch,
    executionSessionId: req.executionSessionId,
    runtime: req.runtime,
    lane: req.lane ?? null,
    planRef: req.planRef ?? null,
  });
  const ref = { workflowId: await stack.ownership.workflowIdOf({ worktreePath: wt.path, hostId: view.hostId }), ownershipId: view.ownershipId };
  for (let i = 0; i < heartbeats; i++) {
    await apiHeartbeat(api, req.principal, view.ownershipId, { executionSessionId: req.executionSessionId, epoch: view.epoch });
    await new Promise((r) => setTimeout(r, 50));
  }
  const reclaimed = await stack.ownership.reclaim(
    ref,
    {
      executionSessionId: 'bench-reclaimer',
      runtime: 'bench',
      worker: { workerId: 'bench-reclaim-worker', runId: null },
      principal: { kind: 'admin', id: 'bench-admin' },
      force: true,
      reason: 'bench lifecycle',
    },
    await asTheApi(stack.pool, 'bench-reclaim-worker'),
  );
  await stack.ownership.submit(ref, { executionSessionId: 'bench-reclaimer', epoch: reclaimed.epoch, principal: executor('bench-reclaim-worker') });
  const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: wt.path, encoding: 'utf8' }).trim();
  await stack.ownership.landed(ref, {
    sourceHead: head,
    landedBranch: 'main',
    landedHead: head,
    landedAt: new Date().toISOString(),
    principal: { kind: 'landing', id: 'bench-landing' },
  });
  // The landing is a signal: wait until the record shows it, so its events are in the history.
  for (let i = 0; i < 100; i++) {
    const v = await stack.ownership.projection(ref);
    if (v?.state === 'landed' && v.projectionSync.localSeq >= v.seq) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const byType: Record<string, number> = {};
  let total = 0;
  for await (const wf of stack.temporal.workflow.list({ query: `WorkflowId = '${ref.workflowId}'` })) {
    const history = await stack.temporal.workflow.getHandle(ref.workflowId, wf.runId).fetchHistory();
    for (const e of history.events ?? []) {
      const type = (temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? 'unknown').replace(/^EVENT_TYPE_/, '');
      byType[type] = (byType[type] ?? 0) + 1;
      total++;
    }
  }
  const goal = { on: 'absolute' as const, op: '<=' as const, value: 40 };
  return {
    id: 'lifecycle-history',
    name: `history events, 5-step lifecycle (bind, ${heartbeats} heartbeats, reclaim, submit, land)`,
    unit: 'events',
    ours: { p50: total, p99: null },
    base: null,
    baseLabel: 'none',
    ratio: null,
    goal,
    met: judge(goal, null, total),
    details: { byType },
  };
}
