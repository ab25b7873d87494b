import path from 'node:path';
import { freePort } from '../src/infra/ports';
import { dropDatabase, ensureDatabase, startEmbeddedPostgres, type EmbeddedPg, type EmbeddedPgOptions } from '../src/infra/postgres';
import { migrate } from '../src/store/db';
import type { Cleanup } from './cleanup';

export interface PostgresServer {
  /** server URL without a database name */
  serverUrl: string;
  source: 'DATABASE_URL' | 'embedded';
  /** the embedded server, null on DATABASE_URL's */
  pg: EmbeddedPg | null;
}

export interface PostgresOptions extends Partial<Omit<EmbeddedPgOptions, 'dataDir'>> {
  /** the run's dir: an embedded server keeps its cluster in `<dir>/pg` */
  dir: string;
  /** take DATABASE_URL's server when set (a run then makes a database of its own on it); default false */
  preferDatabaseUrl?: boolean;
}

/**
 * A PostgreSQL server for a run: DATABASE_URL's when preferred and set, else an embedded one in the
 * run's dir (on `port`, or a free one), stopped by `cleanup`.
 */
export async function startPostgres(cleanup: Cleanup | null, opts: PostgresOptions): Promise<PostgresServer> {
  if (opts.preferDatabaseUrl && process.env.DATABASE_URL) return { serverUrl: process.env.DATABASE_URL, source: 'DATABASE_URL', pg: null };
  const { dir, preferDatabaseUrl: _, ...rest } = opts;
  const pg = await startEmbeddedPostgres({ ...rest, dataDir: path.join(dir, 'pg'), port: opts.port ?? (await freePort()) });
  cleanup?.add('stop embedded PostgreSQL', () => pg.stop(), 20_000);
  return { serverUrl: pg.serverUrl, source: 'embedded', pg };
}

/** Database `name` on the server, migrated to the current schema; dropped by `cleanup` when `drop`. Its URL. */
export async function migratedDatabase(cleanup: Cleanup | null, serverUrl: string, name: string, drop = false): Promise<string> {
  const databaseUrl = await ensureDatabase(serverUrl, name);
  if (drop) cleanup?.add(`drop database ${name}`, () => dropDatabase(serverUrl, name), 20_000);
  await migrate(databaseUrl);
  return databaseUrl;
}
