import { rmSync } from 'node:fs';
import type { DevServer } from '../../src/infra/temporal-dev-server';
import { Client } from 'pg';
import { dropDatabase, type EmbeddedPg } from '../../src/infra/postgres';
import { cpuOf, cpuOfProcesses, recordCpu } from './cpu-account';

export default async function globalTeardown(): Promise<void> {
  const g = globalThis as Record<string, unknown>;
  const state = g.__odState as { tmp: string; serverUrl: string; dbName: string } | undefined;
  if (!state) return;
  if (process.env.OD_TEST_CPU_LOG) recordCpu({ stack: cpuOfProcesses(/temporal|postgres/), jest: cpuOf('self') });
  // The run's database and any a harness made of its own (`<run database>_<suffix>`) and left behind.
  for (const name of [state.dbName, ...(await ownDatabasesOf(state.serverUrl, state.dbName))]) {
    await dropDatabase(state.serverUrl, name).catch((err) => process.stderr.write(`[stack] drop database ${name} failed: ${String(err)}\n`));
  }
  await (g.__odPg as EmbeddedPg | undefined)?.stop();
  await (g.__odTemporal as DevServer | undefined)?.stop();
  if (!process.env.OD_KEEP_TEST_TMP) rmSync(state.tmp, { recursive: true, force: true });
}

async function ownDatabasesOf(serverUrl: string, dbName: string): Promise<string[]> {
  const admin = new Client({ connectionString: serverUrl });
  try {
    await admin.connect();
    const res = await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1 || '\\_%'", [dbName]);
    return res.rows.map((r) => r.datname);
  } catch {
    return [];
  } finally {
    await admin.end().catch(() => undefined);
  }
}
