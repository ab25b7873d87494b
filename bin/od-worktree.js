#!/usr/bin/env node
// The od-worktree CLI. The package (and the image) ship only the compiled code in dist/ and run
// it. In a source checkout (src/ beside dist/) the TypeScript sources run through tsx instead, so
// a dist/ left over from an earlier build never answers for edited sources; OD_WORKTREE_DIST=1
// runs dist/ there too (after `npm run build`).
'use strict';
const path = require('node:path');
const { existsSync } = require('node:fs');

// Node 22.1+ keeps V8's compiled code of the CLI's modules on disk between runs (a no-op on Node 20).
require('node:module').enableCompileCache?.();

const root = path.join(__dirname, '..');
const checkout = process.env.OD_WORKTREE_DIST !== '1' && existsSync(path.join(root, 'src', 'cli', 'main.ts'));
if (checkout) {
  require('tsx/cjs');
  require('../src/cli/main.ts');
} else {
  require('../dist/src/cli/main.js');
}
