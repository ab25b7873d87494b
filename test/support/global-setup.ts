import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { startDevServer } from '../../src/infra/temporal-dev-server';
import { freePort } from '../../src/infra/ports';
import { ensureDatabase, startEmbeddedPostgres, withDatabase } from '../../src/infra/postgres';
import { WORKFLOW_PRELOAD_MODULES, WORKFLOWS_PATH } from '../../src/infra/workers';
import { migrate } from '../../src/store/db';
import { createKeyFileIfMissing } from '../../src/infra/message-seal';

/**
 * One real stack per test run: a Temporal dev server on free ports, and an isolated database
 * (a fresh one on DATABASE_URL's server, else on an embedded PostgreSQL), dropped at teardown.
 * OD_TEST_STACK=0 skips it for suites that need only git.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.OD_TEST_STACK === '0') return;
  const started = Date.now();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'od-test-'));
  chmodSync(tmp, 0o755); // the embedded PostgreSQL runs as its own user and must reach its data dir
  const state: Record<string, unknown> = { tmp };

  const temporalPort = await freePort();
  const logFile = path.join(tmp, 'temporal.log');
  const logs: string[] = [];
  const server = await startDevServer({ port: temporalPort, uiPort: null, dbFile: null, logFile: (l) => logs.push(l) });
  (globalThis as Record<string, unknown>).__odTemporal = server;
  // Kept only with OD_KEEP_TEST_TMP, for post-mortems of the server side.
  process.on('exit', () => process.env.OD_KEEP_TEST_TMP && writeFileSync(logFile, logs.join('')));

  const dbName = `od_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let serverUrl: string;
  if (process.env.DATABASE_URL) {
    serverUrl = process.env.DATABASE_URL;
  } else {
    const pgPort = await freePort();
    const pg = await startEmbeddedPostgres({ dataDir: path.join(tmp, 'pg'), port: pgPort });
    (globalThis as Record<string, unknown>).__odPg = pg;
    serverUrl = pg.serverUrl;
  }
  const databaseUrl = await ensureDatabase(serverUrl, dbName);
  await migrate(databaseUrl);
  state.serverUrl = serverUrl;
  state.dbName = dbName;

  const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger, preloadModules: [...WORKFLOW_PRELOAD_MODULES] });
  const bundlePath = path.join(tmp, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);

  process.env.TEMPORAL_ADDRESS = server.address;
  process.env.OD_TEST_DATABASE_URL = databaseUrl;
  process.env.OD_TEST_WORKFLOW_BUNDLE = bundlePath;
  process.env.OD_TEST_TMP = tmp;
  // The run's service key: the harness's workers and clients, and every service process a test starts, seal with it.
  const serviceKeyFile = path.join(tmp, 'service.key');
  createKeyFileIfMissing(serviceKeyFile);
  process.env.OD_SERVICE_KEY_FILE = serviceKeyFile;
  (globalThis as Record<string, unknown>).__odState = state;
  process.stderr.write(
    `\n[stack] temporal ${server.address}, database ${withDatabase(serverUrl, dbName).replace(/:[^:@/]*@/, ':***@')} (${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded'}), ready in ${Date.now() - started} ms\n`,
  );
}

const quietLogger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (m: string) => process.stderr.write(`[bundle] ${m}\n`),
  error: (m: string) => process.stderr.write(`[bundle] ${m}\n`),
  log: () => undefined,
};
