import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { NativeConnection, Worker } from '@temporalio/worker';
import { checkHealth, HealthReportSchema, type HealthDeps, type HealthReport } from '../../src/api/service/health';
import { buildServer } from '../../src/server/app';
import { loadConfig } from '../../src/config';
import { hostTaskQueue } from '../../src/domain/queues';
import { SEARCH_ATTRIBUTE_NAMES, SEARCH_ATTRIBUTE_TYPES } from '../../src/domain/search-attributes';
import { BEACON_STALE_MS } from '../../src/infra/beacon';
import { createLogger } from '../../src/infra/logger';
import { assertNamespaceReady, checkNamespace, NamespaceNotReadyError, setupCommands } from '../../src/infra/namespace-check';
import { startHarness, type Harness } from '../support/harness';
import { entryCommand } from '../../stack/compiled';

/**
 * A Temporal namespace set up wrong (an operator's own cluster, without this project's search
 * attributes) says so: the worker refuses to start on it, naming each missing attribute and the
 * command that registers it, and /healthz answers ok:false naming them. A second namespace on the
 * run's dev server, registered without the attributes (the dev server registers them, from
 * --search-attribute, in the default namespace only), stands for it.
 */

const ROOT = path.resolve(__dirname, '../..');
const suffix = Math.random().toString(36).slice(2, 8);
const bare = `od-bare-${suffix}`;
const absent = `od-absent-${suffix}`;
const NAMES = Object.values(SEARCH_ATTRIBUTE_NAMES).sort();
const createCommand = (ns: string, name: string, type: string) => `temporal operator search-attribute create --namespace ${ns} --name ${name} --type ${type}`;
const EXPECTED_COMMANDS = (Object.keys(SEARCH_ATTRIBUTE_NAMES) as (keyof typeof SEARCH_ATTRIBUTE_NAMES)[]).map((f) =>
  createCommand(bare, SEARCH_ATTRIBUTE_NAMES[f], SEARCH_ATTRIBUTE_TYPES[f]),
);

let connection: Connection;
let h: Harness;

beforeAll(async () => {
  connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  await connection.workflowService.registerNamespace({ namespace: bare, workflowExecutionRetentionPeriod: msToTs('1 day') });
  // A database of its own: the hosts /healthz names are this file's, not every test file's.
  h = await startHarness({ ownDatabase: true });
});
afterAll(async () => {
  await h?.shutdown();
  await connection?.close();
});

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 250));
  }
}

function runWorker(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const [command, ...argv] = entryCommand('worker.ts', args);
    const child = spawn(command, argv, {
      cwd: ROOT,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS,
        DATABASE_URL: process.env.OD_TEST_DATABASE_URL,
        TEMPORAL_TASK_QUEUE: `ns-q-${suffix}`,
        OD_HOST_ID: `ns-host-${suffix}`,
        OD_ALLOWED_ROOTS: process.env.OD_TEST_TMP,
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    // A worker that went on to poll never exits by itself: stopped, it answers no exit code (null).
    const bound = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', (code) => (clearTimeout(bound), resolve({ code, stderr })));
  });
}

const depsFor = (namespace: string, over: Partial<HealthDeps> = {}): HealthDeps => ({
  temporal: new Client({ connection, namespace }),
  pool: h.pool,
  namespace,
  taskQueue: h.taskQueue,
  hostTaskQueue: hostTaskQueue(h.hostId),
  hostId: h.hostId,
  ...over,
});

test('the dev server registers the attributes in the default namespace only: a second namespace has none', async () => {
  const def = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
  expect(Object.keys(def.customAttributes ?? {}).sort()).toEqual(expect.arrayContaining(NAMES));
  const other = await connection.operatorService.listSearchAttributes({ namespace: bare });
  expect(Object.keys(other.customAttributes ?? {})).toEqual([]);
  expect(await checkNamespace(connection, 'default')).toEqual({ namespace: 'default', exists: true, missing: [] });
});

test("the worker's start check refuses a namespace without the search attributes, naming each and its create command", async () => {
  const refused = await assertNamespaceReady(connection, bare).then(
    () => null,
    (e: unknown) => e,
  );
  expect(refused).toBeInstanceOf(NamespaceNotReadyError);
  const err = refused as NamespaceNotReadyError;
  expect(err.report.missing.map((a) => a.name).sort()).toEqual(NAMES);
  for (const cmd of EXPECTED_COMMANDS) expect(err.message).toContain(cmd);
  // A host agent runs no workflows: the namespace existing is enough for it.
  await expect(assertNamespaceReady(connection, bare, { searchAttributes: false })).resolves.toMatchObject({ exists: true, missing: [] });
  // A namespace that does not exist: the agent is refused too, with the command that creates it.
  await expect(assertNamespaceReady(connection, absent, { searchAttributes: false })).rejects.toThrow(
    `temporal operator namespace create --namespace ${absent}`,
  );
});

