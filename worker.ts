import { NativeConnection } from '@temporalio/worker';
import { loadConfig } from './src/config';
import { createWorkersFromConfig, installTemporalLogging } from './src/infra/workers';
import { createLogger } from './src/infra/logger';
import { temporalConnectionFromEnv } from './src/infra/temporal-connection';
import { createPool } from './src/store/db';

/**
 * The Temporal worker. `worker.ts` runs the ownership workflows, their durable-store activities and
 * this host's git activities; `worker.ts --host-agent` runs only the git activities (for hosts that
 * hold worktrees but not the workflow worker). Either refuses to start, exit code 1, on a namespace
 * set up wrong (src/infra/namespace-check.ts: missing, or without the search attributes the
 * workflows set), naming what is missing and the `temporal` commands that fix it.
 */
async function main(): Promise<void> {
  const cfg = loadConfig();
  const log = createLogger(cfg.logLevel).child({ component: 'worker' });
  const hostAgentOnly = process.argv.includes('--host-agent');
  if (!cfg.temporalAddress) throw new Error('TEMPORAL_ADDRESS is required for worker.ts (npm start sets it for its own dev server)');
  if (!hostAgentOnly && !cfg.databaseUrl) throw new Error('DATABASE_URL is required for worker.ts (npm start sets it for its embedded PostgreSQL)');
  installTemporalLogging(log);
  const connection = await NativeConnection.connect({ address: cfg.temporalAddress, ...temporalConnectionFromEnv() });
  const pool = hostAgentOnly ? undefined : createPool(cfg.databaseUrl);
  // A host agent given DATABASE_URL ships its worktrees' commit journals itself (a small pool; no workflows).
  const journalPool = pool ?? (cfg.databaseUrl ? createPool(cfg.databaseUrl, { max: 2 }) : undefined);
  const workers = await createWorkersFromConfig(cfg, connection, pool, { ...(journalPool ? { journalPool } : {}), log });
  // One line at start: whether this host's commit journals reach PostgreSQL (docs/git-projection.md#the-journal).
  log.info({ hostAgentOnly, taskQueue: cfg.taskQueue, hostId: cfg.hostId, journals: journalPool ? 'shipped' : 'local (no DATABASE_URL)' }, 'worker running');
  // Temporal's runtime also reacts to SIGINT/SIGTERM by itself; only stop what still runs.
  const stop = () => workers.forEach((w) => w.getState() === 'RUNNING' && w.shutdown());
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await Promise.all(workers.map((w) => w.run()));
  await pool?.end();
  if (journalPool !== pool) await journalPool?.end();
  await connection.close();
}

main().catch((err) => {
  process.stderr.write(`worker: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
