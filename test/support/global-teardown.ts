import { rmSync } from 'node:fs';
import type { DevServer } from '../../src/infra/temporal-dev-server';
import { dropDatabase, type EmbeddedPg } from '../../src/infra/postgres';

export default async function globalTeardown(): Promise<void> {
  const g = globalThis as Record<string, unknown>;
  const state = g.__odState as { tmp: string; serverUrl: string; dbName: string } | undefined;
  if (!state) return;
  await dropDatabase(state.serverUrl, state.dbName).catch((err) => process.stderr.write(`[stack] drop database failed: ${String(err)}\n`));
  await (g.__odPg as EmbeddedPg | undefined)?.stop();
  await (g.__odTemporal as DevServer | undefined)?.stop();
  if (!process.env.OD_KEEP_TEST_TMP) rmSync(state.tmp, { recursive: true, force: true });
}
