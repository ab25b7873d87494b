import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { checkHealth, type HealthDeps, type HealthReport } from '../src/api/service/health';
import { startApi } from '../src/server/runtime';
import { createDevTokens, devSecretFile } from '../src/auth/principals';
import { loadConfig, type Config } from '../src/config';
import { hostTaskQueue } from '../src/domain/queues';
import { createLogger } from '../src/infra/logger';
import { assertPortFree, PortInUseError } from '../src/infra/ports';
import { ensureDatabase, startEmbeddedPostgres } from '../src/infra/postgres';
import { createShutdown, type Shutdown } from '../src/infra/shutdown';
import { startDevServer } from '../src/infra/temporal-dev-server';
import { temporalConnectionFromEnv } from '../src/infra/temporal-connection';
import { createWorkersFromConfig, installTemporalLogging } from '../src/infra/workers';
import { createPool, migrate } from '../src/store/db';

/**
 * `npm start`: the whole service on one machine. A Temporal dev server (SQLite in OD_DATA_DIR, WAL,
 * UI on TEMPORAL_UI_PORT, search attributes registered) unless TEMPORAL_ADDRESS is set; PostgreSQL
 * from DATABASE_URL or embedded under OD_DATA_DIR; migrations; the worker; the HTTP API.
 *
 * Quiet once running: the banner, then nothing at the default LOG_LEVEL unless something is
 * wrong. Every way of stopping (Ctrl-C, SIGTERM or SIGHUP to this process or its whole group, the
 * launching npm going away, a failed start) runs one ordered stop (src/infra/shutdown.ts): API,
 * then workers, then PostgreSQL and the dev server's whole process group, within 10 s, and
 * prints `stopped.`.
 */

const say = (m: string) => process.stdout.write(`${m}\n`);
const warn = (m: string) => process.stderr.write(`start: ${m}\n`);

/** Tiers of the ordered stop: higher stops first. */
const TIER = { backends: 0, workers: 1, api: 2 } as const;

async function main(sd: Shutdown, cfg: Config): Promise<void> {
  const log = createLogger(cfg.logLevel).child({ component: 'start' });
  // Temporal's runtime would react to SIGINT/SIGTERM by itself, racing the ordered stop: it is told not to.
  installTemporalLogging(log, { shutdownSignals: [] });

  await preflight(cfg);
  // TLS, mTLS and API key of every connection to Temporal (docs/operations.md#temporal-tls); none for the dev server started here.
  const secured = temporalConnectionFromEnv();
  mkdirSync(cfg.dataDir, { recursive: true });

  let temporalAddress = cfg.temporalAddress;
  let uiUrl: string | null = null;
  if (!temporalAddress) {
    say(`starting Temporal dev server on 127.0.0.1:${cfg.temporalPort} (UI ${cfg.temporalUiPort}), data ${path.join(cfg.dataDir, 'temporal.sqlite')}`);
    let handle: { release(): void } | null = null;
    const server = await startDevServer({
      port: cfg.temporalPort,
      uiPort: cfg.temporalUiPort,
      dbFile: path.join(cfg.dataDir, 'temporal.sqlite'),
      logFile: (line) => log.debug({ temporal: line.trim() }),
      onSpawn: (pid) => (handle = sd.child(pid, { group: true, signal: 'TERM' })),
    });
    sd.add('the Temporal dev server', () => server.stop(4_000).then(() => handle?.release()), { tier: TIER.backends, timeoutMs: 6_000 });
    temporalAddress = server.address;
    uiUrl = server.uiUrl;
  }
  if (sd.stopping) return;

  let databaseUrl = cfg.databaseUrl;
  if (!databaseUrl) {
    say(`starting embedded PostgreSQL on 127.0.0.1:${cfg.pgPort}, data ${path.join(cfg.dataDir, 'pg')}`);
    const handles: Array<{ release(): void }> = [];
    const pg = await startEmbeddedPostgres({
      dataDir: path.join(cfg.dataDir, 'pg'),
      port: cfg.pgPort,
      ownGroup: true,
      log: (l) => log.debug({ postgres: l.trim() }),
      onSpawn: (pid, what) => handles.push(sd.child(pid, { group: what === 'postgres', signal: what === 'postgres' ? 'INT' : 'TERM' })),
      onNote: (line) => say(`note: ${line}`),
    });
    sd.add('the embedded PostgreSQL', () => pg.stop(3_000).then(() => handles.forEach((h) => h.release())), { tier: TIER.backends, timeoutMs: 6_000 });
    if (sd.stopping) return;
    databaseUrl = await ensureDatabase(pg.serverUrl, 'ownership');
  }
  const applied = await migrate(databaseUrl);
  say(applied.length ? `migrations applied: ${applied.join(', ')}` : 'database schema up to date');
  if (sd.stopping) return;

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
  const connection = await NativeConnection.connect({ address: temporalAddress, ...secured });
  const pool = createPool(databaseUrl);
  const workers = await createWorkersFromConfig(cfg, connection, pool);
  const running = workers.map((w) => w.run());
  sd.add(
    'the workers',
    async () => {
      workers.forEach((w) => w.getState() === 'RUNNING' && w.shutdown());
      await Promise.allSettled(running);
      await pool.end();
      await connection.close();
    },
    { tier: TIER.workers, timeoutMs: 5_000 },
  );
  for (const r of running)
    void r.catch((err: unknown) => {
      if (sd.stopping) return;
      warn(`a worker failed: ${err instanceof Error ? err.message : String(err)}`);
      void sd.run(1, 'a worker failed');
    });
  if (sd.stopping) return;

  const api = await startApi(full);
  sd.add('the API', () => api.stop(), { tier: TIER.api, timeoutMs: 3_000 });
  if (sd.stopping) return;

  // The banner tells people (and scripts waiting for it) that the service is up: it comes once
  // /healthz would answer 200. The API listens before the workers' first polls have necessarily
  // reached Temporal (later still on a loaded machine); until they do, its poller list is empty and
  // /healthz answers 503, each one a warning line after the banner, as a newcomer's first probes found.
  const report = await untilHealthy(sd, {
    temporal: new Client({ connection, namespace: cfg.temporalNamespace }),
    pool,
    namespace: cfg.temporalNamespace,
    taskQueue: cfg.taskQueue,
    hostTaskQueue: hostTaskQueue(cfg.hostId),
    hostId: cfg.hostId,
  });
  if (sd.stopping) return;
  if (!report.ok) warn(`not healthy ${HEALTHY_WITHIN_MS / 1000} s after starting: ${report.problems.map((p) => p.message).join('; ')}`);

  say('');
  say(`  API          ${api.url}   (health: ${api.url}/healthz, docs: ${api.url}/docs)`);
  if (uiUrl) say(`  Temporal UI  ${uiUrl}`);
  say(`  Temporal     ${temporalAddress} (namespace ${cfg.temporalNamespace}, task queue ${cfg.taskQueue})`);
  say(`  PostgreSQL   ${cfg.databaseUrl ? 'DATABASE_URL' : `embedded, ${path.join(cfg.dataDir, 'pg')}`}`);
  if (devSecret) say(`  Dev tokens   ${devSecret} (admin, landing, reader, executor for worker dev-worker; this machine only)`);
  say('');
  say('Ctrl-C stops everything.');
}