test('worker.ts exits non-zero on it, before polling, with the names and commands on stderr; --host-agent on a namespace that does not exist too', async () => {
  const worker = await runWorker([], { TEMPORAL_NAMESPACE: bare });
  expect(worker.code).toBe(1);
  expect(worker.stderr).toContain(`worker: Temporal namespace "${bare}" lacks the search attributes`);
  for (const cmd of EXPECTED_COMMANDS) expect(worker.stderr).toContain(cmd);
  expect(worker.stderr).not.toMatch(/BadSearchAttributes.*WARN|WARN.*BadSearchAttributes/);

  const agent = await runWorker(['--host-agent'], { TEMPORAL_NAMESPACE: absent });
  expect(agent.code).toBe(1);
  expect(agent.stderr).toContain(`worker: Temporal namespace "${absent}" does not exist`);
  expect(agent.stderr).toContain(`temporal operator namespace create --namespace ${absent}`);
}, 120_000);

test('an attribute registered with another type counts as missing: the fix removes it and creates it again', async () => {
  const wrong = `od-wrong-${suffix}`;
  await connection.workflowService.registerNamespace({ namespace: wrong, workflowExecutionRetentionPeriod: msToTs('1 day') });
  const { temporal } = await import('@temporalio/proto');
  const T = temporal.api.enums.v1.IndexedValueType;
  const types = Object.fromEntries(
    (Object.keys(SEARCH_ATTRIBUTE_NAMES) as (keyof typeof SEARCH_ATTRIBUTE_NAMES)[]).map((f) => [
      SEARCH_ATTRIBUTE_NAMES[f],
      SEARCH_ATTRIBUTE_TYPES[f] === 'KeywordList' ? T.INDEXED_VALUE_TYPE_KEYWORD_LIST : T.INDEXED_VALUE_TYPE_KEYWORD,
    ]),
  );
  // The lineage's list registered as a plain keyword: upserting a list into it fails every workflow task alike.
  types[SEARCH_ATTRIBUTE_NAMES.sessions] = T.INDEXED_VALUE_TYPE_KEYWORD;
  await connection.operatorService.addSearchAttributes({ namespace: wrong, searchAttributes: types });
  const report = await checkNamespace(connection, wrong);
  expect(report).toEqual({ namespace: wrong, exists: true, missing: [{ name: SEARCH_ATTRIBUTE_NAMES.sessions, type: 'KeywordList', found: 'Keyword' }] });
  const refused = await assertNamespaceReady(connection, wrong).catch((e: Error) => e);
  expect((refused as Error).message).toContain(`${SEARCH_ATTRIBUTE_NAMES.sessions} (KeywordList, registered as Keyword)`);
  expect((refused as Error).message).toContain(
    `temporal operator search-attribute remove --namespace ${wrong} --name ${SEARCH_ATTRIBUTE_NAMES.sessions} --yes`,
  );
  expect((refused as Error).message).toContain(createCommand(wrong, SEARCH_ATTRIBUTE_NAMES.sessions, 'KeywordList'));
});

test('checkHealth against that namespace answers ok:false and names the missing attributes, even with a worker polling it; against a namespace that does not exist, names it', async () => {
  const report = await checkHealth(depsFor(bare));
  expect(HealthReportSchema.parse(report)).toEqual(report);
  expect(report.ok).toBe(false);
  expect(report.temporal).toBe('up');
  const sa = report.problems.find((p) => p.code === 'search_attributes_missing');
  expect(sa).toMatchObject({ namespace: bare, commands: EXPECTED_COMMANDS });
  expect(sa && 'names' in sa ? [...sa.names].sort() : null).toEqual(NAMES);
  for (const name of NAMES) expect(sa?.message).toContain(name);

  // A worker that polls it anyway (an older build, or one started before the attributes went) is not health.
  const native = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  const polling = await Worker.create({
    connection: native,
    namespace: bare,
    taskQueue: `ns-polled-${suffix}`,
    workflowBundle: { codePath: process.env.OD_TEST_WORKFLOW_BUNDLE! },
  });
  const running = polling.run();
  try {
    const served = await until(
      () => checkHealth(depsFor(bare, { taskQueue: `ns-polled-${suffix}` })),
      (r) => r.worker === 'up',
      60_000,
    );
    expect(served).toMatchObject({ ok: false, temporal: 'up', worker: 'up' });
    expect(served.problems.map((p) => p.code)).toContain('search_attributes_missing');
  } finally {
    polling.shutdown();
    await running;
    await native.close();
  }

  const none = await checkHealth(depsFor(absent));
  expect(none.ok).toBe(false);
  expect(none.temporal).toBe('up');
  expect(none.problems).toContainEqual(expect.objectContaining({ code: 'namespace_missing', namespace: absent }));
});

