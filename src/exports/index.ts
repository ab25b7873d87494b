import path from 'node:path';
/**
 * `worktree-ownership`: the Temporal-level OwnershipClient, for code that runs next to the
 * service (same Temporal namespace and task queue; on the worktrees' host for a local bind):
 * every message is validated before it reaches a workflow. Orchestrators that hold a bearer token
 * use `worktree-ownership/http` instead; the wire schemas are in `worktree-ownership/schemas`.
 */
import { Client, Connection } from '@temporalio/client';
import { OwnershipClient, type OwnershipClientOptions } from '../client';
import { TEMPORAL_CHANNEL_ARGS } from '../client/channel';
import { dataConverterOf } from '../infra/payload-codec';

export {
  BindRequestSchema,
  OwnershipClient,
  OwnershipError,
  type BindRequest,
  type OwnershipClientOptions,
  type OwnershipEvent,
  type OwnershipRecord,
  type OwnershipRef,
  type OwnershipView,
} from '../client';
export type { LivenessState, ProjectionState, ProjectionSync } from '../workflows/messages';
export type { OwnershipSettings } from '../workflows/ownership';
export { REASONS, type ReasonCode } from '../domain/reasons';
export { PACKAGE_VERSION, WIRE_MAJOR, WIRE_VERSION, VERSION_INFO, type VersionInfo } from '../version';

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
}

export interface ConnectedOwnershipClient {
  ownership: OwnershipClient;
  temporal: Client;
  /** closes the gRPC connection; nothing else is held open */
  close(): Promise<void>;
}

/** An OwnershipClient on its own Temporal connection, with the service's defaults. */
export async function connectOwnershipClient(opts: ConnectOptions): Promise<ConnectedOwnershipClient> {
  const { address, namespace = 'default', taskQueue = 'ownership', payloadKeyFile = '', serviceKeyFile = '', dataDir = '.data', ...rest } = opts;
  const connection = await Connection.connect({ address, channelArgs: { ...TEMPORAL_CHANNEL_ARGS } });
  const temporal = new Client({ connection, namespace, dataConverter: dataConverterOf({ payloadKeyFile, serviceKeyFile, dataDir: path.resolve(dataDir) }) });
  return { ownership: new OwnershipClient({ ...rest, client: temporal, taskQueue }), temporal, close: () => connection.close() };
}
