#!/usr/bin/env node
// `npm run build` (also `prepack`): compiled JavaScript + declarations into dist/, which is what
// the package, the image and the `od-worktree` binary run. Plain JavaScript so that building
// needs nothing but node and the dev dependencies.
//   dist/worker.js, dist/src/**, dist/scripts/migrate.js   tsc -p tsconfig.build.json
//   dist/migrations/, dist/hooks/                          found next to the compiled code (store/db.ts, git/guard.ts)
//   dist/gate/od-gate.js                                   the gate program, bundled (scripts/build-gate.js)
//   dist/workflow-bundle.js                                the workflows bundled once, so a worker does not run webpack at start
// --out <dir> builds elsewhere (the bench builds into its temp dir, never over a working tree's dist/).
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const outArg = process.argv.indexOf('--out');
const out = path.resolve(outArg > 0 ? process.argv[outArg + 1] : path.join(root, 'dist'));
const started = Date.now();
const step = (what) => process.stderr.write(`build: ${what} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);

// A clean tree every time: a source that was deleted must not live on in the package.
fs.rmSync(out, { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json'), '--outDir', out], {
  stdio: 'inherit',
  cwd: root,
});
step('compiled');
for (const dir of ['migrations', 'hooks']) fs.cpSync(path.join(root, dir), path.join(out, dir), { recursive: true });
// The gate program as one bundle (bin/git-gate/od-gate.cjs loads dist/gate/od-gate.js in the package).
require('./build-gate.js').buildGate(root, path.join(out, 'gate'));
step('gate bundle');

async function bundle() {
  const { bundleWorkflowCode } = require('@temporalio/worker');
  const workers = require(path.join(out, 'src/infra/workers.js'));
  const quiet = () => undefined;
  const log = (m) => process.stderr.write(`build: bundler: ${m}\n`);
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(out, 'src/workflows/index.js'),
    ...(workers.WORKFLOW_PRELOAD_MODULES ? { preloadModules: [...workers.WORKFLOW_PRELOAD_MODULES] } : {}),
    logger: { trace: quiet, debug: quiet, info: quiet, warn: log, error: log, log: quiet },
  });
  fs.writeFileSync(path.join(out, 'workflow-bundle.js'), code);
  step(`workflow bundle ${(code.length / 2 ** 20).toFixed(1)} MiB`);
}

bundle().then(
  () => step(`done: ${path.relative(process.cwd(), out) || '.'}`),
  (err) => {
    process.stderr.write(`build: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
