import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_PRELOAD_MODULES, WORKFLOWS_PATH } from '../src/infra/workers';

/** The bundler's logger: its warnings and errors only, through `write`. */
const quietBundleLoggerTo = (write: (line: string) => void) => ({
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (m: string) => write(`bundle: ${m}`),
  error: (m: string) => write(`bundle: ${m}`),
  log: () => undefined,
});

/** The workflows (the product's unless `workflowsPath` says) bundled as the workers load them, written to `<dir>/workflow-bundle.js`. */
export async function writeWorkflowBundle(dir: string, log: (line: string) => void, workflowsPath = WORKFLOWS_PATH): Promise<{ path: string; bytes: number }> {
  const bundle = await bundleWorkflowCode({ workflowsPath, logger: quietBundleLoggerTo(log), preloadModules: [...WORKFLOW_PRELOAD_MODULES] });
  const file = path.join(dir, 'workflow-bundle.js');
  writeFileSync(file, bundle.code);
  return { path: file, bytes: bundle.code.length };
}
