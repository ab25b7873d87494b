import type { DataConverter } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { projectionQuery } from '../../src/workflows/messages';
import type { Log } from './load';
import type { Violation } from './types';

/**
 * The Temporal side of a run: every workflow history of the run's worktrees (each run of each
 * chain, continued-as-new runs and recycled lifecycles included), replayed against the bundle the
 * workers run, and the live projection of every still-running workflow against the log. The I/O
 * (list, fetch, replay, query) collects; pure functions decide, so a unit test can feed them.
 */

export interface TemporalAccess {
  client: Client;
  /** the workflow bundle the run's workers execute (bench/stack.ts bundlePath; jest: OD_TEST_WORKFLOW_BUNDLE) */
  workflowBundle: { codePath: string };
  /** the deployment's data converter: histories replay through the seal codec as the workers ran them */
  dataConverter: DataConverter;
}

export type History = temporal.api.history.v1.IHistory;

export interface RunHistory {
  workflowId: string;
  runId: string;
  history: History;
}

export interface ReplayOutcome {
  workflowId: string;
  runId: string;
  /** the replay's failure (a nondeterminism names TMPRL1100); absent: replayed cleanly */
  error?: string;
}

/** A running workflow's `projection` query, summarised; `view: null` is a workflow that holds no record. */
export interface LiveView {
  workflowId: string;
  view?: { ownershipId: string; seq: number; state: string; epoch: number; ownerSession: string | null } | null;
  /** the query (or describe) failed */
  error?: string;
}

export interface HistoryFigures {
  runs: number;
  events: number;
  failedTasks: number;
  timedOutTasks: number;
  /** failed workflow tasks by cause */
  failedByCause: Record<string, number>;
}

const ET = temporal.api.enums.v1.EventType;
const CAUSE = temporal.api.enums.v1.WorkflowTaskFailedCause;
/** An error and its causes, one line: `ServiceError: Failed to query Workflow <- QueryFailed: ...`. */
const errText = (err: unknown): string => {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 4; depth++) {
    parts.push(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
    e = e instanceof Error ? (e as Error & { cause?: unknown }).cause : undefined;
  }
  return parts.join(' <- ');
};
const oneLine = (s: string, max = 400) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
};

/**
 * failed_workflow_task: every WorkflowTaskFailed event of every history, with its cause and its
 * failure's message (a nondeterminism failure names TMPRL1100). WorkflowTaskTimedOut events are a
 * figure only (a worker that stopped, a sticky queue nobody polls any more).
 */
export function checkHistories(histories: readonly RunHistory[], out: Violation[]): HistoryFigures {
  const f: HistoryFigures = { runs: histories.length, events: 0, failedTasks: 0, timedOutTasks: 0, failedByCause: {} };
  for (const h of histories) {
    for (const e of h.history.events ?? []) {
      f.events++;
      if (e.eventType === ET.EVENT_TYPE_WORKFLOW_TASK_FAILED) {
        const a = e.workflowTaskFailedEventAttributes;
        const cause = (CAUSE[a?.cause ?? 0] ?? String(a?.cause)).replace(/^WORKFLOW_TASK_FAILED_CAUSE_/, '');
        f.failedTasks++;
        f.failedByCause[cause] = (f.failedByCause[cause] ?? 0) + 1;
        const msg = a?.failure?.message ?? '(no failure message)';
        const stack = a?.failure?.stackTrace ? ` | ${oneLine(a.failure.stackTrace, 200)}` : '';
        out.push({
          check: 'failed_workflow_task',
          message: `${h.workflowId} run ${h.runId} event ${String(e.eventId)}: WorkflowTaskFailed cause ${cause}: ${oneLine(msg)}${stack}`,
          workflowId: h.workflowId,
          runId: h.runId,
        });
      } else if (e.eventType === ET.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT) {
        f.timedOutTasks++;
      }
    }
  }
  return f;
}

/** replay: every history replays against the workers' bundle; a failure names the workflow, run and error. */
export function checkReplays(results: readonly ReplayOutcome[], out: Violation[]): void {
  for (const r of results) {
    if (r.error === undefined) continue;
    out.push({
      check: 'replay',
      message: `${r.workflowId} run ${r.runId} does not replay: ${oneLine(r.error, 600)}`,
      workflowId: r.workflowId,
      runId: r.runId,
    });
  }
}

/**
 * live_vs_log: after quiesce, a running workflow's record (its projection query) is the fold of
 * the log of the ownership it names: same seq, state, epoch and owner session. A running workflow
 * answering no record while the log's latest lifecycle of its worktree is open disagrees too, and
 * so does one whose query fails.
 */
