import type { Principal } from '../domain/identity';
import { refusal, type Refusal } from '../domain/reasons';

/**
 * Who may call which operation of the HTTP API / MCP server (docs/identities.md#principals). The matrix is data
 * so that it can be reviewed, documented and tested as a table. The workflow re-checks what
 * depends on state (ownership, epoch, worker, force) whatever entry path a message took.
 */

export { redactForExport, redactForPrincipal, REDACTED, type ExportRedactionOptions } from './redact';

export const OPERATIONS = [
  'bind',
  'heartbeat',
  'handoff',
  'acceptHandoff',
  'cancelHandoff',
  'release',
  'reclaim',
  'submit',
  'bindPlan',
  'renameBranch',
  'grantHold',
  'holdHeartbeat',
  'endHold',
  'tenure',
  'override',
  'landed',
  'worktreeRemoved',
  'removeWorktree',
  'reportConversation',
  'get',
  'list',
  'history',
  'provenance',
  'exportDiagnostics',
  'rebuildProjection',
  'decodePayloads',
] as const;
export type Operation = (typeof OPERATIONS)[number];

export type PrincipalKind = Principal['kind'];

const READ: readonly PrincipalKind[] = ['executor', 'landing', 'admin', 'reader'];
const EXECUTOR_WRITE: readonly PrincipalKind[] = ['executor', 'admin'];
const LANDING_WRITE: readonly PrincipalKind[] = ['landing', 'admin'];
const ADMIN_ONLY: readonly PrincipalKind[] = ['admin'];

/**
 * `system` appears nowhere: it is the service acting for itself, never authenticated by a token,
 * so a request that somehow carries it is refused. `reclaim` is granted to executors unforced
 * only; a forced reclaim needs admin (see authorizeForce; the workflow refuses it too).
 */
export const MATRIX: Readonly<Record<Operation, readonly PrincipalKind[]>> = {
  bind: EXECUTOR_WRITE,
  heartbeat: EXECUTOR_WRITE,
  handoff: EXECUTOR_WRITE,
  acceptHandoff: EXECUTOR_WRITE,
  cancelHandoff: EXECUTOR_WRITE,
  release: EXECUTOR_WRITE,
  reclaim: EXECUTOR_WRITE,
  submit: EXECUTOR_WRITE,
  bindPlan: EXECUTOR_WRITE,
  renameBranch: EXECUTOR_WRITE,
  // Child holds: the owner's executor grants; the child (under the same worker) heartbeats and ends; an admin forces an end.
  grantHold: EXECUTOR_WRITE,
  holdHeartbeat: EXECUTOR_WRITE,
  endHold: EXECUTOR_WRITE,
  // The owner's tenure secret again: its executor (authorizeForWorker) or an admin, as heartbeat.
  tenure: EXECUTOR_WRITE,
  // A person stepping into an owned worktree with the owner's tenure: admins only, recorded.
  override: ADMIN_ONLY,
  reportConversation: EXECUTOR_WRITE,
  landed: LANDING_WRITE,
  worktreeRemoved: LANDING_WRITE,
  // The owner removing its own worktree (released first), the landing controller after a landing, an admin.
  removeWorktree: ['executor', 'landing', 'admin'],
  get: READ,
  list: READ,
  history: READ,
  provenance: READ,
  exportDiagnostics: ADMIN_ONLY,
  rebuildProjection: ADMIN_ONLY,
  // Decoded histories hold conversation titles and URLs in clear: whoever may read every conversation.
  decodePayloads: ADMIN_ONLY,
};

export function authorize(principal: Principal | null, op: Operation): Refusal | null {
  if (!principal) return refusal('unauthenticated');
  return MATRIX[op].includes(principal.kind) ? null : refusal('forbidden');
}

/**
 * For operations on behalf of an agent worker: an executor only for the worker it is bound to
 * (docs/identities.md#agent-worker: a worker cannot act as, or bind itself to the conversation of, another worker),
 * and a token bound to one run (principals file `runId`) only for that run: an ownership its worker
 * holds under another run is not its own. `runId` is the run the ownership records (null: none
 * recorded, any run of the worker, as the workflow's rule in domain/decide.ts has it).
 * Admin passes. Other kinds never act for a worker.
 */
export function authorizeForWorker(principal: Principal | null, workerId: string | null, runId: string | null): Refusal | null {
  if (!principal) return refusal('unauthenticated');
  if (principal.kind === 'admin') return null;
  if (principal.kind !== 'executor') return refusal('forbidden');
  if (!principal.workerId || workerId === null || principal.workerId !== workerId) return refusal('worker_mismatch');
  if (principal.runId && runId !== null && runId !== principal.runId) return refusal('worker_mismatch');
  return null;
}

/** A forced reclaim is admin-only; lets a route refuse before the message reaches the workflow. */
export function authorizeForce(principal: Principal | null, force: boolean): Refusal | null {
  if (!principal) return refusal('unauthenticated');
  return force && principal.kind !== 'admin' ? refusal('force_requires_admin') : null;
}
