import { WithStartWorkflowOperation } from '@temporalio/client';
import type { BenchStack } from './stack';
import { noopUpdate, type noopWorkflow } from './workflows/noop';

/** The baseline of a bind: a bare update-with-start of a new no-op workflow. */
export async function noopUpdateWithStart(stack: BenchStack, workflowId: string): Promise<void> {
  await stack.temporal.workflow.executeUpdateWithStart(noopUpdate, {
    args: [1],
    startWorkflowOperation: new WithStartWorkflowOperation<typeof noopWorkflow>('noopWorkflow', {
      workflowId,
      taskQueue: stack.taskQueue,
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
}
