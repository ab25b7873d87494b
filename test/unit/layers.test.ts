/**
 * The lint rules bite: dependency-cruiser (.dependency-cruiser.cjs), ESLint (eslint.config.mjs)
 * and Prettier (.prettierrc) run for real on files planted in a scratch folder inside the
 * repository (so node_modules resolves as it does for src/), and each names the planted fault.
 * The scratch trees mirror src/'s layout because the layer rules are written against it.
 *
 * Each tool starts once for the file (starting node and TypeScript is most of what a run costs):
 * every dependency-cruiser case gets a tree of its own, all cruised by one process
 * (layers-cruise.cjs: the depcruise command's own code, per tree, with the JSON and the err
 * reporters); ESLint and Prettier check all their planted files in one run each and report each
 * file apart, so each test still reads its own file's verdict.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(__dirname, '..', '..');
const BIN = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);
const run = promisify(execFile);

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function tool(bin: string, args: string[], cwd: string): Promise<Ran> {
  try {
    const { stdout, stderr } = await run(bin, args, { cwd, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

function plant(dir: string, files: Record<string, string>): void {
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'node16', moduleResolution: 'node16', strict: true } }));
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(dir, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
}

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
  cycle?: { name: string }[];
}

/** The dependency-cruiser cases: each planted alone in a tree of its own, as its test reads it. */
const TREES = {
  domainImportsStore: {
    'src/domain/model.ts': "import { save } from '../store/rows';\nexport const m = save;\n",
    'src/store/rows.ts': 'export const save = 1;\n',
  },
  pgOutsideStore: {
    'src/api/route.ts': "import { Pool } from 'pg';\nexport const p = Pool;\n",
    'src/store/db.ts': "import { Pool } from 'pg';\nexport const p = Pool;\n",
  },
  workflowImports: {
    'src/workflows/run.ts':
      "import fs from 'node:fs';\nimport { exec } from '../git/exec';\nimport type { Acts } from '../activities/types';\nexport const r = [fs, exec] as unknown as Acts;\n",
    'src/git/exec.ts': 'export const exec = 1;\n',
    'src/activities/types.ts': 'export interface Acts { a: number }\n',
  },
  clientImports: {
    'src/client/index.ts':
      "import { identify } from '../git/repo';\nimport { DEFAULTS } from '../workflows/ownership';\nimport type { View } from '../workflows/view';\nexport const c: View = { identify, DEFAULTS };\n",
    'src/client/below.ts': "import { bind } from '../api/service/ownerships';\nimport { rows } from '../store/rows';\nexport const b = [bind, rows];\n",
    'src/api/service/ownerships.ts': 'export const bind = 1;\n',
    'src/store/rows.ts': 'export const rows = 1;\n',
    'src/git/repo.ts': 'export const identify = 1;\n',
    'src/workflows/ownership.ts': 'export const DEFAULTS = 1;\n',
    'src/workflows/view.ts': 'export interface View { identify: number; DEFAULTS: number }\n',
  },
  storeLandingsCycle: {
    'src/store/provenance.ts': "import { commits } from '../landings/commits';\nexport const p = commits;\n",
    'src/store/db.ts': 'export const db = 1;\n',
    'src/landings/commits.ts': "import { db } from '../store/db';\nexport const commits = db;\n",
  },
  apiMcpBackEdge: {
    'src/api/routes.ts': "import { mount } from '../mcp/http';\nexport const s = mount;\n",
    'src/api/http.ts': 'export const principal = 1;\n',
    'src/mcp/http.ts': "import { principal } from '../api/http';\nexport const mount = principal;\n",
    'src/server/app.ts': "import { mount } from '../mcp/http';\nimport { principal } from '../api/http';\nexport const app = [mount, principal];\n",
  },
  compositionRootImported: {
    'src/server/app.ts': 'export const app = 1;\n',
    'src/api/route.ts': "import { app } from '../server/app';\nexport const r = app;\n",
  },
  contractAndExports: {
    'src/contract/wire.ts': "import { rows } from '../store/lookups';\nexport const w = rows;\n",
    'src/store/lookups.ts': 'export const rows = 1;\n',
    'src/exports/schemas.ts': "export { render } from '../cli/render';\nexport { w } from '../contract/wire';\n",
    'src/cli/render.ts': 'export const render = 1;\n',
  },
  fileCycle: {
    'src/git/lock.ts': "import type { LocalProjection } from './projection';\nexport const lock = (p: LocalProjection) => p;\n",
    'src/git/projection.ts': "import { lock } from './lock';\nexport type LocalProjection = { seq: number };\nexport const write = lock;\n",
  },
  apiSurfaceStore: {
    'src/api/health.ts': "import { pingDatabase } from '../store/beacons';\nexport const h = pingDatabase;\n",
    'src/api/routes/landings.ts':
      "import type { Pool } from '../../store/db';\nimport { scan } from '../service/landings';\nexport const r = (p: Pool) => scan(p);\n",
    'src/api/service/landings.ts':
      "import type { Pool } from '../../store/db';\nimport { pingDatabase } from '../../store/beacons';\nexport const scan = (p: Pool) => [p, pingDatabase];\n",
    'src/store/beacons.ts': 'export const pingDatabase = 1;\n',
    'src/store/db.ts': 'export type Pool = { query(): void };\n',
  },
  storeRunsGit: {
    'src/store/provenance.ts': "import { git } from '../git/exec';\nexport const p = git;\n",
    'src/git/exec.ts': 'export const git = 1;\n',
  },
  gitReachesRows: {
    'src/git/journal.ts': "import { rows } from '../store/rows';\nexport const j = rows;\n",
    'src/store/rows.ts': 'export const rows = 1;\n',
  },
  storeReachesUp: {
    'src/store/rows.ts': "import { acts } from '../activities/index';\nimport { walk } from '../provenance/walk';\nexport const rows = [acts, walk];\n",
    'src/activities/index.ts': 'export const acts = 1;\n',
    'src/provenance/walk.ts': 'export const walk = 1;\n',
  },
  kits: {
    'src/infra/tools.ts': "import { seed } from '../../scripts/seed';\nexport const t = seed;\n",
    'scripts/seed.ts':
      "import { Pool } from 'pg';\nimport { DEFAULTS } from '../src/workflows/ownership';\nimport { q } from '../src/workflows/messages';\nexport const seed = [Pool, DEFAULTS, q];\n",
    'bench/workflows/index.ts': "export { DEFAULTS } from '../../src/workflows/ownership';\n",
    'bench/stack.ts': "import type { DEFAULTS } from '../src/workflows/ownership';\nexport const s: typeof DEFAULTS = 1;\n",
    'worker.ts': "import { q } from './src/workflows/messages';\nexport const w = q;\n",
    'src/workflows/ownership.ts': 'export const DEFAULTS = 1;\n',
    'src/workflows/messages.ts': 'export const q = 1;\n',
  },
  layered: {
    'src/domain/model.ts': "import { z } from 'zod';\nexport const M = z.string();\n",
    'src/store/rows.ts': "import type { Pool } from 'pg';\nimport { M } from '../domain/model';\nexport const rows = (p: Pool) => [p, M];\n",
    'src/api/service/route.ts': "import { rows } from '../../store/rows';\nexport const r = rows;\n",
    'src/git/exec.ts': "import { M } from '../domain/model';\nexport const git = M;\n",
    'src/provenance/walk.ts': "import { rows } from '../store/rows';\nimport { git } from '../git/exec';\nexport const walk = [rows, git];\n",
    'src/activities/index.ts': "import { walk } from '../provenance/walk';\nexport const acts = walk;\n",
    'scripts/check.ts': "import { Pool } from 'pg';\nimport { walk } from '../src/provenance/walk';\nexport const c = [Pool, walk];\n",
  },
} satisfies Record<string, Record<string, string>>;
type Tree = keyof typeof TREES;

