#!/usr/bin/env node
// The od-worktree CLI. The package (and the image) ship only the compiled code in dist/ and run
// it. In a source checkout (src/ beside dist/) the TypeScript sources run through tsx instead, so
// a dist/ left over from an earlier build never answers for edited sources; OD_WORKTREE_DIST=1
// runs dist/ there too (after `npm run build`), and OD_WORKTREE_DIST=<path> (relative to the
// checkout) another tree laid out as dist/ (`npm run compile`'s .data/compiled, which `npm test` uses).
'use strict';
const path = require('node:path');
const { existsSync } = require('node:fs');

// Node 22.1+ keeps V8's compiled code of the CLI's modules on disk between runs (a no-op on Node 20).
require('node:module').enableCompileCache?.();

const root = path.join(__dirname, '..');
const dist = process.env.OD_WORKTREE_DIST;
if (!existsSync(path.join(root, 'src', 'cli', 'main.ts')) || dist === '1') {
  require('../dist/src/cli/main.js');
} else if (dist) {
  const main = path.resolve(root, dist, 'src', 'cli', 'main.js');
  if (!existsSync(main)) {
    process.stderr.write(
      `od-worktree: OD_WORKTREE_DIST names ${path.resolve(root, dist)}, which holds no compiled CLI (npm run compile makes one); unset it to run the sources\n`,
    );
    process.exit(2);
  }
  require(main);
} else {
  require('tsx/cjs');
  require('../src/cli/main.ts');
}
