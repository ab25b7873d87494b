import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/principals';
import type { Config } from '../config';
import { createLogger } from '../infra/logger';
import { assertPortFree } from '../infra/ports';
import type { Pool } from '../store/db';
import { authenticatorFromConfig, connectBackends } from '../api/service/backends';
import { buildServer } from './app';

export interface RunningApi {
  url: string;
  app: FastifyInstance;
  pool: Pool;
  stop(): Promise<void>;
}

export interface StartApiOptions {
  /** default: from OD_TOKENS_FILE and OD_TOKENS; neither set is a configuration error */
  authenticator?: Authenticator;
  logger?: Logger;
}

/** Connects to Temporal and PostgreSQL and listens; `cfg.temporalAddress` and `cfg.databaseUrl` must be set. */
export async function startApi(cfg: Config, opts: StartApiOptions = {}): Promise<RunningApi> {
  const authenticator = opts.authenticator ?? authenticatorFromConfig(cfg);
  await assertPortFree(cfg.apiPort, 'OD_API_PORT', cfg.apiHost);
  const backends = await connectBackends(cfg);
  const { temporal, client, pool } = backends;
  const app = await buildServer({
    config: cfg,
    temporal,
    client,
    pool,
    keyring: backends.keyring(),
    authenticator,
    logger: opts.logger ?? createLogger(cfg.logLevel),
  });
  await app.listen({ host: cfg.apiHost, port: cfg.apiPort });
  const shownHost = cfg.apiHost === '0.0.0.0' ? '127.0.0.1' : cfg.apiHost;
  return {
    url: `http://${shownHost}:${cfg.apiPort}`,
    app,
    pool,
    async stop() {
      await app.close();
      await backends.close();
    },
  };
}
