import { loadConfig } from '../src/config';
import { migrate } from '../src/store/db';

/** Runs pending migrations against DATABASE_URL (compose's one-shot `migrate` service; `npm start` does it itself). */
async function main(): Promise<void> {
  const cfg = loadConfig();
  if (!cfg.databaseUrl) throw new Error('DATABASE_URL is required');
  const applied = await migrate(cfg.databaseUrl, (m) => process.stderr.write(`${m}\n`));
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'schema up to date\n');
}

main().catch((err) => {
  process.stderr.write(`migrate: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
