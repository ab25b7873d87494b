/**
 * `worktree-ownership`: the Temporal-level OwnershipClient, for code that runs next to the
 * service (same Temporal namespace and task queue; on the worktrees' host for a local bind):
 * every message is validated before it reaches a workflow. Orchestrators that hold a bearer token
 * use `worktree-ownership/http` instead; the wire schemas are in `worktree-ownership/schemas`.
 */

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
export type { LivenessState, ProjectionState, ProjectionSync } from '../client';
export type { OwnershipSettings } from '../domain/settings';
export { connectOwnershipClient, type ConnectOptions, type ConnectedOwnershipClient } from '../client/connect';
export { REASONS, type ReasonCode } from '../domain/reasons';
export { PACKAGE_VERSION, WIRE_MAJOR, WIRE_VERSION, VERSION_INFO, type VersionInfo } from '../version';
