import type { CallRecord } from '../record';
import type { Target } from '../target';
import { checkAcks } from './acks';
import { checkLifecycles } from './lifecycles';
import { loadLog, worktreeKey } from './load';
import { checkProjections, quiesce } from './projection';
import { checkRefusals } from './refusals';
import type { Violation } from './types';

export type { Violation } from './types';

export interface CheckInput {
  target: Target;
  calls: readonly CallRecord[];
  /** the run's worktrees: index -> canonical path */
  worktrees: readonly string[];
  /** session id -> the worker it belongs to */
  homeWorker: ReadonlyMap<string, string>;
  quiesceTimeoutMs?: number;
}

export interface CheckResult {
  violations: Violation[];
  lifecycles: number;
  events: number;
  quiesceMs: number;
  /** events made by calls that got no answer or a 5xx (applied but never acknowledged) */
  unansweredApplied: number;
}

/**
 * The checker of "exactly one live owner per worktree, and nothing acknowledged is lost", run
 * after the traffic stops: waits for the projections to catch up, then reads PostgreSQL's log
 * (ownership_events, ownerships) and every worktree's local projection.
 */
export async function check(input: CheckInput): Promise<CheckResult> {
  const violations: Violation[] = [];
  const q = await quiesce(input.target, input.quiesceTimeoutMs);
  const log = await loadLog(input.target.pool, input.target.baseDir, violations);
  const slotKeys = new Map(input.worktrees.map((p, i) => [i, worktreeKey(input.target.hostId, p)]));
  checkLifecycles(log, input.homeWorker, violations);
  checkAcks(log, input.calls, violations);
  const attribution = checkRefusals(log, input.calls, slotKeys, violations);
  await checkProjections(
    log,
    input.worktrees.map((p) => ({ path: p, key: worktreeKey(input.target.hostId, p) })),
    q,
    violations,
  );
  return { violations, lifecycles: log.lifecycles.size, events: log.events, quiesceMs: q.ms, unansweredApplied: attribution.unansweredApplied };
}
