import { authorizeForWorker } from '../../auth/policy';
import { OwnershipError } from '../../contract/refusal';
import type { Principal } from '../../domain/identity';
import { refusal, type Refusal } from '../../domain/reasons';
import { isEndedState, isHeldState } from '../../domain/states';
import { type Tenure } from '../../domain/tenure';
import { tenureSecret } from '../../keys/tenure';
import { recordOverride } from '../../store/overrides';
import type { ClaimResponse, OverrideBody, OverrideResponse, OwnershipViewOut, TenureBody, TenureOut } from '../../contract/http';
import { authorizeOp, ownershipRow, throwRefusal, type OwnershipRow, type ServiceDeps } from './context';

/**
 * The tenure proof as the API hands it out (src/keys/tenure.ts): with the answer of a call that
 * made a session the owner (bind, accept-handoff, reclaim), again to that session on request, and
 * to an admin who records an override. Derived from the answer's record with the API's service
 * key each time: nothing of it is stored, sent to Temporal or logged.
 */

/** The secret of the keyring's first key: the one the host agent's hashes list first. */
export function tenureProof(deps: ServiceDeps, t: Tenure): TenureOut {
  return proofOf(tenureSecret(deps.keyring().sealing.key, t), t);
}

/** A secret as the answer carries it: beside the identity the agent's git presents, and as the environment that spells it. */
export function proofOf(secret: string, t: Pick<Tenure, 'epoch' | 'executionSessionId'>): TenureOut {
  return {
    secret,
    epoch: t.epoch,
    executionSessionId: t.executionSessionId,
    env: { OVERDECK_EXECUTION_SESSION_ID: t.executionSessionId, OVERDECK_EPOCH: String(t.epoch), OVERDECK_TENURE_SECRET: secret },
  };
}

/**
 * A claim's answer: the proof when the session the call was for holds the ownership after it, and
 * the caller may act for the owner's worker; null otherwise (an answer from the log about another
 * owner, an ownership nobody holds).
 */
export function withTenure(deps: ServiceDeps, principal: Principal, view: OwnershipViewOut, executionSessionId: string): ClaimResponse {
  const holds = isHeldState(view.state) && view.owner?.executionSessionId === executionSessionId;
  const mayAct = principal.kind !== 'executor' || authorizeForWorker(principal, view.worker?.workerId ?? null, view.worker?.runId ?? null) === null;
  return { ...view, tenure: holds && mayAct ? tenureProof(deps, { ownershipId: view.ownershipId, epoch: view.epoch, executionSessionId }) : null };
}

/** The refusal for a session that does not hold the ownership now (a heartbeat's too): closed, or not the owner. */
export function notHolding(row: OwnershipRow, executionSessionId: string): Refusal | null {
  if (isEndedState(row.state)) return refusal('ownership_closed', { state: row.state });
  if (!isHeldState(row.state)) return refusal('not_owner', { state: row.state });
  if (row.ownerSessionId !== executionSessionId) return refusal('not_owner', { epoch: row.epoch });
  return null;
}

/**
 * POST /v1/ownerships/{id}/tenure: the proof again, for the session that holds the ownership now
 * (an agent restarted, a shell opened later). Its worker's executor or an admin, as a heartbeat;
 * the tenure is PostgreSQL's, the one the projection is written from.
 */
export async function tenure(deps: ServiceDeps, principal: Principal, ownershipId: string, body: TenureBody): Promise<TenureOut> {
  authorizeOp(principal, 'tenure');
  const row = await ownershipRow(deps, ownershipId);
  // Losing first, as a heartbeat: a session that lost the worktree is told so.
  throwRefusal(notHolding(row, body.executionSessionId));
  if (principal.kind === 'executor') throwRefusal(authorizeForWorker(principal, row.ownerWorkerId, row.ownerRunId));
  if (body.worker !== undefined && body.worker.workerId !== row.ownerWorkerId) throw new OwnershipError('worker_mismatch');
  return tenureProof(deps, { ownershipId, epoch: row.epoch, executionSessionId: body.executionSessionId });
}

/**
 * POST /v1/ownerships/{id}/override (admin): a person steps into the owner's worktree. The override
 * is recorded durably first, and only then is the current owner's proof answered: no override
 * without its line in history. An ownership nobody holds needs none (`invalid_state`).
 */
export async function override(deps: ServiceDeps, principal: Principal, ownershipId: string, body: OverrideBody): Promise<OverrideResponse> {
  authorizeOp(principal, 'override');
  const row = await ownershipRow(deps, ownershipId);
  if (isEndedState(row.state)) throw new OwnershipError('ownership_closed', undefined, { state: row.state });
  const owner = row.ownerSessionId;
  if (!isHeldState(row.state) || owner === null)
    throw new OwnershipError('invalid_state', 'nobody holds this ownership: the worktree is open without an override', { state: row.state });
  const recorded = await recordOverride(deps.pool, { ownershipId, epoch: row.epoch, principal: `${principal.kind}:${principal.id}`, reason: body.reason });
  return {
    overrideId: recorded.overrideId,
    ownershipId,
    epoch: row.epoch,
    owner: { executionSessionId: owner, workerId: row.ownerWorkerId },
    tenure: tenureProof(deps, { ownershipId, epoch: row.epoch, executionSessionId: owner }),
  };
}
