import { WithStartWorkflowOperation } from '@temporalio/client';
import type { BenchStack } from './stack';
import { floorUpdate, noopUpdate } from './workflows/noop';

/**
 * The baselines of a bind: a bare update-with-start of a new no-op workflow; with `floor`, the
 * floor of a claim (bench/workflows/noop.ts floorWorkflow), answered after one no-op activity.
 */
export async function noopUpdateWithStart(stack: BenchStack, workflowId: string, kind: 'noop' | 'floor' = 'noop'): Promise<void> {
  await stack.temporal.workflow.executeUpdateWithStart(kind === 'noop' ? noopUpdate : floorUpdate, {
    args: [1],
    startWorkflowOperation: new WithStartWorkflowOperation(kind === 'noop' ? 'noopWorkflow' : 'floorWorkflow', {
      workflowId,
      taskQueue: stack.taskQueue,
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
}
