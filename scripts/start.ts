import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { NativeConnection, Runtime, DefaultLogger } from '@temporalio/worker';
import { startApi, type RunningApi } from '../src/api/runtime';
import { createDevTokens, devSecretFile } from '../src/auth/principals';
import { loadConfig, type Config } from '../src/config';
import { createLogger } from '../src/infra/logger';
import { assertPortFree, PortInUseError } from '../src/infra/ports';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedPg } from '../src/infra/postgres';
import { startDevServer, type DevServer } from '../src/infra/temporal-dev-server';
import { createWorkersFromConfig } from '../src/infra/workers';
import { createPool, migrate } from '../src/store/db';

/**
 * `npm start`: the whole service on one machine. A Temporal dev server (SQLite in OD_DATA_DIR, WAL,
 * UI on TEMPORAL_UI_PORT, search attributes registered) unless TEMPORAL_ADDRESS is set; PostgreSQL
 * from DATABASE_URL or embedded under OD_DATA_DIR; migrations; the worker; the HTTP API.
 * SIGINT/SIGTERM stop everything in reverse order within 10 s.
 */
async function main(): Promise<void> {
  const cfg = loadConfig();
  const log = createLogger(cfg.logLevel).child({ component: 'start' });
  const say = (m: string) => process.stdout.write(`${m}\n`);
  const stops: Array<() => Promise<void>> = [];
  let stopping = false;

  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping…');
    const hardExit = setTimeout(() => {
      process.stderr.write('shutdown took longer than 10 s; exiting anyway\n');
      process.exit(code || 1);
    }, 9_500);
    hardExit.unref();
    for (const stop of stops.reverse()) await stop().catch((err) => log.warn({ err: String(err) }, 'stop step failed'));
    say('stopped.');
    process.exit(code);
  };
  process.once('SIGINT', () => void shutdown(0));
  process.once('SIGTERM', () => void shutdown(0));

  try {
    await preflight(cfg);
    mkdirSync(cfg.dataDir, { recursive: true });

    let temporalAddress = cfg.temporalAddress;
    let uiUrl: string | null = null;
    if (!temporalAddress) {
      say(`starting Temporal dev server on 127.0.0.1:${cfg.temporalPort} (UI ${cfg.temporalUiPort}), data ${path.join(cfg.dataDir, 'temporal.sqlite')}`);
      const server: DevServer = await startDevServer({
        port: cfg.temporalPort,
        uiPort: cfg.temporalUiPort,
        dbFile: path.join(cfg.dataDir, 'temporal.sqlite'),
        logFile: (line) => log.debug({ temporal: line.trim() }),
      });
      stops.push(() => server.stop());
      temporalAddress = server.address;
      uiUrl = server.uiUrl;
    }

    let databaseUrl = cfg.databaseUrl;
    if (!databaseUrl) {
      say(`starting embedded PostgreSQL on 127.0.0.1:${cfg.pgPort}, data ${path.join(cfg.dataDir, 'pg')}`);
      const pg: EmbeddedPg = await startEmbeddedPostgres({ dataDir: path.join(cfg.dataDir, 'pg'), port: cfg.pgPort, log: (l) => log.debug({ postgres: l.trim() }) });
      stops.push(() => pg.stop());
      databaseUrl = await ensureDatabase(pg.serverUrl, 'ownership');
    }
    const applied = await migrate(databaseUrl);
    say(applied.length ? `migrations applied: ${applied.join(', ')}` : 'database schema up to date');

    // No principals configured: generate local dev tokens (hashes for the server, clear tokens in a
    // 0600 file for this machine's user). Only the file's path is ever printed.
    let tokensFile = cfg.tokensFile;
    let devSecret: string | null = null;
    if (!tokensFile && !cfg.tokensJson) {
      tokensFile = path.join(cfg.dataDir, 'dev-principals.json');
      createDevTokens(tokensFile);
      devSecret = devSecretFile(tokensFile);
    }
    const full: Config = { ...cfg, temporalAddress, databaseUrl, tokensFile };
    Runtime.install({ logger: new DefaultLogger(cfg.logLevel === 'debug' ? 'DEBUG' : 'WARN') });
    const connection = await NativeConnection.connect({ address: temporalAddress });
    const pool = createPool(databaseUrl);
    const workers = await createWorkersFromConfig(cfg, connection, pool);
    const running = workers.map((w) => w.run());
    stops.push(async () => {
      // Temporal's runtime also reacts to SIGINT/SIGTERM by itself; only stop what still runs.
      workers.forEach((w) => w.getState() === 'RUNNING' && w.shutdown());
      await Promise.allSettled(running);
      await pool.end();
      await connection.close();
    });
    running.forEach((r) => r.catch((err) => {
      log.error({ err: String(err) }, 'worker failed');
      void shutdown(1);
    }));

    const api: RunningApi = await startApi(full);
    stops.push(() => api.stop());

    say('');
    say(`  API          ${api.url}   (health: ${api.url}/healthz, docs: ${api.url}/docs)`);
    if (uiUrl) say(`  Temporal UI  ${uiUrl}`);
    say(`  Temporal     ${temporalAddress} (namespace ${cfg.temporalNamespace}, task queue ${cfg.taskQueue})`);
    say(`  PostgreSQL   ${cfg.databaseUrl ? 'DATABASE_URL' : `embedded, ${path.join(cfg.dataDir, 'pg')}`}`);
    if (devSecret) say(`  Dev tokens   ${devSecret} (admin, landing, reader, executor for worker dev-worker; this machine only)`);
    say('');
    say('Ctrl-C stops everything.');
  } catch (err) {
    if (err instanceof PortInUseError) process.stderr.write(`start: ${err.message}\n`);
    else process.stderr.write(`start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    await shutdown(1);
  }
}

/** Every port we are about to bind, checked up front, so a clash names the variable that moves it. */
async function preflight(cfg: Config): Promise<void> {
  await assertPortFree(cfg.apiPort, 'OD_API_PORT', cfg.apiHost);
  if (!cfg.temporalAddress) {
    await assertPortFree(cfg.temporalPort, 'TEMPORAL_PORT');
    await assertPortFree(cfg.temporalUiPort, 'TEMPORAL_UI_PORT');
  }
  if (!cfg.databaseUrl) await assertPortFree(cfg.pgPort, 'OD_PG_PORT');
}

void main();
