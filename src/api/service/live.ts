import { OwnershipError } from '../../client/errors';
import type { LiveState, ProjectionState, ProjectionSync } from '../../workflows/messages';
import { isUnavailable } from '../errors';
import { withTemporal, type ServiceDeps } from './context';

type Ref = { workflowId: string; ownershipId: string };

/**
 * The live state of a running ownership, or null (Temporal away, no memo). A workflow behind the
 * log (it never heard of events the log holds) is asked to catch up, not waited for: the record
 * the caller gets is the log's anyway.
 */
export async function liveOf(deps: ServiceDeps, ref: Ref, logSeq: number): Promise<LiveState | null> {
  try {
    const live = await withTemporal(deps, () => deps.client.liveState(ref), Math.min(5_000, deps.temporalTimeoutMs ?? 30_000));
    if (live && live.seq < logSeq) void deps.client.catchUp(ref, logSeq, 0).catch(() => undefined);
    return live;
  } catch (err) {
    if (isUnavailable(err) || (err instanceof OwnershipError && err.code === 'not_found')) return null;
    throw err;
  }
}

/** Whether the worktree's hooks enforce the record at `seq` yet, from the projection's progress. */
export function projectionOf(sync: ProjectionSync, seq: number): ProjectionState {
  if (sync.error) return 'failed';
  return sync.localSeq >= seq ? 'applied' : 'pending';
}
