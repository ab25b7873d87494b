// @ts-check
'use strict';
/**
 * `depcruise <roots> --config <config> --output-type json` and `... --output-type err` in each of the
 * given scratch trees, through the function the `depcruise` command itself runs (its bin parses
 * the flags into these options and calls it), all in one process: node, dependency-cruiser and
 * TypeScript load once for every tree instead of twice per tree (layers.test.ts).
 *
 *   node layers-cruise.cjs <config> <dir>...
 *
 * The roots are those of `npm run lint:deps` (package.json) that the tree has: src/, and the kits
 * (scripts/, worker.ts, bench/, ...) where a case plants them.
 *
 * Prints one JSON array, in the order of the dirs: { code, json } per tree, `code` the exit code
 * of the err reporter (the one `npm run lint:deps` goes by), `json` the JSON reporter's output.
 */
const fs = require('node:fs');
const path = require('node:path');

const CLI = path.resolve(__dirname, '../../node_modules/dependency-cruiser/src/cli/index.mjs');

/** The paths `npm run lint:deps` cruises: the words between `depcruise` and its first flag. */
function lintRoots() {
  const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8'));
  const words = String(pkg.scripts['lint:deps']).split(/\s+/);
  const from = words.indexOf('depcruise') + 1;
  const to = words.findIndex((w, i) => i >= from && w.startsWith('-'));
  return words.slice(from, to);
}

async function main() {
  const [config, ...dirs] = process.argv.slice(2);
  const { default: depcruise } = await import(CLI);
  // What the bin's option parser makes of `src --config <config> --output-type <type>` (its defaults included).
  const options = (/** @type {string} */ outputType, /** @type {string} */ outputTo) => ({ config, outputType, outputTo, metrics: false, focusDepth: 1 });
  const roots = lintRoots();
  const results = [];
  for (const dir of dirs) {
    process.chdir(dir);
    const jsonFile = path.join(dir, 'cruise.json');
    const planted = roots.filter((r) => fs.existsSync(path.join(dir, r)));
    await depcruise(planted, options('json', jsonFile));
    const code = await depcruise(planted, options('err', path.join(dir, 'cruise.err')));
    results.push({ code, json: fs.readFileSync(jsonFile, 'utf8') });
  }
  process.stdout.write(JSON.stringify(results));
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