const HEALTHY_WITHIN_MS = 20_000;

/** The health report once it is ok, or the last one after HEALTHY_WITHIN_MS (or when a stop began). */
async function untilHealthy(sd: Shutdown, deps: HealthDeps): Promise<HealthReport> {
  const deadline = Date.now() + HEALTHY_WITHIN_MS;
  for (;;) {
    const report = await checkHealth(deps);
    if (report.ok || sd.stopping || Date.now() >= deadline) return report;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every port we are about to bind, checked up front, so a clash names the variable that moves it (and a leftover holder, its pid). */
async function preflight(cfg: Config): Promise<void> {
  const ctx = { dataDir: cfg.dataDir };
  await assertPortFree(cfg.apiPort, 'OD_API_PORT', cfg.apiHost, ctx);
  if (!cfg.temporalAddress) {
    // The dev server started here speaks plaintext: a TLS or API key setting would fail every connection to it.
    const secured = temporalConnectionFromEnv();
    if (secured.tls !== undefined || secured.apiKey !== undefined)
      throw new Error(
        'OD_TEMPORAL_TLS* / OD_TEMPORAL_API_KEY_FILE are set but TEMPORAL_ADDRESS is not: the dev server `npm start` runs has no TLS; set TEMPORAL_ADDRESS to your TLS frontend, or unset them',
      );
    await assertPortFree(cfg.temporalPort, 'TEMPORAL_PORT', '127.0.0.1', ctx);
    await assertPortFree(cfg.temporalUiPort, 'TEMPORAL_UI_PORT', '127.0.0.1', ctx);
  }
  if (!cfg.databaseUrl) await assertPortFree(cfg.pgPort, 'OD_PG_PORT', '127.0.0.1', ctx);
}

function describe(err: unknown): string {
  if (err instanceof PortInUseError) return err.message;
  const e = err as NodeJS.ErrnoException;
  // A permission problem is the user's to fix: say which path, not where in our code it surfaced.
  if (e?.code === 'EACCES' || e?.code === 'EPERM') return `${e.message} (check that this user may write there, or set OD_DATA_DIR)`;
  if (err instanceof Error) return process.env.LOG_LEVEL === 'debug' ? (err.stack ?? err.message) : err.message;
  return String(err);
}

const sd = createShutdown({ say, warn });
let cfg: Config;
try {
  cfg = loadConfig();
} catch (err) {
  warn(describe(err));
  process.exit(2);
}
main(sd, cfg).catch((err: unknown) => {
  if (sd.stopping) return;
  warn(describe(err));
  void sd.run(1);
});
