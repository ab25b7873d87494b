import { OwnershipError } from '../../contract/refusal';
import type { Principal } from '../../domain/identity';
import type { OwnershipRecord } from '../../domain/projection';
import { isFreeState } from '../../domain/states';
import { logReconciliation } from '../../store/reconciliations';
import { getOwnership } from '../../store/lookups';
import type { Caller, ReconciliationBody } from '../../contract/reconcile';
import { authorizeOp, type ServiceDeps } from './context';

/**
 * Reconciliations recorded through the API (POST /v1/reconciliations), so that `od-worktree
 * reconcile` needs nothing but its bearer token: no CLI write reaches Temporal or PostgreSQL
 * directly.
 *
 * Who may record what. The route is open to the principals that may bind (executor, admin; reader
 * and landing are refused by the policy). An admin may record for any worktree. An executor may
 * record only for a worktree it may act on: one nobody holds now (no durable record, or its
 * lifecycle released, landed or ended, where the executor could bind next) or one held by its own
 * worker. A worktree held by another worker is refused (`worker_mismatch`): otherwise any executor
 * could write audit lines against other workers' ownerships. The price is that an executor's lost
 * provisional claim (it lost to another worker's owner) is not logged from its own token; it
 * stays visible locally (the claim is marked provisional-conflict, the guard refuses its session)
 * and an admin's reconcile logs it.
 *
 * The entry is checked against the durable record, never trusted: its worktree path is normalised
 * (allowed roots) as every lookup is, and its ownershipId must be an ownership of that worktree.
 */

/** The agent worker holding the worktree now, or null when nobody does. */
function holder(record: OwnershipRecord | null): { workerId: string | null } | null {
  if (record === null || record.owner === null || record.worktreeRemoved || isFreeState(record.state)) return null;
  return { workerId: record.owner.worker?.workerId ?? record.worker?.workerId ?? null };
}

export async function recordReconciliation(deps: ServiceDeps, principal: Principal, body: ReconciliationBody): Promise<{ recorded: true }> {
  // Whoever may bind may record what reconciling found (executor, admin); executors are narrowed below.
  authorizeOp(principal, 'bind');
  const worktreePath = await deps.client.normalize(body.worktreePath);
  const current = await getOwnership(deps.pool, { worktreePath });
  if (principal.kind === 'executor') {
    const held = holder(current);
    if (held !== null && (!principal.workerId || held.workerId !== principal.workerId)) throw new OwnershipError('worker_mismatch');
  }
  if (body.ownershipId !== null && body.ownershipId !== current?.ownershipId) {
    // An earlier lifecycle of the same worktree is fine (a new one may have begun meanwhile); another worktree's is not.
    const named = await getOwnership(deps.pool, { ownershipId: body.ownershipId });
    if (named === null || named.worktreePath !== worktreePath) throw new OwnershipError('worktree_mismatch');
  }
  await logReconciliation(deps.pool, { ...body, worktreePath });
  return { recorded: true };
}

/** GET /v1/principal: the caller's own identity (kind, id, agent worker); nothing about anyone else. */
export function caller(principal: Principal): Caller {
  authorizeOp(principal, 'get');
  if (principal.kind === 'system') throw new OwnershipError('forbidden');
  return { kind: principal.kind, id: principal.id, workerId: principal.workerId ?? null, runId: principal.runId ?? null };
}
