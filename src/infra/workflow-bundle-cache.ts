import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { PROJECT_ROOT } from './tools';
import { filesUnder } from './tree-files';

/**
 * From the sources, a worker would run webpack over the workflows at every start: about 12 s of
 * CPU, paid again by every restart of `npm start`, of a fault run's worker and of each host of the
 * multi-host run. The bundle is kept under `.data/cache/` named by a hash of everything it is made
 * of (every file under src/ and, for another entry, under the entry's folder; package-lock.json;
 * the SDK's version; the preloaded modules), so a start after any edit bundles again and every other
 * start loads the bundle made before. A compiled worker never comes here: dist/ ships its own.
 */

export const BUNDLE_CACHE_DIR = path.join(PROJECT_ROOT, '.data', 'cache');
/** Bundles of earlier sources kept beside the current one (another checkout state, a branch switched back). */
const KEEP = 4;

export interface BundleRequest {
  workflowsPath: string;
  preloadModules: readonly string[];
  /** the bundler's warnings and errors, and a line saying whether the cache answered */
  log?: (line: string) => void;
  cacheDir?: string;
  /** the checkout whose src/ and package-lock.json are hashed (tests give a scratch one) */
  projectRoot?: string;
}

export async function cachedWorkflowBundle(req: BundleRequest): Promise<{ codePath: string; cached: boolean }> {
  const dir = req.cacheDir ?? BUNDLE_CACHE_DIR;
  const codePath = path.join(dir, `workflow-bundle-${bundleKey(req)}.js`);
  if (existsSync(codePath)) return { codePath, cached: true };
  const log = req.log ?? (() => undefined);
  const { code } = await bundleWorkflowCode({ workflowsPath: req.workflowsPath, logger: bundlerLogger(log), preloadModules: [...req.preloadModules] });
  mkdirSync(dir, { recursive: true });
  // Whole or absent: processes starting together each bundle and the last rename wins, with the same bytes.
  const tmp = `${codePath}.${process.pid}.tmp`;
  writeFileSync(tmp, code);
  renameSync(tmp, codePath);
  pruneOlder(dir, codePath);
  return { codePath, cached: false };
}

/** The hash naming a bundle: the inputs webpack reads, listed by path and content. */
export function bundleKey(req: Pick<BundleRequest, 'workflowsPath' | 'preloadModules' | 'projectRoot'>): string {
  const root = req.projectRoot ?? PROJECT_ROOT;
  const h = createHash('sha256');
  const roots = [path.join(root, 'src')];
  const entryDir = path.dirname(path.resolve(req.workflowsPath));
  if (!isInside(entryDir, roots[0]!)) roots.push(entryDir);
  for (const dir of roots)
    for (const file of filesUnder(dir))
      h.update(`${path.relative(root, file)}\0`)
        .update(readFileSync(file))
        .update('\0');
  const lock = path.join(root, 'package-lock.json');
  if (existsSync(lock)) h.update(readFileSync(lock));
  h.update(`\0${sdkVersion()}\0${path.relative(root, req.workflowsPath)}\0${req.preloadModules.map((m) => path.relative(root, m)).join('\0')}`);
  return h.digest('hex').slice(0, 24);
}

function isInside(p: string, root: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function sdkVersion(): string {
  return (JSON.parse(readFileSync(require.resolve('@temporalio/worker/package.json'), 'utf8')) as { version: string }).version;
}

function pruneOlder(dir: string, current: string): void {
  const bundles = readdirSync(dir)
    .filter((n) => /^workflow-bundle-[0-9a-f]+\.js$/.test(n))
    .map((n) => path.join(dir, n))
    .filter((p) => p !== current)
    .map((p) => ({ p, at: statSync(p).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const { p } of bundles.slice(KEEP - 1)) rmSync(p, { force: true });
}

const bundlerLogger = (write: (line: string) => void) => ({
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (m: string) => write(`bundle: ${m}`),
  error: (m: string) => write(`bundle: ${m}`),
  log: () => undefined,
});