export function checkLiveVsLog(log: Log, live: readonly LiveView[], out: Violation[]): void {
  for (const w of live) {
    if (w.error !== undefined) {
      out.push({ check: 'live_vs_log', message: `${w.workflowId} is running, its projection query failed: ${oneLine(w.error)}`, workflowId: w.workflowId });
      continue;
    }
    if (w.view === undefined) continue;
    if (w.view === null) {
      const mine = [...log.lifecycles.values()].filter((l) => l.row?.workflowId === w.workflowId && l.events.length > 0);
      mine.sort((a, b) => Date.parse(a.events[0]!.at) - Date.parse(b.events[0]!.at));
      const latest = mine.at(-1);
      const last = latest?.folds.at(-1);
      if (latest && last && last.state !== 'closed') {
        out.push({
          check: 'live_vs_log',
          message: `${w.workflowId} is running without a record, the log's ${latest.ownershipId} is ${last.state} at seq ${last.seq}`,
          workflowId: w.workflowId,
          ownershipId: latest.ownershipId,
        });
      }
      continue;
    }
    const l = log.lifecycles.get(w.view.ownershipId);
    if (!l) {
      out.push({
        check: 'live_vs_log',
        message: `${w.workflowId} is running ${w.view.ownershipId} at seq ${w.view.seq}, which has no log`,
        workflowId: w.workflowId,
        ownershipId: w.view.ownershipId,
      });
      continue;
    }
    const f = l.folds.at(-1);
    const logged = f ? { seq: f.seq, state: f.state, epoch: f.epoch, ownerSession: f.owner?.executionSessionId ?? null } : null;
    const running = { seq: w.view.seq, state: w.view.state, epoch: w.view.epoch, ownerSession: w.view.ownerSession };
    if (JSON.stringify(logged) !== JSON.stringify(running)) {
      out.push({
        check: 'live_vs_log',
        message: `${w.workflowId} runs ${JSON.stringify(running)}, the log of ${l.ownershipId} folds to ${JSON.stringify(logged)} (${l.events.length} events)`,
        workflowId: w.workflowId,
        ownershipId: l.ownershipId,
        seq: running.seq,
      });
    }
  }
}

// ---- I/O ---------------------------------------------------------------------------------------

/** Every run (execution) of each workflow id, oldest first: visibility's list, else the latest run by describe. */
export async function listRuns(client: Client, workflowIds: readonly string[]): Promise<{ workflowId: string; runId: string }[]> {
  const out: { workflowId: string; runId: string; start: number }[] = [];
  for (const id of workflowIds) {
    const seen = new Set<string>();
    try {
      for await (const wf of client.workflow.list({ query: `WorkflowId = '${id.replace(/'/g, "\\'")}'` })) {
        if (seen.has(wf.runId)) continue;
        seen.add(wf.runId);
        out.push({ workflowId: id, runId: wf.runId, start: wf.startTime.getTime() });
      }
    } catch {
      // visibility unavailable: the latest run below
    }
    if (seen.size === 0) {
      const d = await client.workflow
        .getHandle(id)
        .describe()
        .catch(() => null);
      if (d) out.push({ workflowId: id, runId: d.runId, start: d.startTime.getTime() });
    }
  }
  out.sort((a, b) => a.workflowId.localeCompare(b.workflowId) || a.start - b.start);
  return out.map(({ workflowId, runId }) => ({ workflowId, runId }));
}

/** The history of each run; one that cannot be fetched is a `replay` violation (it could not be checked). */
export async function fetchHistories(client: Client, runs: readonly { workflowId: string; runId: string }[], out: Violation[]): Promise<RunHistory[]> {
  const histories: RunHistory[] = [];
  for (const r of runs) {
    try {
      histories.push({ ...r, history: await client.workflow.getHandle(r.workflowId, r.runId).fetchHistory() });
    } catch (err) {
      out.push({
        check: 'replay',
        message: `${r.workflowId} run ${r.runId}: history could not be fetched: ${errText(err)}`,
        workflowId: r.workflowId,
        runId: r.runId,
      });
    }
  }
  return histories;
}

/** Replays every history against the bundle (Worker.runReplayHistories yields one result per history, in order). */
export async function replayHistories(bundle: { codePath: string }, histories: readonly RunHistory[], dataConverter: DataConverter): Promise<ReplayOutcome[]> {
  const results: ReplayOutcome[] = [];
  if (histories.length === 0) return results;
  let i = 0;
  try {
    for await (const r of Worker.runReplayHistories(
      { workflowBundle: bundle, replayName: 'torture-replay', dataConverter },
      histories.map((h) => ({ workflowId: h.workflowId, history: h.history })),
    )) {
      const h = histories[i++]!;
      results.push({ workflowId: h.workflowId, runId: h.runId, ...(r.error ? { error: errText(r.error) } : {}) });
    }
  } catch (err) {
    // The replayer itself failed: every history it did not get to is unchecked.
    for (const h of histories.slice(i))
      results.push({ workflowId: h.workflowId, runId: h.runId, error: `replayer failed before this history: ${errText(err)}` });
  }
  return results;
}

/** The projection query of every running workflow among `workflowIds` (bounded per call). */
export async function readLiveViews(client: Client, workflowIds: readonly string[], timeoutMs = 10_000): Promise<LiveView[]> {
  const out: LiveView[] = [];
  for (const id of workflowIds) {
    const handle = client.workflow.getHandle(id);
    let running: boolean;
    try {
      running = (await handle.describe()).status.name === 'RUNNING';
    } catch {
      continue; // never started
    }
    if (!running) continue;
    try {
      const v = await client.withDeadline(Date.now() + timeoutMs, () => handle.query(projectionQuery));
      out.push({
        workflowId: id,
        view: v ? { ownershipId: v.ownershipId, seq: v.seq, state: v.state, epoch: v.epoch, ownerSession: v.owner?.executionSessionId ?? null } : null,
      });
    } catch (err) {
      out.push({ workflowId: id, error: errText(err) });
    }
  }
  return out;
}
