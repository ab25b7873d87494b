/**
 * The embedded PostgreSQL's password is its own, random, kept in a 0600 file beside the cluster
 * (src/infra/postgres.ts pgPasswordFile), not the fixed `postgres` every local user could log in
 * with. A cluster made before keeps its data and is moved to a random password at its next start.
 */
import { mkdtempSync, rmSync, statSync, readFileSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { freePort } from '../../src/infra/ports';
import { pgPasswordFile, startEmbeddedPostgres, type EmbeddedPg } from '../../src/infra/postgres';

let base: string;
let pg: EmbeddedPg | null = null;

beforeAll(() => {
  base = mkdtempSync(path.join(process.env.OD_TEST_TMP ?? os.tmpdir(), 'od-pgpw-'));
});
afterAll(async () => {
  await pg?.stop();
  rmSync(base, { recursive: true, force: true });
});

/** Whether `password` opens the server on `port`. */
async function opens(port: number, password: string): Promise<boolean> {
  const c = new Client({ connectionString: `postgres://postgres:${password}@127.0.0.1:${port}/postgres` });
  try {
    await c.connect();
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

async function query(url: string, sql: string): Promise<unknown[]> {
  const c = new Client({ connectionString: `${url}/postgres` });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

test('a new cluster gets a random password in a 0600 file; the old default does not open it', async () => {
  const dataDir = path.join(base, 'fresh', 'pg');
  const port = await freePort();
  pg = await startEmbeddedPostgres({ dataDir, port });
  const file = pgPasswordFile(dataDir);
  expect(file).toBe(path.join(base, 'fresh', 'pg.password'));
  expect(statSync(file).mode & 0o777).toBe(0o600);
  const pw = readFileSync(file, 'utf8').trim();
  expect(pw).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(pg.serverUrl).toBe(`postgres://postgres:${pw}@127.0.0.1:${port}`);
  expect(await opens(port, pw)).toBe(true);
  expect(await opens(port, 'postgres')).toBe(false);
  await pg.stop();
  pg = null;
}, 120_000);

test('a cluster on the old default password keeps its data and is moved to a random one', async () => {
  const dataDir = path.join(base, 'legacy', 'pg');
  const port = await freePort();
  pg = await startEmbeddedPostgres({ dataDir, port });
  // Make it what a cluster initialised before looked like: the fixed password, no password file.
  await query(pg.serverUrl, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('before')");
  await query(pg.serverUrl, "ALTER ROLE postgres PASSWORD 'postgres'");
  await pg.stop();
  unlinkSync(pgPasswordFile(dataDir));

  const notes: string[] = [];
  pg = await startEmbeddedPostgres({ dataDir, port, onNote: (l) => notes.push(l) });
  const pw = readFileSync(pgPasswordFile(dataDir), 'utf8').trim();
  expect(statSync(pgPasswordFile(dataDir)).mode & 0o777).toBe(0o600);
  expect(pw).not.toBe('postgres');
  expect(await opens(port, 'postgres')).toBe(false);
  expect(await opens(port, pw)).toBe(true);
  expect(await query(pg.serverUrl, 'SELECT v FROM kept')).toEqual([{ v: 'before' }]);
  expect(notes.join('\n')).toMatch(/password is now a random one/);
  expect(notes.join('\n')).not.toContain(pw);
  await pg.stop();

  // The next start reads the file: the same password, nothing to move.
  pg = await startEmbeddedPostgres({ dataDir, port });
  expect(pg.serverUrl).toContain(`:${pw}@`);
  await pg.stop();
  pg = null;
}, 180_000);
