import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { transformFileSync } from '@swc/core';
import { PROJECT_ROOT } from '../src/infra/tools';
import { filesUnder } from '../src/infra/tree-files';

/**
 * The compiled tree: the sources transpiled to JavaScript (swc, no type check: `npm run typecheck`
 * does that) and laid out as `npm run build` lays out dist/ (worker.js, src/**, migrations/,
 * workflow-bundle.js), without declarations. A CLI call or a service started from it skips tsx's
 * loader: `od-worktree history` takes about 0.10 s of CPU compiled where it takes 0.26 s through
 * tsx, a worker's modules 0.5 s where they take 1.2 s, and a test run makes hundreds of such calls.
 *
 * OD_WORKTREE_DIST names the tree a checkout runs instead of its sources: `1` for dist/, a path
 * (relative to the checkout) for another tree. bin/od-worktree.js reads it for the CLI and
 * serviceProcess() for the services; `npm test` points it at this tree once `npm run compile` (in
 * the checks) has made it, and the test setups refuse a tree older than the sources.
 */
export const COMPILED_DIR = path.join(PROJECT_ROOT, '.data', 'compiled');

const STAMP = 'sources.sha256';

/** The tree OD_WORKTREE_DIST names, or null when the sources run. */
export function compiledDirOf(env: NodeJS.ProcessEnv = process.env): string | null {
  const v = env.OD_WORKTREE_DIST;
  if (!v) return null;
  return v === '1' ? path.join(PROJECT_ROOT, 'dist') : path.resolve(PROJECT_ROOT, v);
}

/**
 * The command that runs `entry` (a `.ts` path relative to the checkout, as `worker.ts`): its
 * compiled `.js` in the tree OD_WORKTREE_DIST names, else the source through tsx's loader in
 * the same process (the tsx command would add a parent process that only relays signals).
 */
export function entryCommand(entry: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): string[] {
  const dir = compiledDirOf(env);
  if (dir) return [process.execPath, path.join(dir, entry.replace(/\.ts$/, '.js')), ...args];
  return [process.execPath, '--import', 'tsx', entry, ...args];
}

/** What the tree is made of, hashed: every file under src/, and worker.ts. */
export function sourcesStamp(root = PROJECT_ROOT): string {
  const h = createHash('sha256');
  for (const file of [...filesUnder(path.join(root, 'src')), path.join(root, 'worker.ts')])
    h.update(`${path.relative(root, file)}\0`)
      .update(readFileSync(file))
      .update('\0');
  return h.digest('hex');
}

/** Why the tree at `dir` cannot stand in for the sources, or null when it was made from them as they are. */
export function compiledTreeProblem(dir: string): string | null {
  const stamp = path.join(dir, STAMP);
  if (!existsSync(stamp)) return `${dir} holds no compiled tree (npm run compile makes it)`;
  if (readFileSync(stamp, 'utf8').trim() !== sourcesStamp()) return `${dir} was compiled from other sources than these (npm run compile makes it again)`;
  return null;
}

/**
 * Makes the tree at `dir` from the sources, beside `bundlePath` (the workflows bundled from these
 * sources, so a compiled worker runs the same bundle as one run from source). Built aside and
 * renamed into place: a tree is whole or absent.
 */
export function writeCompiledTree(bundlePath: string, dir = COMPILED_DIR): { files: number } {
  const stamp = sourcesStamp();
  const tmp = `${dir}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  const sources = [
    ...filesUnder(path.join(PROJECT_ROOT, 'src')).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')),
    path.join(PROJECT_ROOT, 'worker.ts'),
  ];
  for (const file of sources) {
    const { code } = transformFileSync(file, {
      jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
      module: { type: 'commonjs' },
      sourceMaps: false,
      swcrc: false,
    });
    const out = path.join(tmp, path.relative(PROJECT_ROOT, file)).replace(/\.ts$/, '.js');
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, code);
  }
  // store/db.ts finds migrations/ two levels up, as in dist/; hooks/ and bin/git-gate are found by walking up.
  symlinkSync(path.join(PROJECT_ROOT, 'migrations'), path.join(tmp, 'migrations'));
  copyFileSync(bundlePath, path.join(tmp, 'workflow-bundle.js'));
  writeFileSync(path.join(tmp, STAMP), `${stamp}\n`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.dirname(dir), { recursive: true });
  renameSync(tmp, dir);
  return { files: sources.length };
}
