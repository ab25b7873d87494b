import { condition, isCancellation } from '@temporalio/workflow';
import type { HostActivities } from '../activities/types';
import type { HostQueue } from './activities';
import type { OwnershipRecord } from '../domain/projection';
import { failureType, FINAL_HOST_ERRORS, projectHere as projectHereActivity } from './activities';
import type { RunState } from './run-state';
import { projectionSummary } from './summaries';

/**
 * The worktree's local projection (what its hooks enforce) follows the durable record: once a
 * seq is in PostgreSQL, the host agent writes it. A refusal is kept in `sync.error` and not retried
 * until the record changes again; owner-changing answers report it (`projection`).
 */
export async function projectionLoop(s: RunState, host: HostQueue): Promise<never> {
  const { sync } = s;
  for (;;) {
    await condition(() => s.record !== null && sync.localSeq < s.record.seq && sync.durableSeq >= s.record.seq);
    const target = s.record!;
    try {
      // No await unless it is written here: the host activity's command keeps its place in the task.
      const written = herePays(s) ? await projectHere(s, target) : null;
      // Not written here after all: nobody waits for the host agent's write (act.ts).
      if (written === null) s.hereFor = Math.min(s.hereFor, sync.localSeq);
      const res = written ?? (await host.applyLocalProjection.executeWithOptions({ summary: projectionSummary(target) }, [target]));
      sync.localSeq = Math.max(sync.localSeq, res.localSeq, target.seq);
      sync.error = null;
      if (res.branch !== undefined) sync.branch = res.branch;
    } catch (err) {
      if (isCancellation(err)) throw err;
      sync.error = failureType(err) ?? 'projection_failed';
      // A refused projection is not retried until the record changes again.
      sync.localSeq = target.seq;
    }
  }
}

/**
 * An owner change, written by a local activity when this worker is on the worktree's host: one
 * marker in history instead of an activity task and a workflow task for its result, and the hooks
 * enforce it when the update answers. Other changes (a plan, a landing, a periodic heartbeat) go
 * to the host agent: nothing waits for them. null: not written here; the host agent takes it.
 */
/**
 * Written here only for an update that waits for it (act.ts): the local activity's marker then
 * comes before that update's completion in the task, as the durable log's does. Local activities
 * still running when an update completes in the same task tripped the SDK's update state machine
 * ("UpdateMachine ... transition is invalid during WorkflowExecutionUpdateAccepted") under load.
 */
const herePays = (s: RunState): boolean => s.projectHere && s.hereFor > s.sync.localSeq;

async function projectHere(s: RunState, target: OwnershipRecord): Promise<Awaited<ReturnType<HostActivities['applyLocalProjection']>> | null> {
  s.hereInFlight++;
  try {
    return await projectHereActivity.applyProjectionHere.executeWithOptions({ summary: projectionSummary(target) }, [target]);
  } catch (err) {
    if (isCancellation(err)) throw err;
    const type = failureType(err);
    if (type === 'not_this_host') s.projectHere = false;
    // A final refusal is the answer; anything else the host agent tries again.
    if (type !== null && FINAL_HOST_ERRORS.includes(type)) throw err;
    return null;
  } finally {
    s.hereInFlight--;
  }
}

/**
 * A state change that nobody waits for (a landing signal): projected here as well when the run
 * does so (projection-here-states-v1); the projection loop gives it up to the host agent if not.
 */
export function projectStateHere(s: RunState): void {
  if (projectsHere(s, 'state') && s.record) s.hereFor = Math.max(s.hereFor, s.record.seq);
}

/** Whether this run writes a change of that kind here, inside the task (an owner change always could; a state change since projection-here-states-v1). */
export function projectsHere(s: RunState, kind: 'owner' | 'state'): boolean {
  return s.projectHere && (kind === 'owner' || s.projectStatesHere);
}

/** Resolves once the host agent has written `seq` (or refused), at most `waitMs` later. */
export async function localProjection(s: RunState, seq: number, waitMs: number): Promise<void> {
  await condition(() => s.sync.localSeq >= seq || s.sync.error !== null, waitMs);
}
