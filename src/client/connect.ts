import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { dataConverterOf } from '../infra/payload-codec';
import { temporalConnectionFromEnv, type TemporalConnectionOptions } from '../infra/temporal-connection';
import { OwnershipClient, type OwnershipClientOptions } from '.';
import { TEMPORAL_CHANNEL_ARGS } from './channel';

export interface ConnectOptions extends Omit<OwnershipClientOptions, 'client' | 'taskQueue'> {
  /** host:port of the Temporal frontend (the service's TEMPORAL_ADDRESS) */
  address: string;
  /** default `default` (TEMPORAL_NAMESPACE) */
  namespace?: string;
  /** default `ownership` (TEMPORAL_TASK_QUEUE) */
  taskQueue?: string;
  /** the deployment's OD_PAYLOAD_KEY_FILE, when it encrypts payloads */
  payloadKeyFile?: string;
  /** the deployment's OD_SERVICE_KEY_FILE: messages without its seal are refused (default: dataDir/service.key) */
  serviceKeyFile?: string;
  /** default `.data` (OD_DATA_DIR) */
  dataDir?: string;
  /**
   * TLS, mTLS and API key of the connection (src/infra/temporal-connection.ts). Default: the
   * deployment's, from OD_TEMPORAL_TLS* and OD_TEMPORAL_API_KEY_FILE in this process's environment.
   */
  connection?: TemporalConnectionOptions;
}

export interface ConnectedOwnershipClient {
  ownership: OwnershipClient;
  temporal: Client;
  /** closes the gRPC connection; nothing else is held open */
  close(): Promise<void>;
}

/** An OwnershipClient on its own Temporal connection, with the service's defaults. */
export async function connectOwnershipClient(opts: ConnectOptions): Promise<ConnectedOwnershipClient> {
  const {
    address,
    namespace = 'default',
    taskQueue = 'ownership',
    payloadKeyFile = '',
    serviceKeyFile = '',
    dataDir = '.data',
    connection: secured,
    ...rest
  } = opts;
  const connection = await Connection.connect({ address, ...(secured ?? temporalConnectionFromEnv()), channelArgs: { ...TEMPORAL_CHANNEL_ARGS } });
  const temporal = new Client({ connection, namespace, dataConverter: dataConverterOf({ payloadKeyFile, serviceKeyFile, dataDir: path.resolve(dataDir) }) });
  return { ownership: new OwnershipClient({ ...rest, client: temporal, taskQueue }), temporal, close: () => connection.close() };
}
