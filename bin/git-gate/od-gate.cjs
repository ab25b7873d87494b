// The gate program's loader, started by the shims (bin/git-gate/git, hooks/pretooluse-git-gate.sh)
// as `node od-gate.cjs <mode> ...`. The package runs the bundle `npm run build` made
// (dist/gate/od-gate.js). A source checkout runs a bundle of src/gate/main.ts made into
// .data/gate/ by esbuild and remade when a source it was made from is newer: one file to load,
// which is what keeps node's start the only real cost of the slow path. Not executable: this
// directory is first on the agent's PATH.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');
const entry = path.join(root, 'src/gate/main.ts');

function fresh(bundle, inputsFile) {
  let built;
  try {
    built = fs.statSync(bundle).mtimeMs;
  } catch {
    return false;
  }
  let inputs;
  try {
    inputs = JSON.parse(fs.readFileSync(inputsFile, 'utf8'));
  } catch {
    return false;
  }
  return inputs.every((f) => {
    try {
      return fs.statSync(path.join(root, f)).mtimeMs <= built;
    } catch {
      return false;
    }
  });
}

function bundled() {
  if (!fs.existsSync(entry)) return path.join(root, 'dist/gate/od-gate.js');
  const dir = path.join(root, '.data/gate');
  const bundle = path.join(dir, 'od-gate.js');
  const inputsFile = path.join(dir, 'od-gate.inputs.json');
  if (fresh(bundle, inputsFile)) return bundle;
  const { buildGate } = require(path.join(root, 'scripts/build-gate.js'));
  buildGate(root, dir);
  return bundle;
}

require(bundled());
