import { deprecatePatch, sleep } from '@temporalio/workflow';

/** Step 2: no open run predates the change; only the new path is left, the marker still written. */
export async function toyWorkflow(): Promise<string> {
  deprecatePatch('toy-second-timer');
  await sleep('2 minutes');
  await sleep('1 minute');
  return 'done';
}
