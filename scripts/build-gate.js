// The gate program as one bundle (src/gate/main.ts and the sources it imports; packages stay
// external, loaded from node_modules): `npm run build` makes dist/gate/od-gate.js, and
// bin/git-gate/od-gate.cjs makes .data/gate/od-gate.js in a source checkout. Written under a
// temporary name and renamed, so that two gates starting at once never load half a file.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

function buildGate(root, outDir) {
  const esbuild = require('esbuild');
  fs.mkdirSync(outDir, { recursive: true });
  const tmp = path.join(outDir, `od-gate.js.${process.pid}.tmp`);
  const result = esbuild.buildSync({
    entryPoints: [path.join(root, 'src/gate/main.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    packages: 'external',
    outfile: tmp,
    metafile: true,
    logLevel: 'error',
    absWorkingDir: root,
  });
  const inputs = Object.keys(result.metafile.inputs).filter((f) => !f.includes('node_modules'));
  fs.writeFileSync(`${tmp}.inputs`, JSON.stringify(inputs));
  fs.renameSync(`${tmp}.inputs`, path.join(outDir, 'od-gate.inputs.json'));
  fs.renameSync(tmp, path.join(outDir, 'od-gate.js'));
}

module.exports = { buildGate };
