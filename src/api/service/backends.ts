import { Client, Connection } from '@temporalio/client';
import type { Pool } from '../../store/db';
import { loadAuthenticator, type Authenticator } from '../../auth/principals';
import { OwnershipClient } from '../../client';
import { gitWorktreeResolver } from '../../adapters/worktree-resolver';
import { ownershipSettingsOf, type Config } from '../../config';
import { createPool } from '../../store/db';
import { TEMPORAL_CHANNEL_ARGS } from '../../client/channel';
import { dataConverterOf } from '../../infra/payload-codec';
import { temporalConnectionFromEnv } from '../../infra/temporal-connection';
import { loadKeyring, type MessageKeyring } from '../../keys/message-seal';

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
  const connection = await Connection.connect({ address: cfg.temporalAddress, ...temporalConnectionFromEnv(), channelArgs: { ...TEMPORAL_CHANNEL_ARGS } });
  const keyring = loadKeyring(cfg);
  const temporal = new Client({
    connection,
    namespace: cfg.temporalNamespace,
    dataConverter: dataConverterOf({ keyring, payloadKeyFile: cfg.payloadKeyFile }),
  });
  const pool = createPool(cfg.databaseUrl);
  const client = new OwnershipClient({
    client: temporal,
    resolver: gitWorktreeResolver,
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
