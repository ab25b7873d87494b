import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { temporal } from '@temporalio/proto';
import { timeSkippingServerPath } from '../../src/infra/tools';

/**
 * The three steps of a change to workflow code (docs/workflow-versioning.md), on a toy workflow
 * that gains a timer: each step's code must replay the histories runs may still hold when it is
 * deployed, and the step taken too early must not. Histories are recorded on the time-skipping
 * test server from each step's own bundle (patch-steps/<step>.ts), then replayed without one.
 */

const STEPS = ['before', 'patched', 'deprecated', 'removed'] as const;
type Step = (typeof STEPS)[number];

const bundles = {} as Record<Step, string>;
const histories = {} as Record<Exclude<Step, 'removed'>, temporal.api.history.v1.IHistory>;

const quiet = { trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, log: () => undefined };

beforeAll(async () => {
  for (const step of STEPS)
    bundles[step] = (await bundleWorkflowCode({ workflowsPath: path.join(__dirname, 'patch-steps', `${step}.ts`), logger: quiet })).code;
  const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: timeSkippingServerPath() } } });
  try {
    for (const step of ['before', 'patched', 'deprecated'] as const) {
      const taskQueue = `patch-steps-${step}`;
      const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: { code: bundles[step] } });
      const handle = await env.client.workflow.start('toyWorkflow', { taskQueue, workflowId: `toy-${step}` });
      await worker.runUntil(handle.result());
      histories[step] = await handle.fetchHistory();
    }
  } finally {
    await env.teardown();
  }
}, 120_000);

/** The replay's error, or null: it replayed. */
async function replay(recordedAt: keyof typeof histories, code: Step): Promise<string | null> {
  try {
    await Worker.runReplayHistory({ workflowBundle: { code: bundles[code] } }, histories[recordedAt], `toy-${recordedAt}`);
    return null;
  } catch (err) {
    return err instanceof Error ? err.name : String(err);
  }
}

test('step 1, patched(): a run started before the change replays on the new code', async () => {
  expect(await replay('before', 'patched')).toBeNull();
});

test('step 2, deprecatePatch(): runs started at step 1 replay; one started before it would not (hence: none may be open)', async () => {
  expect(await replay('patched', 'deprecated')).toBeNull();
  expect(await replay('before', 'deprecated')).toBe('DeterminismViolationError');
});

test('step 3, removed: runs started at step 2 replay; one started at step 1 would not (hence: none may be open)', async () => {
  expect(await replay('deprecated', 'removed')).toBeNull();
  expect(await replay('patched', 'removed')).toBe('DeterminismViolationError');
  // The shortcut, from the release straight to the new code, is what the steps exist to avoid.
  expect(await replay('before', 'removed')).toBe('DeterminismViolationError');
});
