import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { authorize, redactForPrincipal, type Operation } from '../../auth/policy';
import type { OwnershipClient } from '../../client';
import { OwnershipError } from '../../client/errors';
import type { Principal } from '../../domain/identity';
import type { Refusal } from '../../domain/reasons';
import type { MessageKeyring } from '../../infra/message-seal';
import type { HostPresence } from './host-presence';

/**
 * What every handler of the HTTP API and the MCP tools runs on. Handlers are plain functions of
 * (context, principal, validated input): the routes and the tools are thin adapters around them.
 */
export interface ServiceDeps {
  client: OwnershipClient;
  /** the same Temporal client the OwnershipClient uses: calls are bounded by its deadlines */
  temporal: Client;
  pool: Pool;
  /** bound on every Temporal call, after which the caller gets 503 unavailable (default 30 s) */
  temporalTimeoutMs?: number;
  /** how long POST /v1/landings waits for the receipt to be durable before answering 202 (default 10 s) */
  landingWaitMs?: number;
  /**
   * The service key the API's messages are sealed with: tenure secrets are derived from it
   * (./tenure.ts). A function, so a server built only to describe itself never reads a key.
   */
  keyring: () => MessageKeyring;
  /** whether a worktree's host agent is there (./host-presence.ts); absent: always taken to be, as before */
  hostPresence?: HostPresence;
}

export function throwRefusal(r: Refusal | null): void {
  if (r) throw new OwnershipError(r.code, r.message, r.details);
}

/** Authorization of the operation itself; handlers call it whatever adapter called them. */
export function authorizeOp(principal: Principal | null, op: Operation): Principal {
  throwRefusal(authorize(principal, op));
  return principal as Principal;
}

/** A Temporal call under a deadline: past it the caller gets 503 rather than a hung request. */
export function withTemporal<T>(deps: ServiceDeps, fn: () => Promise<T>, timeoutMs = deps.temporalTimeoutMs ?? 30_000): Promise<T> {
  return deps.temporal.withDeadline(Date.now() + timeoutMs, fn);
}

export function redact<T>(principal: Principal, value: T): T {
  return redactForPrincipal(principal, value);
}

/** The row of an ownership that per-ownership routes address by ownershipId. */
export interface OwnershipRow {
  workflowId: string;
  state: string;
  ownerWorkerId: string | null;
  ownerSessionId: string | null;
  epoch: number;
  /** the log's last seq as PostgreSQL holds it */
  seq: number;
  /** the host the worktree is on */
  hostId: string;
}

export async function ownershipRow(deps: ServiceDeps, ownershipId: string): Promise<OwnershipRow> {
  const res = await deps.pool.query<{ workflow_id: string; state: string; owner_worker_id: string | null; owner_session_id: string | null; epoch: number; seq: number; host_id: string }>(
    'SELECT workflow_id, state, owner_worker_id, owner_session_id, epoch, seq, host_id FROM ownerships WHERE ownership_id = $1',
    [ownershipId],
  );
  const row = res.rows[0];
  if (!row) throw new OwnershipError('not_found');
  return { workflowId: row.workflow_id, state: row.state, ownerWorkerId: row.owner_worker_id, ownerSessionId: row.owner_session_id, epoch: row.epoch, seq: row.seq, hostId: row.host_id };
}
