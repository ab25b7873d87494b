import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { loadConfig } from './src/config';
import { createWorkersFromConfig } from './src/infra/workers';
import { createLogger } from './src/infra/logger';
import { createPool } from './src/store/db';

/**
 * The Temporal worker. `worker.ts` runs the ownership workflows, their durable-store activities and
 * this host's git activities; `worker.ts --host-agent` runs only the git activities (for hosts that
 * hold worktrees but not the workflow worker).
 */
async function main(): Promise<void> {
  const cfg = loadConfig();
  const log = createLogger(cfg.logLevel).child({ component: 'worker' });
  const hostAgentOnly = process.argv.includes('--host-agent');
  if (!cfg.temporalAddress) throw new Error('TEMPORAL_ADDRESS is required for worker.ts (npm start sets it for its own dev server)');
  if (!hostAgentOnly && !cfg.databaseUrl) throw new Error('DATABASE_URL is required for worker.ts (npm start sets it for its embedded PostgreSQL)');
  Runtime.install({ logger: new DefaultLogger(cfg.logLevel === 'debug' || cfg.logLevel === 'trace' ? 'DEBUG' : 'WARN') });
  const connection = await NativeConnection.connect({ address: cfg.temporalAddress });
  const pool = hostAgentOnly ? undefined : createPool(cfg.databaseUrl);
  const workers = await createWorkersFromConfig(cfg, connection, pool);
  log.info({ hostAgentOnly, taskQueue: cfg.taskQueue, hostId: cfg.hostId }, 'worker running');
  // Temporal's runtime also reacts to SIGINT/SIGTERM by itself; only stop what still runs.
  const stop = () => workers.forEach((w) => w.getState() === 'RUNNING' && w.shutdown());
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await Promise.all(workers.map((w) => w.run()));
  await pool?.end();
  await connection.close();
}

main().catch((err) => {
  process.stderr.write(`worker: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
