/**
 * `npm run compile`: the workflows bundled into the cache (src/infra/workflow-bundle-cache.ts) as
 * workers and the test stack load them, made now unless these sources were bundled before, and the
 * compiled tree (stack/compiled.ts) made from the sources beside that bundle. `npm test` runs it
 * beside the type check; its tests run the CLI and the services from the tree.
 */
import path from 'node:path';
import { writeWorkflowBundle } from '../stack/bundle';
import { COMPILED_DIR, writeCompiledTree } from '../stack/compiled';

async function main(): Promise<void> {
  const bundle = await writeWorkflowBundle((line) => process.stderr.write(`compile: bundler: ${line}\n`));
  process.stdout.write(`compile: bundle ${bundle.cached ? 'cached' : 'made'} ${bundle.path} (${(bundle.bytes / 2 ** 20).toFixed(1)} MiB)\n`);
  const started = Date.now();
  const { files } = writeCompiledTree(bundle.path);
  process.stdout.write(`compile: ${files} modules into ${path.relative(process.cwd(), COMPILED_DIR)} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`compile: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
