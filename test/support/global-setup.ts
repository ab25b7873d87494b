import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/infra/ports';
import { withDatabase } from '../../src/infra/postgres';
import { createKeyFileIfMissing } from '../../src/keys/message-seal';
import { migratedDatabase, startPostgres } from '../../stack/postgres';
import { startTemporal } from '../../stack/temporal';
import { bundleWorkflowsOnce } from './workflow-bundle';

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
  const server = await startTemporal(null, { port: temporalPort, uiPort: null, dbFile: null, logFile: (l) => logs.push(l) });
  (globalThis as Record<string, unknown>).__odTemporal = server;
  // Kept only with OD_KEEP_TEST_TMP, for post-mortems of the server side.
  process.on('exit', () => process.env.OD_KEEP_TEST_TMP && writeFileSync(logFile, logs.join('')));

  const dbName = `od_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const { serverUrl, pg } = await startPostgres(null, { dir: tmp, preferDatabaseUrl: true });
  if (pg) (globalThis as Record<string, unknown>).__odPg = pg;
  const databaseUrl = await migratedDatabase(null, serverUrl, dbName);
  state.serverUrl = serverUrl;
  state.dbName = dbName;

  const bundlePath = await bundleWorkflowsOnce();

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