test('the API on that namespace logs one WARN line at start naming what is missing, and GET /healthz answers 503 naming it', async () => {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk: Buffer, _enc, cb) => (lines.push(chunk.toString()), cb()) });
  const config = loadConfig({
    ...process.env,
    TEMPORAL_NAMESPACE: bare,
    TEMPORAL_TASK_QUEUE: h.taskQueue,
    OD_HOST_ID: h.hostId,
    OD_ALLOWED_ROOTS: process.env.OD_TEST_TMP,
    OD_TOKENS_FILE: '',
    OD_PAYLOAD_KEY_FILE: '',
    LOG_LEVEL: 'warn',
  });
  const stand = {} as never;
  const app = await buildServer({
    config,
    temporal: new Client({ connection, namespace: bare }),
    client: stand,
    pool: h.pool,
    authenticator: { authenticate: () => null } as never,
    logger: createLogger('warn', sink),
  });
  try {
    await app.ready();
    const warned = await until(
      async () => lines.filter((l) => l.includes('lacks the search attributes')),
      (w) => w.length > 0,
      30_000,
    );
    expect(warned).toHaveLength(1);
    const line = JSON.parse(warned[0]!) as { level: number; missing: string[]; fix: string[]; msg: string };
    expect(line.level).toBe(40);
    expect([...line.missing].sort()).toEqual(NAMES);
    expect(line.fix).toEqual(EXPECTED_COMMANDS);

    const res = await app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(503);
    const body = HealthReportSchema.parse(res.json());
    expect(body.ok).toBe(false);
    expect(body.problems).toContainEqual(expect.objectContaining({ code: 'search_attributes_missing', namespace: bare, commands: EXPECTED_COMMANDS }));
  } finally {
    await app.close();
  }
});

test('against the namespace set up right, with its worker and agent running: ok and no problems; this host named up', async () => {
  const report = await until(
    () => checkHealth(depsFor('default')),
    (r) => r.ok && r.problems.length === 0 && r.hosts.length > 0,
    60_000,
  );
  expect(report).toMatchObject({ ok: true, temporal: 'up', postgres: 'up', worker: 'up', hostAgent: 'up', problems: [] });
  expect(report.hosts).toEqual([{ hostId: h.hostId, agent: 'up', lastBeatAgoMs: expect.any(Number) }]);
}, 90_000);

test('a host seen recently whose agent stopped beating is named, and one with a live ownership but no agent; an ended lifecycle host is not', async () => {
  const stale = `stale-${suffix}`;
  const ghost = `ghost-${suffix}`;
  const gone = `gone-${suffix}`;
  const staleSecs = Math.ceil((BEACON_STALE_MS * 4) / 1000);
  await h.pool.query(
    `INSERT INTO worker_beacons (process_id, task_queue, host_id, serves_workflows, started_at, beat_at)
     VALUES ($1, $2, $3, false, now() - interval '10 minutes', now() - make_interval(secs => $4))`,
    [`test:${stale}`, h.taskQueue, stale, staleSecs],
  );
  const ownership = (id: string, host: string, state: string) =>
    h.pool.query(
      `INSERT INTO ownerships (ownership_id, workflow_id, repo_root, worktree_path, branch, host_id, state, epoch, seq, updated_at, record)
       VALUES ($1, $1, '/r', $2, 'b', $3, $4, 1, 1, now(), '{}')`,
      [id, `/r/${id}`, host, state],
    );
  await ownership(`own_${ghost}`, ghost, 'active');
  await ownership(`own_${gone}`, gone, 'closed');

  const report: HealthReport = await checkHealth(depsFor('default'));
  // Another host's agent away does not make this service unhealthy: its own worktrees wait, nothing else.
  expect(report.ok).toBe(true);
  const byHost = new Map(report.hosts.map((x) => [x.hostId, x]));
  expect(byHost.get(stale)).toEqual({ hostId: stale, agent: 'down', lastBeatAgoMs: expect.any(Number) });
  expect(byHost.get(stale)!.lastBeatAgoMs).toBeGreaterThanOrEqual(staleSecs * 1000);
  expect(byHost.get(ghost)).toEqual({ hostId: ghost, agent: 'down', lastBeatAgoMs: null });
  expect(byHost.has(gone)).toBe(false);
  expect(byHost.get(h.hostId)).toMatchObject({ agent: 'up' });
  expect(report.problems).toContainEqual(expect.objectContaining({ code: 'host_agent_stale', hostId: stale }));
  expect(report.problems).toContainEqual(expect.objectContaining({ code: 'host_agent_stale', hostId: ghost, lastBeatAgoMs: null }));
  expect(report.problems.filter((p) => p.code === 'host_agent_stale')).toHaveLength(2);
});

test('docs/operations.md lists the command that registers every attribute, as the worker prints it', async () => {
  const doc = readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8');
  const ready = await checkNamespace(connection, bare);
  const forDefault = setupCommands({ ...ready, namespace: 'default' });
  expect(forDefault).toHaveLength(NAMES.length);
  for (const cmd of forDefault) expect(doc).toContain(cmd);
});
