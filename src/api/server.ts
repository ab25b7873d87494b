import Fastify, { type FastifyInstance } from 'fastify';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { OwnershipClient } from '../client';
import type { Config } from '../config';
import { hostTaskQueue } from '../domain/queues';
import { checkHealth } from './health';

export interface ApiDeps {
  config: Config;
  temporal: Client;
  client: OwnershipClient;
  pool: Pool;
  registry?: Registry;
}

/** The HTTP API. Routes are plugins so the server can be built in tests against the real stack. */
export async function buildServer(deps: ApiDeps): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
  const registry = deps.registry ?? new Registry();
  if (!deps.registry) collectDefaultMetrics({ register: registry });

  app.get('/healthz', async (_req, reply) => {
    const report = await checkHealth({
      temporal: deps.temporal,
      pool: deps.pool,
      namespace: deps.config.temporalNamespace,
      taskQueue: deps.config.taskQueue,
      hostTaskQueue: hostTaskQueue(deps.config.hostId),
    });
    return reply.code(report.ok ? 200 : 503).header('cache-control', 'no-store').send(report);
  });

  app.get('/metrics', async (_req, reply) => reply.header('content-type', registry.contentType).send(await registry.metrics()));

  return app;
}
