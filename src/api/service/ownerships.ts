import { authorizeForWorker, type Operation } from '../../auth/policy';
import { OwnershipError } from '../../client/errors';
import type { OwnershipView } from '../../client';
import type { Principal } from '../../domain/identity';
import { getOwnership } from '../../store/lookups';
import { isUnavailable } from '../errors';
import type {
  AcceptHandoffBody,
  BindBody,
  CancelHandoffBody,
  HandoffBody,
  HeartbeatBody,
  OwnershipViewOut,
  PlanBody,
  ReclaimBody,
  ReleaseBody,
  RenameBranchBody,
  SubmitBody,
  WorktreeRemovedBody,
} from '../schemas';
import { authorizeOp, ownershipRow, redact, throwRefusal, withTemporal, type ServiceDeps } from './context';
import { resolveWorker, runtimeFor } from './workers';

/** Bind (spec §6.2): the worker from the principal, the conversation from the executor binding, never from the body. */
export async function bind(deps: ServiceDeps, principal: Principal, body: BindBody): Promise<OwnershipViewOut> {
  authorizeOp(principal, 'bind');
  const worker = resolveWorker(principal, body);
  const runtime = await runtimeFor(deps, worker.workerId, body.runtime);
  const view = await withTemporal(deps, () =>
    deps.client.bind({
      repoRoot: body.repoRoot,
      worktreePath: body.worktreePath,
      branch: body.branch,
      ...(body.hostId !== undefined ? { hostId: body.hostId } : {}),
      executionSessionId: body.executionSessionId,
      runtime,
      parentExecutionSessionId: body.parentExecutionSessionId ?? null,
      process: body.process ?? null,
      ...(body.leaseTtlMs !== undefined ? { leaseTtlMs: body.leaseTtlMs } : {}),
      worker,
      principal,
      lane: body.lane ?? null,
      planRef: body.planRef ?? null,
      requestId: body.requestId ?? null,
    }),
  );
  return redact(principal, view);
}

/**
 * The workflow of an ownership that is still running. A closed ownership is never messaged: its
 * workflow id may already carry the next lifecycle of the same worktree.
 */
async function openRef(deps: ServiceDeps, ownershipId: string) {
  const row = await ownershipRow(deps, ownershipId);
  if (row.state === 'closed') throw new OwnershipError('ownership_closed', undefined, { state: row.state });
  return { ref: { workflowId: row.workflowId }, row };
}

/** Owner-only messages: an executor only for the worker that owns it (the heartbeat signal carries no principal for the workflow to check). */
async function ownerRef(deps: ServiceDeps, principal: Principal, op: Operation, ownershipId: string) {
  authorizeOp(principal, op);
  const { ref, row } = await openRef(deps, ownershipId);
  if (principal.kind === 'executor') throwRefusal(authorizeForWorker(principal, row.ownerWorkerId));
  return ref;
}

const view = (principal: Principal, v: OwnershipView): OwnershipViewOut => redact(principal, v);

export async function heartbeat(deps: ServiceDeps, principal: Principal, ownershipId: string, body: HeartbeatBody): Promise<{ accepted: true }> {
  const ref = await ownerRef(deps, principal, 'heartbeat', ownershipId);
  await withTemporal(deps, () => deps.client.heartbeat(ref, { executionSessionId: body.executionSessionId, epoch: body.epoch }));
  return { accepted: true };
}

export async function handoff(deps: ServiceDeps, principal: Principal, ownershipId: string, body: HandoffBody): Promise<OwnershipViewOut> {
  const ref = await ownerRef(deps, principal, 'handoff', ownershipId);
  return view(principal, await withTemporal(deps, () => deps.client.handoff(ref, { ...body, principal })));
}

export async function cancelHandoff(deps: ServiceDeps, principal: Principal, ownershipId: string, body: CancelHandoffBody): Promise<OwnershipViewOut> {
  const ref = await ownerRef(deps, principal, 'cancelHandoff', ownershipId);
  return view(principal, await withTemporal(deps, () => deps.client.cancelHandoff(ref, { ...body, principal })));
}

export async function release(deps: ServiceDeps, principal: Principal, ownershipId: string, body: ReleaseBody): Promise<OwnershipViewOut> {
  const ref = await ownerRef(deps, principal, 'release', ownershipId);
  return view(principal, await withTemporal(deps, () => deps.client.release(ref, { ...body, principal })));
}

