import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compiledDirOf, compiledTreeProblem, entryCommand, writeCompiledTree } from '../../stack/compiled';

/**
 * The compiled tree `npm test` runs the CLI and the services from (stack/compiled.ts): made from
 * the sources, it runs as they would; made from other sources, the tiers' setups refuse it.
 */
const ROOT = path.resolve(__dirname, '../..');
let tmp: string;
let tree: string;

beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'od-compiled-'));
  const bundle = path.join(tmp, 'bundle.js');
  writeFileSync(bundle, '// a bundle\n');
  tree = path.join(tmp, 'tree');
  writeCompiledTree(bundle, tree);
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

test('a tree made from these sources stands in for them: the CLI runs from it, with the bundle beside it', () => {
  expect(compiledTreeProblem(tree)).toBeNull();
  expect(readFileSync(path.join(tree, 'workflow-bundle.js'), 'utf8')).toBe('// a bundle\n');
  const version = execFileSync(process.execPath, [path.join(ROOT, 'bin/od-worktree.js'), '--version'], {
    env: { ...process.env, OD_WORKTREE_DIST: tree },
    encoding: 'utf8',
  });
  expect(version.trim()).toBe((JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version);
});

test('a tree whose stamp names other sources, or no tree at all, is refused with what to run', () => {
  writeFileSync(path.join(tree, 'sources.sha256'), 'other\n');
  expect(compiledTreeProblem(tree)).toMatch(/compiled from other sources than these \(npm run compile/);
  expect(compiledTreeProblem(path.join(tmp, 'none'))).toMatch(/holds no compiled tree \(npm run compile makes it\)/);
});

test('the CLI named a tree that holds none says so and exits 2, instead of a stack trace', () => {
  let err: { status?: number; stderr?: string } = {};
  try {
    execFileSync(process.execPath, [path.join(ROOT, 'bin/od-worktree.js'), '--version'], {
      env: { ...process.env, OD_WORKTREE_DIST: path.join(tmp, 'none') },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (e) {
    err = e as typeof err;
  }
  expect(err.status).toBe(2);
  expect(err.stderr).toMatch(/OD_WORKTREE_DIST names .*none, which holds no compiled CLI/);
});

test('OD_WORKTREE_DIST picks the command a service starts with: the compiled entry, else the source through tsx', () => {
  expect(compiledDirOf({})).toBeNull();
  expect(compiledDirOf({ OD_WORKTREE_DIST: '1' })).toBe(path.join(ROOT, 'dist'));
  expect(entryCommand('worker.ts', ['--host-agent'], { OD_WORKTREE_DIST: '.data/compiled' })).toEqual([
    process.execPath,
    path.join(ROOT, '.data/compiled/worker.js'),
    '--host-agent',
  ]);
  expect(entryCommand('src/server/main.ts', [], {})).toEqual([process.execPath, '--import', 'tsx', 'src/server/main.ts']);
});
