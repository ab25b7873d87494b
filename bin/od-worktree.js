#!/usr/bin/env node
// The od-worktree CLI: TypeScript sources run through tsx's require hook (no build step).
require('tsx/cjs');
require('../src/cli/main.ts');
