#!/usr/bin/env node
// `npm run checks`: the npm scripts that must pass before the tests, side by side instead of one
// after another (on two cores they take about half the time): the pinned tooling and then
// shellcheck over every shell file (lint:shell needs the shellcheck that setup installs, so the
// two run in one lane, in that order), the type check, lint with the import rule, Prettier's
// check of the whole repository, and `npm run compile` (the workflow bundle the test stack loads,
// made into its cache, and the compiled tree the tests run the CLI and the services from). Each
// one's output is held and printed whole when it ends, so two never interleave; the exit code is
// non-zero when any failed, and the failing ones are named last.
'use strict';
const { Buffer } = require('node:buffer');
const { spawn } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
/** Lanes run side by side; the scripts of one lane one after another, a lane stopping at its first failure. */
const LANES = [['setup', 'lint:shell'], ['typecheck'], ['lint'], ['format:check'], ['compile']];

function run(script) {
  const started = Date.now();
  return new Promise((resolve) => {
    const chunks = [];
    const child = spawn('npm', ['run', '--silent', script], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('error', (err) => chunks.push(Buffer.from(`${err.message}\n`)));
    child.on('close', (code, signal) => {
      const ok = code === 0;
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const out = Buffer.concat(chunks).toString().trimEnd();
      process.stdout.write(`checks: ${script} ${ok ? 'ok' : `FAILED (${signal ?? `exit ${code}`})`} in ${seconds} s\n${out ? `${out}\n` : ''}`);
      resolve({ script, ok });
    });
  });
}

async function lane(scripts) {
  const results = [];
  for (const script of scripts) {
    if (results.some((r) => !r.ok)) {
      process.stdout.write(`checks: ${script} not run (an earlier step of its lane failed)\n`);
      results.push({ script, ok: false });
      continue;
    }
    results.push(await run(script));
  }
  return results;
}

Promise.all(LANES.map(lane)).then((lanes) => {
  const results = lanes.flat();
  const failed = results.filter((r) => !r.ok).map((r) => r.script);
  if (failed.length > 0) {
    process.stdout.write(`checks: failed: ${failed.join(', ')}\n`);
    process.exitCode = 1;
  }
});