export async function submit(deps: ServiceDeps, principal: Principal, ownershipId: string, body: SubmitBody): Promise<OwnershipViewOut> {
  const ref = await ownerRef(deps, principal, 'submit', ownershipId);
  return view(principal, await withTemporal(deps, () => deps.client.submit(ref, { ...body, principal })));
}

export async function bindPlan(deps: ServiceDeps, principal: Principal, ownershipId: string, body: PlanBody): Promise<OwnershipViewOut> {
  const ref = await ownerRef(deps, principal, 'bindPlan', ownershipId);
  return view(principal, await withTemporal(deps, () => deps.client.bindPlan(ref, { ...body, principal })));
}

export async function renameBranch(deps: ServiceDeps, principal: Principal, ownershipId: string, body: RenameBranchBody): Promise<OwnershipViewOut> {
  const ref = await ownerRef(deps, principal, 'renameBranch', ownershipId);
  return view(principal, await withTemporal(deps, () => deps.client.renameBranch(ref, { ...body, principal })));
}

/** A new owner (accept, reclaim) acts for its own worker, whoever owned the worktree before. */
function newOwnerFields(principal: Principal, body: AcceptHandoffBody | ReclaimBody) {
  const worker = resolveWorker(principal, body);
  return {
    worker,
    fields: {
      executionSessionId: body.executionSessionId,
      parentExecutionSessionId: body.parentExecutionSessionId ?? null,
      process: body.process ?? null,
      ...(body.leaseTtlMs !== undefined ? { leaseTtlMs: body.leaseTtlMs } : {}),
      worker,
      principal,
    },
  };
}

export async function acceptHandoff(deps: ServiceDeps, principal: Principal, ownershipId: string, body: AcceptHandoffBody): Promise<OwnershipViewOut> {
  authorizeOp(principal, 'acceptHandoff');
  const { worker, fields } = newOwnerFields(principal, body);
  const { ref } = await openRef(deps, ownershipId);
  const runtime = await runtimeFor(deps, worker.workerId, body.runtime);
  return view(principal, await withTemporal(deps, () => deps.client.acceptHandoff(ref, { ...fields, runtime, handoffId: body.handoffId })));
}

export async function reclaim(deps: ServiceDeps, principal: Principal, ownershipId: string, body: ReclaimBody): Promise<OwnershipViewOut> {
  authorizeOp(principal, 'reclaim');
  if (body.force === true && principal.kind !== 'admin') throw new OwnershipError('force_requires_admin');
  const { worker, fields } = newOwnerFields(principal, body);
  const { ref } = await openRef(deps, ownershipId);
  const runtime = await runtimeFor(deps, worker.workerId, body.runtime);
  const input = { ...fields, runtime, ...(body.force !== undefined ? { force: body.force } : {}), reason: body.reason ?? null };
  // Reclaim preserves WIP on the worktree's host before answering: allow it more time.
  return view(principal, await withTemporal(deps, () => deps.client.reclaim(ref, input), (deps.temporalTimeoutMs ?? 30_000) * 2));
}

export async function worktreeRemoved(deps: ServiceDeps, principal: Principal, ownershipId: string, body: WorktreeRemovedBody): Promise<{ accepted: true }> {
  authorizeOp(principal, 'worktreeRemoved');
  const row = await ownershipRow(deps, ownershipId);
  // closed means removed already: a replay is accepted and nothing is sent.
  if (row.state !== 'closed') {
    await withTemporal(deps, () => deps.client.worktreeRemoved({ workflowId: row.workflowId }, { reason: body.reason ?? null, principal }));
  }
  return { accepted: true };
}

/**
 * The live view (with liveness) while the lifecycle runs; the durable record from PostgreSQL once
 * it has ended, or when Temporal cannot answer (reads keep working without it).
 */
export async function getById(deps: ServiceDeps, principal: Principal, ownershipId: string): Promise<OwnershipViewOut> {
  authorizeOp(principal, 'get');
  const row = await ownershipRow(deps, ownershipId);
  let live: OwnershipView | null = null;
  if (row.state !== 'closed') {
    try {
      const v = await withTemporal(deps, () => deps.client.projection({ workflowId: row.workflowId }), Math.min(5_000, deps.temporalTimeoutMs ?? 30_000));
      if (v && v.ownershipId === ownershipId) live = v;
    } catch (err) {
      if (!isUnavailable(err) && !(err instanceof OwnershipError && err.code === 'not_found')) throw err;
    }
  }
  if (live) return view(principal, live);
  const record = await getOwnership(deps.pool, { ownershipId });
  if (!record) throw new OwnershipError('not_found');
  return redact(principal, { ...record, liveness: null, projectionSync: null });
}
