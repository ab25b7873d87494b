import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { OwnershipClient } from '../client';
import type { Config } from '../config';
import { assertPortFree } from '../infra/ports';
import { createPool } from '../store/db';
import { buildServer } from './server';

export interface RunningApi {
  url: string;
  app: FastifyInstance;
  pool: Pool;
  stop(): Promise<void>;
}

/** Connects to Temporal and PostgreSQL and listens; `cfg.temporalAddress` and `cfg.databaseUrl` must be set. */
export async function startApi(cfg: Config): Promise<RunningApi> {
  await assertPortFree(cfg.apiPort, 'OD_API_PORT', cfg.apiHost);
  const connection = await Connection.connect({ address: cfg.temporalAddress });
  const temporal = new Client({ connection, namespace: cfg.temporalNamespace });
  const pool = createPool(cfg.databaseUrl);
  const client = new OwnershipClient({
    client: temporal,
    taskQueue: cfg.taskQueue,
    hostId: cfg.hostId,
    allowedRoots: cfg.allowedRoots,
    settings: {
      leaseTtlMs: cfg.leaseTtlMs,
      heartbeatLogIntervalMs: cfg.heartbeatLogIntervalMs,
      handoffTimeoutMs: cfg.handoffTimeoutMs,
      maxHistoryEvents: cfg.maxHistoryEvents,
    },
  });
  const app = await buildServer({ config: cfg, temporal, client, pool });
  await app.listen({ host: cfg.apiHost, port: cfg.apiPort });
  const shownHost = cfg.apiHost === '0.0.0.0' ? '127.0.0.1' : cfg.apiHost;
  return {
    url: `http://${shownHost}:${cfg.apiPort}`,
    app,
    pool,
    async stop() {
      await app.close();
      await pool.end();
      await connection.close();
    },
  };
}
