import type { DataConverter } from '@temporalio/common';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import type { Pool } from 'pg';
import { noAuthority } from '../src/activities/liveness';
import { OwnershipClient } from '../src/client';
import { gitWorktreeResolver } from '../src/adapters/worktree-resolver';
import { freePort } from '../src/infra/ports';
import { type Tenure } from '../src/domain/tenure';
import { tenureSecret } from '../src/keys/tenure';
import { loadKeyring } from '../src/keys/message-seal';
import { dataConverterOf } from '../src/infra/payload-codec';
import { createWorkers } from '../src/infra/workers';
import { createPool } from '../src/store/db';
import type { OwnershipSettings } from '../src/workflows/ownership';
import { writeWorkflowBundle } from '../stack/bundle';
import type { Cleanup } from '../stack/cleanup';
import { migratedDatabase, startPostgres } from '../stack/postgres';
import { makeRunDir } from '../stack/run-dir';
import { startTemporal } from '../stack/temporal';

export interface BenchStack {
  /** the stack's data converter: its own service key (src/keys/message-seal.ts) */
  dataConverter: DataConverter;
  /** The secret the API would answer for a tenure (this stack's service key): what a session bound through `ownership` runs git with. */
  tenureSecret: (t: Tenure) => string;
  /** Realpath of the run's temp dir: repositories, the Temporal SQLite file, the embedded PostgreSQL. */
  root: string;
  temporalAddress: string;
  databaseUrl: string;
  pgSource: 'DATABASE_URL' | 'embedded';
  /** A pool for the bench's own reads and writes (the worker has its own, as in production). */
  pool: Pool;
  temporal: Client;
  ownership: OwnershipClient;
  taskQueue: string;
  hostId: string;
  workers: Worker[];
  workerPool: Pool;
  /** Core's Prometheus endpoint (worker and native-connection metrics). */
  metricsUrl: string;
  /** Size of the product's workflow bundle (every cached workflow instantiates its modules). */
  bundleBytes: number;
  bundlePath: string;
  settings: Partial<OwnershipSettings>;
}

export const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/**
 * Two background behaviours are pushed past the run, both real but neither the cost of an
 * operation measured here:
 * - liveness: an owner bound early and not heartbeated again would ask the liveness authority
 *   every 60 s (leaseTtlMs);
 * - the periodic durable heartbeat (one event + one projection write per owner per 5 min,
 *   heartbeatLogIntervalMs): every owner of the run is bound within the same few minutes, so it
 *   would fire for all of them at once, in whichever heartbeat block happens to cross the 5 min
 *   mark, instead of spread out as in production. Its steady-state cost is reported separately.
 * Everything else is the production default.
 */
export const BENCH_SETTINGS: Partial<OwnershipSettings> = { leaseTtlMs: 60 * 60_000, heartbeatLogIntervalMs: 60 * 60_000 };

/**
 * The bench's own ephemeral stack, isolated from `npm start` and `npm test`: a Temporal dev server
 * on free ports persisting to a SQLite file (WAL) in a temp dir, a fresh database (on DATABASE_URL's
 * server, else on an embedded PostgreSQL in the temp dir), migrations, a workflow bundle built once
 * and the production worker pair (createWorkers) on a task queue of its own.
 */
