import { WithStartWorkflowOperation } from '@temporalio/client';
import type { BenchStack } from './stack';
import { floorUpdate, localFloorUpdate, noopUpdate } from './workflows/noop';

/**
 * The baselines of a bind: a bare update-with-start of a new no-op workflow; with `floor`, the
 * floor of a claim (bench/workflows/noop.ts floorWorkflow), answered after one no-op activity;
 * with `localFloor`, after one no-op local activity (what a bind is made of, less its projection).
 */
const KINDS = {
  noop: { update: noopUpdate, workflow: 'noopWorkflow' },
  floor: { update: floorUpdate, workflow: 'floorWorkflow' },
  localFloor: { update: localFloorUpdate, workflow: 'localFloorWorkflow' },
} as const;

export async function noopUpdateWithStart(stack: BenchStack, workflowId: string, kind: keyof typeof KINDS = 'noop'): Promise<void> {
  await stack.temporal.workflow.executeUpdateWithStart(KINDS[kind].update, {
    args: [1],
    startWorkflowOperation: new WithStartWorkflowOperation(KINDS[kind].workflow, {
      workflowId,
      taskQueue: stack.taskQueue,
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
}