/** The ESLint and Prettier cases: distinct files, all in one tree. */
const call = (n: number) => `export const v = f(${Array.from({ length: n }, (_, i) => `'${String(i).padStart(4, '0')}'`).join(', ')});\n`;
const LINTED = {
  'src/api/lazy.ts': "export const load = () => require('../store/db') as typeof import('../store/db');\n",
  'src/cli/lazy.ts':
    "export const load = () => require('../store/db') as unknown;\nexport const typed = () => require('../store/db') as typeof import('../store/db');\n",
  'src/api/eager.ts': "import path from 'node:path';\nexport const load = () => path.sep;\n",
};
const FORMATTED = { 'src/off.ts': 'export const a = "x";\n', 'src/in.ts': "export const a = 'x';\n", 'src/wide.ts': call(17), 'src/wider.ts': call(19) };

let scratch: string;
let cruised: Promise<Ran>;
let linted: Promise<Ran>;
let formatted: Promise<Ran>;

beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(ROOT, '.layers-'));
  const trees = Object.entries(TREES).map(([name, files]) => {
    const dir = path.join(scratch, name);
    plant(dir, files);
    return dir;
  });
  const lint = path.join(scratch, 'lint');
  plant(lint, { ...LINTED, ...FORMATTED });
  cruised = tool(process.execPath, [path.join(__dirname, 'layers-cruise.cjs'), path.join(ROOT, '.dependency-cruiser.cjs'), ...trees], scratch);
  linted = tool(
    BIN('eslint'),
    ['--config', path.join(ROOT, 'eslint.config.mjs'), '--format', 'json', ...Object.keys(LINTED).map((f) => path.join(lint, f))],
    ROOT,
  );
  formatted = tool(BIN('prettier'), ['--no-color', '--config', path.join(ROOT, '.prettierrc'), '--check', ...Object.keys(FORMATTED)], lint);
});
afterAll(async () => {
  await Promise.all([cruised, linted, formatted]);
  fs.rmSync(scratch, { recursive: true, force: true });
});

