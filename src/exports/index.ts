/**
 * `worktree-ownership`: the Temporal-level OwnershipClient, for code that runs next to the
 * service (same Temporal namespace and task queue; on the worktrees' host for a local bind):
 * every message is validated before it reaches a workflow. Orchestrators that hold a bearer token
 * use `worktree-ownership/http` instead; the wire schemas are in `worktree-ownership/schemas`.
 */
import type { WorktreeResolver } from '../client';
import { connectOwnershipClient as connectWith, type ConnectOptions as ClientConnectOptions, type ConnectedOwnershipClient } from '../client/connect';
import { gitWorktreeResolver } from '../adapters/worktree-resolver';

export {
  BindRequestSchema,
  OwnershipClient,
  OwnershipError,
  type BindRequest,
  type LocalWorktree,
  type OwnershipClientOptions,
  type OwnershipEvent,
  type OwnershipRecord,
  type OwnershipRef,
  type OwnershipView,
  type WorktreeResolver,
} from '../client';
export type { LivenessState, ProjectionState, ProjectionSync } from '../client';
export type { OwnershipSettings } from '../domain/settings';
export { gitWorktreeResolver, type ConnectedOwnershipClient };
export { REASONS, type ReasonCode } from '../domain/reasons';
export { PACKAGE_VERSION, WIRE_MAJOR, WIRE_VERSION, VERSION_INFO, type VersionInfo } from '../version';

export interface ConnectOptions extends Omit<ClientConnectOptions, 'resolver'> {
  /** default gitWorktreeResolver: git and /proc of the host this process runs on answer for its worktrees */
  resolver?: WorktreeResolver;
}

/**
 * An OwnershipClient on its own Temporal connection, with the service's defaults. The package's
 * user runs on the worktrees' host (a local bind), so git there answers for them unless the
 * caller brings its own resolver; the client module itself never loads git.
 */
export function connectOwnershipClient(opts: ConnectOptions): Promise<ConnectedOwnershipClient> {
  return connectWith({ ...opts, resolver: opts.resolver ?? gitWorktreeResolver });
}
