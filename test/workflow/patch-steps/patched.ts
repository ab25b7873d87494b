import { patched, sleep } from '@temporalio/workflow';

/** Step 1: the change (a second timer) behind patched(); a history without the marker takes the old path. */
export async function toyWorkflow(): Promise<string> {
  if (patched('toy-second-timer')) await sleep('2 minutes');
  await sleep('1 minute');
  return 'done';
}
