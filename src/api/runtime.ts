import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { Pool } from '../store/db';
import type { Logger } from 'pino';
import { loadAuthenticator, type Authenticator } from '../auth/principals';
import { OwnershipClient } from '../client';
import { ownershipSettingsOf, type Config } from '../config';
import { createLogger } from '../infra/logger';
import { assertPortFree } from '../infra/ports';
import { createPool } from '../store/db';
import { buildServer } from './server';
import { TEMPORAL_CHANNEL_ARGS } from '../client/channel';
import { dataConverterOf } from '../infra/payload-codec';
import { loadKeyring, type MessageKeyring } from '../keys/message-seal';

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

/** The principals the API authenticates: OD_TOKENS_FILE (cfg.tokensFile) and/or OD_TOKENS (cfg.tokensJson). */
export function authenticatorFromConfig(cfg: Config): Authenticator {
  return loadAuthenticator({ tokensFile: cfg.tokensFile || undefined, tokensJson: cfg.tokensJson || undefined });
}

export interface Backends {
  temporal: Client;
  client: OwnershipClient;
  pool: Pool;
  /** the service key the client's messages are sealed with, loaded once; tenure secrets come from it too */
  keyring: () => MessageKeyring;
  close(): Promise<void>;
}

/** The Temporal client, OwnershipClient and pool of the service, from config (the API and the MCP stdio server in direct mode). */
export async function connectBackends(cfg: Config): Promise<Backends> {
  const connection = await Connection.connect({ address: cfg.temporalAddress, channelArgs: { ...TEMPORAL_CHANNEL_ARGS } });
  const keyring = loadKeyring(cfg);
  const temporal = new Client({
    connection,
    namespace: cfg.temporalNamespace,
    dataConverter: dataConverterOf({ keyring, payloadKeyFile: cfg.payloadKeyFile }),
  });
  const pool = createPool(cfg.databaseUrl);
  const client = new OwnershipClient({
    client: temporal,
    taskQueue: cfg.taskQueue,
    hostId: cfg.hostId,
    allowedRoots: cfg.allowedRoots,
    settings: ownershipSettingsOf(cfg),
  });
  return {
    temporal,
    client,
    pool,
    keyring: () => keyring,
    async close() {
      await pool.end();
      await connection.close();
    },
  };
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
