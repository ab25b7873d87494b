import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_PRELOAD_MODULES, WORKFLOWS_PATH } from '../../src/infra/workers';

/**
 * The workflows bundled once per jest run, as the workers load them, into `dir`; named to the test
 * files in OD_TEST_WORKFLOW_BUNDLE. Once: the workflow tier and the stack tiers of one run share it.
 */
export async function bundleWorkflowsOnce(dir: string): Promise<string> {
  const existing = (globalThis as { __odBundle?: string }).__odBundle;
  if (existing) return existing;
  const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger, preloadModules: [...WORKFLOW_PRELOAD_MODULES] });
  const bundlePath = path.join(dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);
  (globalThis as { __odBundle?: string }).__odBundle = bundlePath;
  process.env.OD_TEST_WORKFLOW_BUNDLE = bundlePath;
  return bundlePath;
}

const quietLogger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (m: string) => process.stderr.write(`[bundle] ${m}\n`),
  error: (m: string) => process.stderr.write(`[bundle] ${m}\n`),
  log: () => undefined,
};
