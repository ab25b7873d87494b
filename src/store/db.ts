import path from 'node:path';
import { Pool, type PoolClient, type PoolConfig } from 'pg';

/** The pool type every layer passes around: only src/store imports pg itself (.dependency-cruiser.cjs sql-only-in-store). */
export type { Pool, PoolClient };

export const MIGRATIONS_DIR = path.resolve(__dirname, '../../migrations');

export function createPool(connectionString: string, extra: Partial<PoolConfig> = {}): Pool {
  const pool = new Pool({ connectionString, max: 10, connectionTimeoutMillis: 5_000, ...extra });
  // A client losing its server must not crash the process, idle (the pool's 'error') or checked
  // out (the client's own 'error', which has no listener otherwise); the next query reports it.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** Runs pending migrations (versioned, in a lock, recorded in pgmigrations). Safe to call at every start. */
export async function migrate(databaseUrl: string, log: (msg: string) => void = () => undefined): Promise<string[]> {
  // Loaded here, not with the module: it costs ~150 ms of CPU to load, which every process that
  // touches the store (the API, a worker, each test file) paid though only a start migrates.
  const { runner } = await import('node-pg-migrate');
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

/**
 * Runs `fn` in one transaction on a client of its own: committed when it returns, rolled back when
 * it throws. `begin` opens it (e.g. a read-only repeatable-read snapshot for a consistency check).
 */
export async function inTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>, begin = 'BEGIN'): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin);
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
