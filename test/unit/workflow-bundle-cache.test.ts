import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleKey, cachedWorkflowBundle } from '../../src/infra/workflow-bundle-cache';

/**
 * The bundle cache answers only for the very sources it was made of: any edit under src/ (or the
 * entry's own folder), a new lock file or another preload list names another bundle. Whether
 * webpack's bundle runs is the workflow tier's and the stack's business; here only the naming.
 */
let root: string;
const entry = () => path.join(root, 'src', 'workflows', 'index.ts');
const req = (over: Partial<Parameters<typeof bundleKey>[0]> = {}) => ({
  workflowsPath: entry(),
  preloadModules: [path.join(root, 'src', 'domain', 'a')],
  projectRoot: root,
  ...over,
});
const write = (rel: string, text: string) => {
  mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  writeFileSync(path.join(root, rel), text);
};

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'od-bundle-key-'));
  write('src/workflows/index.ts', 'export * from "./ownership";\n');
  write('src/workflows/ownership.ts', 'export const w = 1;\n');
  write('src/domain/a.ts', 'export const a = 1;\n');
  write('package-lock.json', '{"lockfileVersion":3}\n');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

test('the same sources name the same bundle', () => {
  expect(bundleKey(req())).toBe(bundleKey(req()));
});

test('an edit of any file under src/, even outside the workflows, names another bundle', () => {
  const before = bundleKey(req());
  write('src/domain/a.ts', 'export const a = 2;\n');
  const edited = bundleKey(req());
  expect(edited).not.toBe(before);
  write('src/api/new.ts', 'export {};\n');
  expect(bundleKey(req())).not.toBe(edited);
});

test('a renamed file with the same content names another bundle', () => {
  const before = bundleKey(req());
  rmSync(path.join(root, 'src/domain/a.ts'));
  write('src/domain/b.ts', 'export const a = 1;\n');
  expect(bundleKey(req())).not.toBe(before);
});

test('another lock file, entry or preload list names another bundle', () => {
  const before = bundleKey(req());
  write('package-lock.json', '{"lockfileVersion":3,"x":1}\n');
  expect(bundleKey(req())).not.toBe(before);
  expect(bundleKey(req({ preloadModules: [] }))).not.toBe(bundleKey(req()));
  write('bench/workflows/index.ts', 'export {};\n');
  expect(bundleKey(req({ workflowsPath: path.join(root, 'bench/workflows/index.ts') }))).not.toBe(bundleKey(req()));
});

test("an entry outside src/ is hashed with its folder's files", () => {
  write('bench/workflows/index.ts', 'export {};\n');
  const bench = req({ workflowsPath: path.join(root, 'bench/workflows/index.ts') });
  const before = bundleKey(bench);
  write('bench/workflows/noop.ts', 'export const n = 1;\n');
  expect(bundleKey(bench)).not.toBe(before);
});

test('a bundle in the cache under its name is answered without bundling', async () => {
  const cacheDir = path.join(root, 'cache');
  mkdirSync(cacheDir);
  const named = path.join(cacheDir, `workflow-bundle-${bundleKey(req())}.js`);
  writeFileSync(named, '/* made earlier */');
  const got = await cachedWorkflowBundle({ ...req(), cacheDir });
  expect(got).toEqual({ codePath: named, cached: true });
  expect(readFileSync(got.codePath, 'utf8')).toBe('/* made earlier */');
});
