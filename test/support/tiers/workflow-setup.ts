import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assertCompiledTreeCurrent } from '../compiled-tree';
import guardSetup from '../guard-setup';
import { bundleWorkflowsOnce } from '../workflow-bundle';
import { startStackOnce } from './stack-setup';

const g = globalThis as { __odWorkflowTmp?: string };

/**
 * The workflow tier: the workflows bundled once (test/workflow/ runs them on the time-skipping test
 * server each file starts, and replays the recorded histories without a server). No stack, except
 * to record new histories (OD_RECORD_HISTORIES, test/workflow/replay.test.ts), which runs the
 * scenarios on the real one.
 */
export default async function workflowSetup(): Promise<void> {
  assertCompiledTreeCurrent();
  guardSetup();
  if (process.env.OD_RECORD_HISTORIES) return startStackOnce();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'od-workflow-'));
  g.__odWorkflowTmp = tmp;
  process.env.OD_TEST_TMP ??= tmp;
  await bundleWorkflowsOnce();
}
