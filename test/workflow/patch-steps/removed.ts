import { sleep } from '@temporalio/workflow';

/** Step 3: no open run carries the marker as patched() wrote it; the call is gone. */
export async function toyWorkflow(): Promise<string> {
  await sleep('2 minutes');
  await sleep('1 minute');
  return 'done';
}
