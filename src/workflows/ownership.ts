import { CancellationScope, continueAsNew, log } from '@temporalio/workflow';
import type { OwnershipRecord } from '../domain/projection';
import { nextRunSettings } from '../domain/settings';
import { hostActivities, store } from './activities';
import { persistLoop } from './durable-log';
import { projectionLoop } from './projection-loop';
import { liveLoop, publish } from './publish';
import { closed, drain, runUntilDone } from './run-loop';
import { carry, startRun, type OwnershipWorkflowInput } from './run-state';
import { installQueries, installSignals } from './signals';
import { installUpdates } from './updates';
import { continuedSeal, startRefused } from './seal';

export { DEFAULT_SETTINGS, type OwnershipSettings } from '../domain/settings';
export type { CarriedState, OwnershipWorkflowInput } from './run-state';
export { SA } from './publish';

/**
 * One long-running workflow per worktree lifecycle: the live authority on who may mutate it.
 *
 * The story of a run, each chapter a module of its own:
 * - run-state.ts: what the run knows (the record, the log's position, liveness, the projection's
 *   sync), rebuilt from the input or carried over from the previous run.
 * - updates.ts, signals.ts: the messages. Updates are validated (compiled checks, domain/check.ts),
 *   decided by the pure state machine (domain/decide.ts) and answered at durability (act.ts): the
 *   update is the one place a message is decided, its id the message id; signals are decided the
 *   same way and answer nothing.
 * - durable-log.ts: decisions become events (emit) and go to PostgreSQL in order, one local
 *   activity per batch inside the deciding task, before any answer; the log records, it never
 *   decides (what a task lost after its write left there is adopted as the run's own).
 * - projection-loop.ts: each durable record is written into the worktree (what its hooks enforce),
 *   by the host agent, or already by the log write when the worker is that host's agent.
 * - liveness.ts: heartbeats renew the owner's lease; a lease that runs out asks the liveness
 *   authority, and a dead verdict on the tenure asked about marks it stale (domain/liveness.ts).
 * - publish.ts: search attributes and the one-line summary follow every change.
 * - run-loop.ts: one deadline timer at a time (lease, handoff expiry, abandoned start), until the
 *   lifecycle closes or the run is due to continue as new; then the drain.
 * The order below is part of the workflow's determinism: handlers in their registration order,
 * the background loops, then the first publication and the run loop. A change to it, or to any
 * command the run issues, follows docs/workflow-versioning.md.
 */
export async function ownershipWorkflow(input: OwnershipWorkflowInput): Promise<OwnershipRecord | null> {
  // A run begins only from an input a service process sealed for it (seal.ts): a raw client's
  // start, or a restart with a record of its own making, is refused before anything is decided.
  if (startRefused(input, input.ownershipId, 'start') !== null) return null;
  const hosts = hostActivities(input.worktree.hostId);
  const s = startRun(input);

  installUpdates(s, hosts);
  installSignals(s);
  installQueries(s);

  const background = new CancellationScope();
  background.run(() => Promise.all([persistLoop(s), projectionLoop(s, hosts.host), liveLoop(s)])).catch(() => undefined);
  if (s.record) publish(s);

  await runUntilDone(s, hosts.hostOnce);
  // From here new updates are refused (retry shortly; the next run takes them): an update accepted
  // during the configuration's read would be one more for this run to finish, and a caller
  // sending them back to back could keep it from ending for as long as each takes.
  s.draining = true;

  // The next run follows the configuration (src/domain/settings.ts); read before the drain, which
  // takes care of whatever was handled during the read.
  const goesOn = !closed(s) && s.record !== null;
  const nextSettings = goesOn ? nextRunSettings(s.settings, await store.readSettings()) : s.settings;

  await drain(s);
  background.cancel();

  if (closed(s) || s.record === null) {
    log.info('ownership lifecycle ended', { ownershipId: s.ownershipId, state: s.record?.state ?? 'never_claimed' });
    return s.record;
  }
  return continueAsNew<typeof ownershipWorkflow>({
    ownershipId: s.ownershipId,
    worktree: s.worktree,
    settings: nextSettings,
    carried: carry(s, s.record),
    seal: continuedSeal(),
  });
}
