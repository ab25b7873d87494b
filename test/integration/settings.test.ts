import { defaultPayloadConverter } from '@temporalio/common';
import type { OwnershipWorkflowInput } from '../../src/workflows/ownership';
import { makeRepo } from '../support/git-fixture';
import { executorPrincipal, startHarness } from '../support/harness';

/**
 * Settings follow the configuration (src/domain/settings.ts): a lifecycle starts with its
 * starter's, and every continue-as-new takes the workflow worker's configuration again, so a
 * changed configuration reaches running ownerships at their next run. A tenure's lease and a
 * pending handoff's expiry are state, not settings, and do not move.
 */
test('a continue-as-new takes the worker configuration; the next handoff is offered with its timeout', async () => {
  const h = await startHarness({
    settings: { maxHistoryEvents: 40, handoffTimeoutMs: 600_000 },
    workerSettings: { maxHistoryEvents: 400, handoffTimeoutMs: 123_000 },
  });
  try {
    const wt = makeRepo(1).worktrees[0]!;
    const p = executorPrincipal('cfg-w');
    const ref = { worktreePath: wt.path };
    await h.client.bind({
      worktreePath: wt.path,
      branch: wt.branch,
      executionSessionId: 'cfg-a',
      runtime: 'codex-cli',
      worker: { workerId: 'cfg-w', runId: null },
      principal: p,
    });
    const workflowId = await h.client.workflowIdOf(ref);
    const handle = h.temporal.workflow.getHandle(workflowId);
    const firstRun = (await handle.describe()).runId;
    // An update that meets the drain is told to retry (unavailable), as a client honouring Retry-After would.
    const retrying = async <T>(call: () => Promise<T>): Promise<T> => {
      for (;;) {
        try {
          return await call();
        } catch (err) {
          if ((err as { code?: string }).code !== 'unavailable') throw err;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };
    for (let round = 0; round < 12; round++) {
      await retrying(() => h.client.bindPlan(ref, { executionSessionId: 'cfg-a', epoch: 1, principal: p, lane: `round-${round}` }));
    }
    // Past maxHistoryEvents (40) the run drains and continues as new.
    let secondRun = firstRun;
    for (let i = 0; i < 200 && secondRun === firstRun; i++) {
      await new Promise((r) => setTimeout(r, 100));
      secondRun = (await handle.describe()).runId;
    }
    expect(secondRun).not.toBe(firstRun);
    const started = (await h.temporal.workflow.getHandle(workflowId, secondRun).fetchHistory()).events![0]!.workflowExecutionStartedEventAttributes!;
    const input = defaultPayloadConverter.fromPayload<OwnershipWorkflowInput>(started.input!.payloads![0]!);
    expect(input.settings).toMatchObject({ maxHistoryEvents: 400, handoffTimeoutMs: 123_000 });
    const offered = await retrying(() =>
      h.client.handoff(ref, { executionSessionId: 'cfg-a', epoch: 1, principal: p, toExecutionSessionId: 'cfg-b', toWorkerId: 'cfg-w' }),
    );
    expect(Date.parse(offered.handoff!.expiresAt) - Date.parse(offered.handoff!.startedAt)).toBe(123_000);
  } finally {
    await h.shutdown();
  }
});
