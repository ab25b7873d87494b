import type { Principal } from '../domain/identity';
import { refusal, type Refusal } from '../domain/reasons';
import { OPERATION_NAMES, OPERATION_TABLE, ROLES, type OperationName } from '../contract/operations';

/**
 * Who may call which operation of the HTTP API / MCP server (docs/identities.md#principals). The matrix is data
 * so that it can be reviewed, documented and tested as a table. The workflow re-checks what
 * depends on state (ownership, epoch, worker, force) whatever entry path a message took.
 */

export { redactForExport, redactForPrincipal, REDACTED, type ExportRedactionOptions } from './redact';

/** The operations outside the operation table (src/contract/operations.ts): lookups, removal, diagnostics. */
const OTHER_OPERATIONS = [
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

export const OPERATIONS = [...OPERATION_NAMES, ...OTHER_OPERATIONS] as const;
export type Operation = OperationName | (typeof OTHER_OPERATIONS)[number];

export type PrincipalKind = Principal['kind'];

const { read: READ, executorWrite: EXECUTOR_WRITE, adminOnly: ADMIN_ONLY } = ROLES;

/**
 * `system` appears nowhere: it is the service acting for itself, never authenticated by a token,
 * so a request that somehow carries it is refused. `reclaim` is granted to executors unforced
 * only; a forced reclaim needs admin (see authorizeForce; the workflow refuses it too). The table's
 * operations carry their roles in the table (src/contract/operations.ts: child holds, tenure and
 * override say why there).
 */
export const MATRIX: Readonly<Record<Operation, readonly PrincipalKind[]>> = {
  ...(Object.fromEntries(OPERATION_NAMES.map((n) => [n, OPERATION_TABLE[n].roles])) as Record<OperationName, readonly PrincipalKind[]>),
  reportConversation: EXECUTOR_WRITE,
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
