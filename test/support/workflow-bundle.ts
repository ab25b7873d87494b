import { writeWorkflowBundle } from '../../stack/bundle';

/**
 * The workflows bundled as the workers load them, once per jest run (from the bundle cache when
 * these sources were bundled before: src/infra/workflow-bundle-cache.ts), named to the test files
 * in OD_TEST_WORKFLOW_BUNDLE. The service processes a test starts find the same bundle in the cache.
 */
export async function bundleWorkflowsOnce(): Promise<string> {
  const existing = (globalThis as { __odBundle?: string }).__odBundle;
  if (existing) return existing;
  const { path } = await writeWorkflowBundle((m) => process.stderr.write(`[bundle] ${m}\n`));
  (globalThis as { __odBundle?: string }).__odBundle = path;
  process.env.OD_TEST_WORKFLOW_BUNDLE = path;
  return path;
}
