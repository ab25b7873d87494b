import { OwnershipError } from '../../contract/refusal';
import { getOwnership } from '../../store/lookups';
import { readEvents } from '../../store/event-store';
import { livenessOfRecord } from '../../domain/liveness';
import type { OwnershipRecord } from '../../domain/projection';
import { heardOf, withHeard } from '../../store/heartbeats';
import { headsOf, newerBranch } from '../../store/worktree-heads';
import { projectionOf, type LiveState } from '../../workflows/messages';
import { isUnavailable } from '../errors';
import type { OwnershipViewOut } from '../../contract/http';
import { ownershipRow, temporalDeadlineOf, withTemporal, type ServiceDeps } from './context';
import { withEnforcement } from './host-presence';

type Ref = { workflowId: string; ownershipId: string };

/** The live state of a running ownership, or null (Temporal away, no memo). A read: it sends the workflow nothing. */
export async function liveOf(deps: ServiceDeps, ref: Ref): Promise<LiveState | null> {
  try {
    return await withTemporal(deps, () => deps.client.liveState(ref), Math.min(5_000, temporalDeadlineOf(deps)));
  } catch (err) {
    if (isUnavailable(err) || (err instanceof OwnershipError && err.code === 'not_found')) return null;
    throw err;
  }
}

/**
 * An ownership as the service shows it: the durable record from PostgreSQL (the log's answer)
 * with, while the lifecycle runs, what only its workflow knows (liveness, the projection's
 * progress), read from the workflow's memo; a commit the journal saw since the last projection
 * and heartbeats recorded since the last lease check are folded in. Without Temporal, or for a
 * workflow that publishes no memo, the record alone (liveness and projectionSync null). null: no
 * such ownership.
 */
export async function ownershipView(deps: ServiceDeps, ownershipId: string): Promise<OwnershipViewOut | null> {
  const row = await ownershipRow(deps, ownershipId).catch((err: unknown) => {
    if (err instanceof OwnershipError && err.code === 'not_found') return null;
    throw err;
  });
  const record = row ? await getOwnership(deps.pool, { ownershipId }) : null;
  if (!row || !record) return null;
  const live = row.state === 'closed' ? null : await liveOf(deps, { workflowId: row.workflowId, ownershipId });
  if (!live) return { ...record, liveness: livenessOfRecord(null, [], record), projectionSync: null };
  const moved = (await headsOf(deps.pool, [ownershipId])).get(ownershipId);
  const branch = newerBranch(live.projectionSync.branch, moved);
  const liveness = withHeard((await livenessOfView(deps, live, record))!, record, (await heardOf(deps.pool, [ownershipId])).get(ownershipId));
  const projectionSync = branch ? { ...live.projectionSync, branch } : live.projectionSync;
  // And whether the worktree's host enforces it yet (a host that is away does not).
  return withEnforcement(deps.hostPresence, { ...record, liveness, projectionSync, projection: projectionOf(projectionSync, record.seq) });
}

/**
 * The liveness to show beside `record` (src/domain/livenessOfRecord): the memo's, moved by the
 * log's events it has not seen yet. Those are read only in the window where the memo lags the log.
 */
export async function livenessOfView(deps: Pick<ServiceDeps, 'pool'>, live: LiveState | null, record: OwnershipRecord): Promise<LiveState['liveness'] | null> {
  const unseen = live !== null && live.seq < record.seq ? await readEvents(deps.pool, record.ownershipId, live.seq, record.seq - live.seq) : [];
  return livenessOfRecord(live, unseen, record);
}