/** dependency-cruiser with the repository's rules over the tree's src/. */
async function cruise(tree: Tree): Promise<{ code: number; violations: Violation[] }> {
  const r = await cruised;
  expect([r.code, r.stderr]).toEqual([0, '']);
  const results = JSON.parse(r.stdout) as { code: number; json: string }[];
  const { code, json } = results[Object.keys(TREES).indexOf(tree)]!;
  // The JSON report always exits 0; the exit code npm run lint:deps goes by is the err reporter's.
  return { code, violations: (JSON.parse(json) as { summary: { violations: Violation[] } }).summary.violations };
}

const edges = (vs: Violation[], rule: string) => vs.filter((v) => v.rule.name === rule).map((v) => `${v.from} -> ${v.to}`);

describe('dependency-cruiser layers', () => {
  test('domain imports nothing outside domain and zod: a domain module importing store is named', async () => {
    const { code, violations } = await cruise('domainImportsStore');
    expect(code).not.toBe(0);
    expect(edges(violations, 'domain-is-pure')).toEqual(['src/domain/model.ts -> src/store/rows.ts']);
  });

  test('only src/store imports pg: pg from the API is named, pg from the store is not', async () => {
    const { violations } = await cruise('pgOutsideStore');
    const sql = edges(violations, 'sql-only-in-store');
    expect(sql).toHaveLength(1);
    expect(sql[0]).toMatch(/^src\/api\/route\.ts -> .*node_modules\/pg\//);
  });

  test('workflow code imports neither git nor Node built-ins; a type-only import of the activity interfaces passes', async () => {
    const { violations } = await cruise('workflowImports');
    expect(edges(violations, 'workflows-import-only-workflow-safe-code')).toEqual(expect.arrayContaining(['src/workflows/run.ts -> src/git/exec.ts']));
    expect(edges(violations, 'workflows-no-node-builtins')).toEqual(['src/workflows/run.ts -> fs']);
    expect(violations.filter((v) => v.to === 'src/activities/types.ts')).toEqual([]);
  });

  test('the client runs no git and takes workflow code only as types', async () => {
    const { violations } = await cruise('clientImports');
    expect(edges(violations, 'client-runs-no-git').sort()).toEqual([
      'src/client/below.ts -> src/api/service/ownerships.ts',
      'src/client/below.ts -> src/store/rows.ts',
      'src/client/index.ts -> src/git/repo.ts',
    ]);
    expect(edges(violations, 'client-imports-workflow-code-only-as-types')).toEqual(['src/client/index.ts -> src/workflows/ownership.ts']);
  });

  const cycles = (vs: Violation[], rule: string) =>
    vs.filter((v) => v.rule.name === rule).map((v) => [v.from, ...(v.cycle ?? []).map((c) => c.name)].join(' -> '));

  test('a folder cycle (store -> landings -> store) is an error named with its folders', async () => {
    const { code, violations } = await cruise('storeLandingsCycle');
    expect(code).not.toBe(0);
    expect(cycles(violations, 'no-folder-cycle')).toEqual(
      expect.arrayContaining(['src/store -> src/landings -> src/store', 'src/landings -> src/store -> src/landings']),
    );
  });

  test('an api -> mcp back-edge (mcp stands on api) is a folder cycle, an error; the composition root may mount both', async () => {
    const { code, violations } = await cruise('apiMcpBackEdge');
    expect(code).not.toBe(0);
    expect(cycles(violations, 'no-folder-cycle')).toEqual(expect.arrayContaining(['src/api -> src/mcp -> src/api']));
    expect(violations.filter((v) => v.from.startsWith('src/server/') && v.rule.name !== 'no-folder-cycle')).toEqual([]);
  });

  test('nothing but an entry point imports the composition root', async () => {
    const { violations } = await cruise('compositionRootImported');
    expect(edges(violations, 'only-entry-points-import-the-composition-root')).toEqual(['src/api/route.ts -> src/server/app.ts']);
  });

  test('the contract imports only domain and zod, and the public exports only the contract and the clients', async () => {
    const { violations } = await cruise('contractAndExports');
    expect(edges(violations, 'contract-is-pure')).toEqual(['src/contract/wire.ts -> src/store/lookups.ts']);
    expect(edges(violations, 'exports-reexport-contract-and-clients')).toEqual(['src/exports/schemas.ts -> src/cli/render.ts']);
  });

  test('a file cycle (git/lock.ts -> git/projection.ts -> git/lock.ts, one of them type-only) is an error inside one folder', async () => {
    const { code, violations } = await cruise('fileCycle');
    expect(code).not.toBe(0);
    // Named once, from the module the cruise reached first.
    expect(cycles(violations, 'no-circular')).toEqual(['src/git/lock.ts -> src/git/projection.ts -> src/git/lock.ts']);
  });

  test("the HTTP surface reaches the store only through src/api/service: a value import is named, a type-only one and the service's own are not", async () => {
    const { violations } = await cruise('apiSurfaceStore');
    expect(edges(violations, 'api-surface-reads-store-only-through-service')).toEqual(['src/api/health.ts -> src/store/beacons.ts']);
  });

  test('the store runs no git', async () => {
    const { code, violations } = await cruise('storeRunsGit');
    expect(code).not.toBe(0);
    expect(edges(violations, 'store-runs-no-git')).toEqual(['src/store/provenance.ts -> src/git/exec.ts']);
  });

  test('git reaches no rows', async () => {
    const { code, violations } = await cruise('gitReachesRows');
    expect(code).not.toBe(0);
    expect(edges(violations, 'git-keeps-no-rows')).toEqual(['src/git/journal.ts -> src/store/rows.ts']);
  });

  test('store and git import nothing that stands on them (activities, provenance)', async () => {
    const { violations } = await cruise('storeReachesUp');
    expect(edges(violations, 'store-and-git-import-only-the-model').sort()).toEqual([
      'src/store/rows.ts -> src/activities/index.ts',
      'src/store/rows.ts -> src/provenance/walk.ts',
    ]);
  });

  test('the kits are cruised: src importing a kit is named, a kit importing workflow code as a value is named, pg in a kit is not', async () => {
    const { code, violations } = await cruise('kits');
    expect(code).not.toBe(0);
    expect(edges(violations, 'src-imports-no-kit')).toEqual(['src/infra/tools.ts -> scripts/seed.ts']);
    expect(edges(violations, 'kits-import-workflow-code-only-as-types')).toEqual(['scripts/seed.ts -> src/workflows/ownership.ts']);
    expect(violations.filter((v) => v.rule.name === 'sql-only-in-store')).toEqual([]);
  });

  test('layered imports pass', async () => {
    expect(await cruise('layered')).toEqual({ code: 0, violations: [] });
  });
});

describe('ESLint', () => {
  /** The file's verdict in the shared run: its exit code is what ESLint's would be for it alone (1 when any error is left). */
  const eslint = async (rel: keyof typeof LINTED) => {
    const r = await linted;
    const files = JSON.parse(r.stdout) as { filePath: string; errorCount: number; messages: { ruleId: string; line: number }[] }[];
    expect(r.code).toBe(files.some((f) => f.errorCount > 0) ? 1 : 0);
    const file = files.find((f) => f.filePath === path.join(scratch, 'lint', rel));
    return { code: file!.errorCount > 0 ? 1 : 0, found: file!.messages.map((m) => `${m.ruleId}@${m.line}`) };
  };

  test('a require() outside the CLI is an error named by its rule', async () => {
    expect(await eslint('src/api/lazy.ts')).toEqual({ code: 1, found: ['@typescript-eslint/no-require-imports@1'] });
  });

  test("the CLI's lazy require() must be typed as the module it loads; an untyped one is named", async () => {
    expect(await eslint('src/cli/lazy.ts')).toEqual({ code: 1, found: ['no-restricted-syntax@1'] });
  });

  test('a static import passes', async () => {
    expect(await eslint('src/api/eager.ts')).toEqual({ code: 0, found: [] });
  });
});

describe('Prettier', () => {
  /** Whether `--check` passes the file: the shared run names each file off the style on a line of its own, and errs on none. */
  const inStyle = async (rel: keyof typeof FORMATTED): Promise<boolean> => {
    const r = await formatted;
    expect(r.code).toBe(1);
    const lines = r.stderr.split('\n');
    expect(lines.filter((l) => l.startsWith('[error]'))).toEqual([]);
    return !lines.includes(`[warn] ${rel}`);
  };

  test('a file off the house style (double quotes) fails --check and is named; one in it passes', async () => {
    expect(await inStyle('src/off.ts')).toBe(false);
    expect(await inStyle('src/in.ts')).toBe(true);
  });

  test('a line up to 160 characters is in style; past that it is wrapped', async () => {
    expect(call(17).length).toBeLessThanOrEqual(161);
    expect(call(19).length).toBeGreaterThan(161);
    expect(await inStyle('src/wide.ts')).toBe(true);
    expect(await inStyle('src/wider.ts')).toBe(false);
  });
});
