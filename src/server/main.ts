import { loadConfig } from '../config';
import { createLogger } from '../infra/logger';
import { startApi } from './runtime';

/** The API as its own process (compose's `api` service). `npm start` runs it in-process instead. */
async function main(): Promise<void> {
  const cfg = loadConfig();
  const log = createLogger(cfg.logLevel).child({ component: 'api' });
  if (!cfg.temporalAddress || !cfg.databaseUrl) throw new Error('TEMPORAL_ADDRESS and DATABASE_URL are required for the API process');
  const api = await startApi(cfg);
  log.info({ url: api.url }, 'api listening');
  const stop = () => void api.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  process.stderr.write(`api: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
