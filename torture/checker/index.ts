import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { ownershipWorkflowId } from '../../src/ids/workflow-id';
import type { CallRecord } from '../record';
import type { Target } from '../target';
import { checkAcks } from './acks';
import { checkLifecycles } from './lifecycles';
import { loadLog, worktreeKey, type Log } from './load';
import { checkAcknowledgedMessages, checkDuplicateMessages, checkRefusedMessages, type MessageFigures } from './messages';
import { checkProjections, quiesce } from './projection';
import type { Outage } from './match';
import { checkRefusals } from './refusals';
import {
  checkHistories,
  checkLiveVsLog,
  checkReplays,
  fetchHistories,
  listRuns,
  readLiveViews,
  replayHistories,
  type HistoryFigures,
  type LiveView,
  type TemporalAccess,
} from './temporal';
import type { Violation } from './types';

export type { Violation } from './types';
export type { TemporalAccess } from './temporal';

export interface CheckInput {
  target: Target;
  calls: readonly CallRecord[];
  /** the run's worktrees: index -> canonical path */
  worktrees: readonly string[];
  /** session id -> the worker it belongs to */
  homeWorker: ReadonlyMap<string, string>;
  quiesceTimeoutMs?: number;
  /** the Temporal client and workflow bundle: live_vs_log, failed_workflow_task and replay (skipped without) */
  temporal?: TemporalAccess;
  /** where the histories of runs that failed a workflow task or a replay are written (JSON, replayable) */
  historyDir?: string;
  /** spans the workflow worker was down (--kill-worker): signals answered before one may be applied after it */
  workerOutages?: readonly Outage[];
}

export interface TemporalFigures extends HistoryFigures {
  /** workflow ids of the run (the worktrees' and the log's) */
  workflows: number;
  /** histories replayed against the bundle */
  replayed: number;
  replayFailures: number;
  /** running workflows whose projection query was compared with the log */
  liveCompared: number;
}

export interface CheckResult {
  violations: Violation[];
  lifecycles: number;
  events: number;
  quiesceMs: number;
  /** events made by calls that got no answer or a 5xx (applied but never acknowledged) */
  unansweredApplied: number;
  messages: MessageFigures;
  /** absent when the checker had no Temporal access */
  temporal?: TemporalFigures;
}

/**
 * The checker of "exactly one live owner per worktree, and nothing acknowledged is lost", run
 * after the traffic stops: waits for the projections to catch up, then reads PostgreSQL's log
 * (ownership_events, ownerships) and every worktree's local projection; with Temporal access, also
 * every workflow history of the run (failed workflow tasks, replay) and each running workflow's
 * live record.
 */
export async function check(input: CheckInput): Promise<CheckResult> {
  const violations: Violation[] = [];
  const q = await quiesce(input.target, input.quiesceTimeoutMs);
  const log = await loadLog(input.target.pool, input.target.baseDir, violations);
  const slotKeys = new Map(input.worktrees.map((p, i) => [i, worktreeKey(input.target.hostId, p)]));
  checkLifecycles(log, input.homeWorker, violations);
  checkAcks(log, input.calls, violations);
  const attribution = checkRefusals(log, input.calls, slotKeys, violations, input.workerOutages ?? []);
  checkDuplicateMessages(log, violations);
  checkRefusedMessages(log, input.calls, violations);
  const messages = checkAcknowledgedMessages(log, input.calls, violations);
  await checkProjections(
    log,
    input.worktrees.map((p) => ({ path: p, key: worktreeKey(input.target.hostId, p) })),
    q,
    violations,
  );
  const temporal = input.temporal ? await checkTemporal(input, input.temporal, log, violations) : undefined;
  return {
    violations,
    lifecycles: log.lifecycles.size,
    events: log.events,
    quiesceMs: q.ms,
    unansweredApplied: attribution.unansweredApplied,
    messages,
    ...(temporal ? { temporal } : {}),
  };
}

/** The run's workflow ids: each worktree's (whether or not it was ever bound) and every one the log's rows name. */
export function runWorkflowIds(input: Pick<CheckInput, 'target' | 'worktrees'>, log: Log): string[] {
  const ids = new Set(input.worktrees.map((p) => ownershipWorkflowId(input.target.hostId, p)));
  for (const l of log.lifecycles.values()) if (l.row) ids.add(l.row.workflowId);
  return [...ids].sort();
}

async function checkTemporal(input: CheckInput, t: TemporalAccess, log: Log, out: Violation[]): Promise<TemporalFigures> {
  const ids = runWorkflowIds(input, log);
  const live = await liveVsLog(input, t, ids, out);
  const runs = await listRuns(t.client, ids);
  const histories = await fetchHistories(t.client, runs, out);
  const figures = checkHistories(histories, out);
  const replays = await replayHistories(t.workflowBundle, histories, t.dataConverter);
  checkReplays(replays, out);
  if (input.historyDir) {
    const bad = new Set([...out.filter((v) => (v.check === 'failed_workflow_task' || v.check === 'replay') && v.runId).map((v) => v.runId!)]);
    const keep = histories.filter((h) => bad.has(h.runId));
    if (keep.length) mkdirSync(input.historyDir, { recursive: true });
    for (const h of keep)
      writeFileSync(path.join(input.historyDir, `${h.workflowId.replace(/[^A-Za-z0-9._-]/g, '_')}-${h.runId}.json`), historyToJSON(h.history));
  }
  return {
    ...figures,
    workflows: ids.length,
    replayed: replays.length,
    replayFailures: replays.filter((r) => r.error !== undefined).length,
    liveCompared: live,
  };
}

/**
 * live_vs_log with the log read again after each query: a workflow may be between deciding an
 * event and its write (or a handoff may time out meanwhile), so a disagreement is asked again up to
 * three times, a second apart, before it stands.
 */
async function liveVsLog(input: CheckInput, t: TemporalAccess, ids: readonly string[], out: Violation[]): Promise<number> {
  let pending = [...ids];
  let last: Violation[] = [];
  let compared = 0;
  for (let attempt = 0; attempt < 4 && pending.length > 0; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, 1_000));
    const views: LiveView[] = await readLiveViews(t.client, pending);
    if (attempt === 0) compared = views.length;
    const fresh = await loadLog(input.target.pool, input.target.baseDir, []);
    last = [];
    checkLiveVsLog(fresh, views, last);
    pending = [...new Set(last.map((v) => v.workflowId!))];
  }
  out.push(...last);
  return compared;
}
