import path from 'node:path';
import { Pool, type PoolConfig } from 'pg';
import { runner } from 'node-pg-migrate';

export const MIGRATIONS_DIR = path.resolve(__dirname, '../../migrations');

export function createPool(connectionString: string, extra: Partial<PoolConfig> = {}): Pool {
  const pool = new Pool({ connectionString, max: 10, connectionTimeoutMillis: 5_000, ...extra });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  return pool;
}

/** Runs pending migrations (versioned, in a lock, recorded in pgmigrations). Safe to call at every start. */
export async function migrate(databaseUrl: string, log: (msg: string) => void = () => undefined): Promise<string[]> {
  const applied = await runner({
    databaseUrl,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    count: Infinity,
    log,
    logger: { debug: () => undefined, info: log, warn: log, error: log },
    checkOrder: true,
    verbose: false,
  });
  return applied.map((m) => m.name);
}
