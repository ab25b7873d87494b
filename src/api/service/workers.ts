import { OwnershipError } from '../../contract/refusal';
import type { AgentWorkerRef, Principal } from '../../domain/identity';
import { readBinding } from '../../store/bindings';
import type { WorkerNamingBody } from '../../contract/http';
import type { ServiceDeps } from './context';

/**
 * The agent worker a new owner acts for (docs/identities.md, Agent worker): an executor's own, from its
 * principal; an admin must name one. A body naming another worker than the executor's is refused
 * here, before anything reaches the workflow (which refuses it too).
 */
export function resolveWorker(principal: Principal, body: WorkerNamingBody): AgentWorkerRef {
  if (body.worker && (body.workerId !== undefined || body.runId !== undefined)) {
    throw new OwnershipError('invalid_input', undefined, { fields: ['worker', 'workerId'] });
  }
  const named = body.worker ?? (body.workerId !== undefined ? { workerId: body.workerId, runId: body.runId ?? null } : null);
  const namedRunId = named ? (named.runId ?? null) : (body.runId ?? null);
  if (principal.kind === 'executor') {
    const own = principal.workerId;
    if (!own) throw new OwnershipError('worker_mismatch');
    if (named && named.workerId !== own) throw new OwnershipError('worker_mismatch');
    const ownRun = principal.runId ?? null;
    if (ownRun !== null && namedRunId !== null && namedRunId !== ownRun) throw new OwnershipError('worker_mismatch');
    return { workerId: own, runId: ownRun ?? namedRunId };
  }
  if (principal.kind === 'admin') {
    if (!named) throw new OwnershipError('invalid_input', undefined, { fields: ['worker'] });
    return { workerId: named.workerId, runId: namedRunId };
  }
  throw new OwnershipError('forbidden');
}

/** The runtime of a new owner when the body names none: the executor binding's executor, else honestly `unknown`. */
export async function runtimeFor(deps: ServiceDeps, workerId: string, given: string | undefined): Promise<string> {
  if (given !== undefined) return given;
  const binding = await readBinding(deps.pool, workerId);
  return binding?.executor ?? 'unknown';
}
