import { statSync } from 'node:fs';
import { WORKFLOW_PRELOAD_MODULES, WORKFLOWS_PATH } from '../src/infra/workers';
import { cachedWorkflowBundle } from '../src/infra/workflow-bundle-cache';

/**
 * The workflows (the product's unless `workflowsPath` says) bundled as the workers load them: the
 * bundle of these sources in the cache (src/infra/workflow-bundle-cache.ts), made now if none is.
 */
export async function writeWorkflowBundle(
  log: (line: string) => void,
  workflowsPath = WORKFLOWS_PATH,
): Promise<{ path: string; bytes: number; cached: boolean }> {
  const { codePath, cached } = await cachedWorkflowBundle({ workflowsPath, preloadModules: WORKFLOW_PRELOAD_MODULES, log });
  return { path: codePath, bytes: statSync(codePath).size, cached };
}
