import type { Client } from '@temporalio/client';
import type { Pool } from '../../store/db';
import { ownershipRowById, type OwnershipRow } from '../../store/ownership-rows';
import { authorize, redactForPrincipal, type Operation } from '../../auth/policy';
import type { OwnershipClient } from '../../client';
import { OwnershipError } from '../../contract/refusal';
import type { Principal } from '../../domain/identity';
import type { Refusal } from '../../domain/reasons';
import type { MessageKeyring } from '../../keys/message-seal';
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

/** How long the API waits on Temporal before answering 503, unless a deployment's deps say otherwise. */
export const TEMPORAL_DEADLINE_MS = 30_000;

/** The deadline of one Temporal call of this service. */
export const temporalDeadlineOf = (deps: Pick<ServiceDeps, 'temporalTimeoutMs'>): number => deps.temporalTimeoutMs ?? TEMPORAL_DEADLINE_MS;

/** A Temporal call under a deadline: past it the caller gets 503 rather than a hung request. */
export function withTemporal<T>(deps: ServiceDeps, fn: () => Promise<T>, timeoutMs = temporalDeadlineOf(deps)): Promise<T> {
  return deps.temporal.withDeadline(Date.now() + timeoutMs, fn);
}

export function redact<T>(principal: Principal, value: T): T {
  return redactForPrincipal(principal, value);
}

/** The row of an ownership that per-ownership routes address by ownershipId. */
export type { OwnershipRow } from '../../store/ownership-rows';

export async function ownershipRow(deps: ServiceDeps, ownershipId: string): Promise<OwnershipRow> {
  const row = await ownershipRowById(deps.pool, ownershipId);
  if (!row) throw new OwnershipError('not_found');
  return row;
}