export async function startStack(cleanup: Cleanup): Promise<BenchStack> {
  const started = Date.now();
  const root = makeRunDir('bench', cleanup);

  const server = await startTemporal(cleanup, { port: await freePort(), uiPort: null, dbFile: path.join(root, 'temporal', 'temporal.sqlite') });
  log(`Temporal dev server on ${server.address} (SQLite WAL in ${path.join(root, 'temporal')}) after ${Date.now() - started} ms`);

  const { serverUrl, source: pgSource } = await startPostgres(cleanup, { dir: root, preferDatabaseUrl: true });
  const dbName = `od_bench_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const databaseUrl = await migratedDatabase(cleanup, serverUrl, dbName, true);
  log(`PostgreSQL (${pgSource}) database ${dbName} migrated after ${Date.now() - started} ms`);

  // The product's workflows plus the bench's no-op baseline (bench/workflows), which production never registers.
  const bundle = await writeWorkflowBundle(log, path.resolve(__dirname, 'workflows/index.ts'));
  const bundlePath = bundle.path;
  log(`workflow bundle ${bundle.cached ? 'from the cache' : 'built'} after ${Date.now() - started} ms`);

  // Core's own metrics (Prometheus, scraped by bench/metrics.ts) give the worker-side breakdowns.
  const metricsPort = await freePort();
  // OD_CORE_DEBUG_LOG=<file>: every activation the SDK sends the workflows (its jobs, live or replaying), for
  // comparing a run's live activations with its replay when a history does not replay.
  const activations = process.env.OD_CORE_DEBUG_LOG ? createWriteStream(process.env.OD_CORE_DEBUG_LOG) : null;
  Runtime.install({
    logger: activations
      ? new DefaultLogger('DEBUG', (e) => {
          if (e.message.includes('activation') || e.level === 'WARN' || e.level === 'ERROR')
            activations.write(`${Number(e.timestampNanos / 1_000_000n)} ${e.level} ${e.message} ${JSON.stringify(e.meta ?? {})}\n`);
        })
      : new DefaultLogger('WARN'),
    telemetryOptions: {
      // Core's own warnings (e.g. a workflow task over 5 s) go to stderr with the rest, not into the table.
      logging: { filter: activations ? { core: 'DEBUG', other: 'WARN' } : { core: 'WARN', other: 'ERROR' }, forward: {} },
      metrics: { prometheus: { bindAddress: `127.0.0.1:${metricsPort}` } },
    },
  });
  const suffix = Math.random().toString(36).slice(2, 8);
  const taskQueue = `bench-${suffix}`;
  const hostId = `bench-host-${suffix}`;
  const connection = await NativeConnection.connect({ address: server.address });
  const workerPool = createPool(databaseUrl);
  // The stack's own service key, in its temp dir: its workers and clients seal and prove with it.
  const dataConverter = dataConverterOf({ payloadKeyFile: '', serviceKeyFile: '', dataDir: root });
  const serviceKey = loadKeyring({ serviceKeyFile: '', dataDir: root }).sealing.key;
  /** The secret the API would answer for a tenure, for sessions bound through the typed client. */
  const tenureSecretOf = (t: Tenure): string => tenureSecret(serviceKey, t);
  const workers = await createWorkers({
    connection,
    namespace: 'default',
    taskQueue,
    hostId,
    allowedRoots: [root],
    authority: noAuthority,
    pool: workerPool,
    dataConverter,
    workflowBundle: { codePath: bundlePath },
    identity: `bench-${process.pid}`,
    // As production would run 10,000 live ownerships: the cache capped (OD_MAX_CACHED_WORKFLOWS), the rest replay on their next message.
    ...(maxCached() > 0 ? { maxCachedWorkflows: maxCached() } : {}),
  });
  const running = workers.map((w) => w.run());
  for (const r of running) void r.catch((err: unknown) => log(`worker failed: ${err instanceof Error ? err.message : String(err)}`));
  cleanup.add(
    'stop workers',
    async () => {
      // Temporal's runtime also reacts to SIGINT/SIGTERM by itself; only stop what still runs.
      workers.forEach((w) => w.getState() === 'RUNNING' && w.shutdown());
      await Promise.allSettled(running);
      await connection.close();
      await workerPool.end();
    },
    30_000,
  );

  const clientConnection = await Connection.connect({ address: server.address });
  cleanup.add('close client connection', () => clientConnection.close());
  const temporal = new Client({ connection: clientConnection, namespace: 'default', dataConverter });
  const ownership = new OwnershipClient({ client: temporal, resolver: gitWorktreeResolver, taskQueue, hostId, allowedRoots: [root], settings: BENCH_SETTINGS });
  const pool = createPool(databaseUrl);
  cleanup.add('close bench pool', () => pool.end());
  log(`stack ready in ${Date.now() - started} ms (task queue ${taskQueue})`);
  return {
    root,
    temporalAddress: server.address,
    databaseUrl,
    pgSource,
    pool,
    temporal,
    ownership,
    taskQueue,
    hostId,
    workers,
    workerPool,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    bundleBytes: bundle.bytes,
    bundlePath,
    settings: BENCH_SETTINGS,
    dataConverter,
    tenureSecret: tenureSecretOf,
  };
}

/** The worker's workflow cache cap for this run: OD_MAX_CACHED_WORKFLOWS, else the SDK's default (0). */
export function maxCached(): number {
  const n = Number(process.env.OD_MAX_CACHED_WORKFLOWS ?? 0);
  return Number.isInteger(n) && n > 0 ? n : 0;
}

/** Waits until the workflow worker has had nothing in flight for `quietMs` (the queue drained). */
export async function waitIdle(stack: BenchStack, quietMs = 500, timeoutMs = 120_000): Promise<number> {
  const t0 = Date.now();
  let quietSince: number | null = null;
  while (Date.now() - t0 < timeoutMs) {
    const busy = stack.workers.some((w) => {
      const s = w.getStatus();
      return s.numInFlightWorkflowActivations > 0 || s.numInFlightActivities > 0;
    });
    if (busy) quietSince = null;
    else if (quietSince === null) quietSince = Date.now();
    else if (Date.now() - quietSince >= quietMs) return quietSince - t0;
    await new Promise((r) => setTimeout(r, 25));
  }
  return Date.now() - t0;
}
