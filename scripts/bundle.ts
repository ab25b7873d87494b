/**
 * `npm run bundle`: the workflows bundled into the cache (src/infra/workflow-bundle-cache.ts) as
 * workers and the test stack load them, made now unless these sources were bundled before. `npm
 * test` runs it beside the type check, so the tests' stack finds the bundle made.
 */
import { writeWorkflowBundle } from '../stack/bundle';

writeWorkflowBundle((line) => process.stderr.write(`bundle: ${line}\n`)).then(
  ({ path, bytes, cached }) => process.stdout.write(`bundle: ${cached ? 'cached' : 'made'} ${path} (${(bytes / 2 ** 20).toFixed(1)} MiB)\n`),
  (err: unknown) => {
    process.stderr.write(`bundle: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
