import { rmSync } from 'node:fs';
import { stopStackOnce } from './stack-teardown';

const g = globalThis as { __odWorkflowTmp?: string };

export default async function workflowTeardown(): Promise<void> {
  await stopStackOnce();
  if (g.__odWorkflowTmp && !process.env.OD_KEEP_TEST_TMP) rmSync(g.__odWorkflowTmp, { recursive: true, force: true });
}
