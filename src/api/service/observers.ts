import { OwnershipError } from '../../contract/refusal';
import type { Principal } from '../../domain/identity';
import {
  OBSERVER_TTL_DEFAULT_MS,
  type LeaveObserveBody,
  type LeaveObserveResponse,
  type ObserveBody,
  type ObserveResponse,
  type ObserverView,
} from '../../contract/observers';
import { leave, liveObservers, observe, observedByOther, pruneObservers, type ObserverWhere } from '../../store/observers';
import { authorizeOp, redact, type ServiceDeps } from './context';
import { resolveWorker, runtimeFor } from './workers';

/**
 * Read-only observers (src/contract/observers.ts). Nothing here reaches the ownership workflow:
 * an observer is a lease row, never a tenure, so it cannot mutate (the hooks refuse it as any
 * non-owner) and cannot block (bind, claim and reclaim never read the table).
 */

/** The worktree as bind names it: its canonical path on its host (default: the API's). */
async function whereOf(deps: ServiceDeps, b: { worktreePath: string; hostId?: string | undefined }): Promise<ObserverWhere> {
  return { hostId: b.hostId ?? deps.client.hostId, worktreePath: await deps.client.normalize(b.worktreePath) };
}

export async function registerObserver(deps: ServiceDeps, principal: Principal, body: ObserveBody): Promise<ObserveResponse> {
  // The operation of a heartbeat: whoever may keep a lease (an executor for its own worker, an admin naming one).
  authorizeOp(principal, 'heartbeat');
  const worker = resolveWorker(principal, body.workerId !== undefined ? { workerId: body.workerId } : {});
  const runtime = await runtimeFor(deps, worker.workerId, body.runtime);
  const where = await whereOf(deps, body);
  // Opportunistic: every registration sweeps rows long expired anywhere, so the table stays small without a timer.
  await pruneObservers(deps.pool);
  const observer = await observe(deps.pool, where, {
    executionSessionId: body.executionSessionId,
    workerId: worker.workerId,
    runtime,
    ttlMs: body.ttlMs ?? OBSERVER_TTL_DEFAULT_MS,
  });
  // The session observes here for another worker (live): one session id is one session.
  if (!observer) throw new OwnershipError('worker_mismatch');
  return redact(principal, { ...where, observer });
}

export async function leaveObserver(deps: ServiceDeps, principal: Principal, body: LeaveObserveBody): Promise<LeaveObserveResponse> {
  authorizeOp(principal, 'heartbeat');
  const where = await whereOf(deps, body);
  // An admin may end anyone's registration; an executor only its own worker's.
  const workerId =
    principal.kind === 'admin' && body.workerId === undefined
      ? null
      : resolveWorker(principal, body.workerId !== undefined ? { workerId: body.workerId } : {}).workerId;
  if (workerId !== null && (await observedByOther(deps.pool, where, body.executionSessionId, workerId))) throw new OwnershipError('worker_mismatch');
  return { ...where, left: await leave(deps.pool, where, body.executionSessionId, workerId) };
}

/** The live observers of the worktree a record governs (who shows them beside the owner). */
export async function observersOf(deps: ServiceDeps, principal: Principal, where: ObserverWhere): Promise<ObserverView[]> {
  authorizeOp(principal, 'get');
  return redact(principal, await liveObservers(deps.pool, where));
}
