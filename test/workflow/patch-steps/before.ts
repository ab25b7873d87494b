import { sleep } from '@temporalio/workflow';

/** The toy workflow as released: one timer. (docs/workflow-versioning.md, test/workflow/patch-steps.test.ts) */
export async function toyWorkflow(): Promise<string> {
  await sleep('1 minute');
  return 'done';
}
