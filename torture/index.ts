import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { check, type CheckInput, type TemporalAccess, type Violation } from './checker';
import { makeSlots } from './fixtures';
import { CallLog } from './record';
import { runBursts, runOperations, type Disturbance, type RoundStats, type RunStats } from './runner';
import type { Target } from './target';
import { detectFeatures, World, type Features } from './world';

export type { Target } from './target';
export type { Violation, TemporalAccess } from './checker';
export type { Disturbance } from './runner';

export interface TortureOptions {
  seed: number;
  /** lane mode: how long to keep starting operations */
  durationMs: number;
  /** lane mode: stop after this many calls */
  maxCalls: number;
  sessionsPerWorker: number;
  worktrees: number;
  /** lane mode: independent random lanes in flight */
  concurrency: number;
  /**
   * Burst mode (both set): `rounds` rounds of `burst` intents fired at once from the same seeded
   * mix, each round waiting for all its answers; over W worktrees that is about burst/W concurrent
   * writers per ownership. Replaces the lanes (durationMs, maxCalls and concurrency are unused).
   */
  rounds?: number;
  burst?: number;
  /** burst mode: a disturbance mid-round (scripts/torture.ts: --restart-worker) */
  disturb?: Disturbance;
  /** the workflow cache cap the workers run with, for the summary (scripts/torture.ts: --cache-size) */
  cacheSize?: number;
  /** what the target runs on, for the summary (scripts/torture.ts: --stack in-process | processes) */
  stack?: string;
  /** Temporal client and workflow bundle: enables live_vs_log, failed_workflow_task and replay */
  temporal?: TemporalAccess;
  /** requests.jsonl, violations.jsonl, summary.json and histories/ (of runs that failed a task or a replay) go here; null: memory only */
  runDir: string | null;
  log?: (line: string) => void;
}

export interface Figures {
  seed: number;
  workers: number;
  sessionsPerWorker: number;
  worktrees: number;
  mode: 'lanes' | 'bursts';
  concurrency: number;
  rounds: number | null;
  burst: number | null;
  cacheSize: number | null;
  stack: string | null;
  disturbance: string | null;
  features: Features;
  intents: number;
  calls: number;
  runMs: number;
  checkMs: number;
  status2xx: number;
  status4xx: number;
  status5xx: number;
  noAnswer: number;
  /** 5xx answers / calls */
  rate5xx: number;
  codes4xx: Record<string, number>;
  codes5xx: Record<string, number>;
  /** owner-changing 2xx answers by their `projection` field (absent before the API reports it) */
  projection: Record<string, number>;
  intentsByKind: Record<string, number>;
  runnerErrors: number;
  lifecycles: number;
  events: number;
  unansweredApplied: number;
  /** write calls answered with an x-od-message-id (0: the message checks had nothing to check) */
  messageIds: number;
  /** 2xx event-making writes: own event logged / explained replay / undecidable (see checker/messages.ts) */
  ackLogged: number;
  ackReplays: number;
  ackUnattributed: number;
  /** Temporal side (null: not checked) */
  workflows: number | null;
  historyRuns: number | null;
  historiesReplayed: number | null;
  replayFailures: number | null;
  failedWorkflowTasks: number | null;
  failedWorkflowTasksByCause: Record<string, number>;
  timedOutWorkflowTasks: number | null;
  liveCompared: number | null;
  /** burst mode: one entry per round */
  roundStats: RoundStats[];
  violations: number;
  violationsByCheck: Record<string, number>;
}

export interface TortureResult {
  figures: Figures;
  /** what the checker was given: a test can check doctored traffic against the same log */
  checked: CheckInput;
  violations: Violation[];
  summary: string;
  ok: boolean;
}

const count = (m: Record<string, number>, k: string) => {
  m[k] = (m[k] ?? 0) + 1;
};
const fmt = (m: Record<string, number>) =>
  Object.entries(m)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/** A whole torture run on a target: worktrees, traffic (lanes or bursts), quiesce, check, figures. */
export async function runTorture(given: Target, opts: TortureOptions): Promise<TortureResult> {
  const target = { ...given, baseDir: realpathSync(given.baseDir) };
  const log = opts.log ?? (() => undefined);
  const bursts = opts.rounds !== undefined && opts.burst !== undefined;
  if (bursts && target.executors.length < 2) throw new Error('burst mode needs sessions of at least two agent workers (executors)');
  if (opts.disturb && !bursts) throw new Error('a mid-round disturbance needs burst mode (rounds and burst)');
  if (opts.runDir) mkdirSync(opts.runDir, { recursive: true });
  const slots = await makeSlots(target.baseDir, opts.worktrees);
  const features = await detectFeatures(target.url);
  const world = new World(target, slots, opts.sessionsPerWorker, features, opts.seed.toString(36));
  const shape = bursts
    ? `${opts.rounds} rounds of ${opts.burst} at once (~${Math.round(opts.burst! / slots.length)} per worktree)`
    : `${opts.concurrency} in flight`;
  log(
    `seed ${opts.seed}: ${target.executors.length} workers x ${opts.sessionsPerWorker} sessions x ${slots.length} worktrees, ${shape}` +
      `${opts.disturb ? `, ${opts.disturb.name} mid-round` : ''}${opts.cacheSize ? `, workflow cache ${opts.cacheSize}` : ''}, contract ${JSON.stringify(features)}`,
  );
  const calls = new CallLog(opts.runDir ? path.join(opts.runDir, 'requests.jsonl') : null);
  let run: RunStats;
  try {
    run = bursts
      ? await runBursts(world, calls, { seed: opts.seed, rounds: opts.rounds!, burst: opts.burst!, ...(opts.disturb ? { disturb: opts.disturb } : {}), log })
      : await runOperations(world, calls, { seed: opts.seed, durationMs: opts.durationMs, maxCalls: opts.maxCalls, concurrency: opts.concurrency, log });
  } finally {
    await calls.close();
  }
  log(
    `traffic done: ${run.calls} calls in ${(run.elapsedMs / 1000).toFixed(1)} s; quiescing and checking${opts.temporal ? ' (log, worktrees, live workflows, histories, replay)' : ''}`,
  );
  const t = Date.now();
  const input: CheckInput = {
    target,
    calls: calls.records,
    worktrees: slots.map((s) => s.path),
    homeWorker: world.homeWorkerIds(),
    ...(opts.temporal ? { temporal: opts.temporal } : {}),
    ...(opts.runDir ? { historyDir: path.join(opts.runDir, 'histories') } : {}),
    ...(opts.disturb?.outages ? { workerOutages: opts.disturb.outages() } : {}),
  };
  const checked = await check(input);
  const tf = checked.temporal;
  const figures: Figures = {
    seed: opts.seed,
    workers: target.executors.length,
    sessionsPerWorker: opts.sessionsPerWorker,
    worktrees: slots.length,
    mode: bursts ? 'bursts' : 'lanes',
    concurrency: opts.concurrency,
    rounds: bursts ? opts.rounds! : null,
    burst: bursts ? opts.burst! : null,
    cacheSize: opts.cacheSize ?? null,
    stack: opts.stack ?? null,
    disturbance: opts.disturb?.name ?? null,
    features,
    intents: run.intents,
    calls: run.calls,
    runMs: run.elapsedMs,
    checkMs: Date.now() - t,
    status2xx: 0,
    status4xx: 0,
    status5xx: 0,
    noAnswer: 0,
    rate5xx: 0,
    codes4xx: {},
    codes5xx: {},
    projection: {},
    intentsByKind: run.byKind,
    runnerErrors: run.runnerErrors,
    lifecycles: checked.lifecycles,
    events: checked.events,
    unansweredApplied: checked.unansweredApplied,
    messageIds: checked.messages.withMessageId,
    ackLogged: checked.messages.ackLogged,
    ackReplays: checked.messages.ackReplays,
    ackUnattributed: checked.messages.ackUnattributed,
    workflows: tf?.workflows ?? null,
    historyRuns: tf?.runs ?? null,
    historiesReplayed: tf?.replayed ?? null,
    replayFailures: tf?.replayFailures ?? null,
    failedWorkflowTasks: tf?.failedTasks ?? null,
    failedWorkflowTasksByCause: tf?.failedByCause ?? {},
    timedOutWorkflowTasks: tf?.timedOutTasks ?? null,
    liveCompared: tf?.liveCompared ?? null,
    roundStats: run.rounds ?? [],
    violations: checked.violations.length,
    violationsByCheck: {},
  };
  for (const r of calls.records) {
    if (r.status === 0) figures.noAnswer++;
    else if (r.status < 300) {
      figures.status2xx++;
      if (r.answer?.projection && r.op !== 'get') count(figures.projection, r.answer.projection);
    } else if (r.status < 500) {
      figures.status4xx++;
      count(figures.codes4xx, r.code ?? String(r.status));
    } else {
      figures.status5xx++;
      count(figures.codes5xx, r.code ?? String(r.status));
    }
  }
  figures.rate5xx = figures.calls ? figures.status5xx / figures.calls : 0;
  for (const v of checked.violations) count(figures.violationsByCheck, v.check);
  if (checked.messages.unattributedExamples.length)
    log(`ack_unattributed (replay or lost, the log cannot tell): ${checked.messages.unattributedExamples.join('; ')}`);
  // With a worker killed or restarted mid-round, a 503 is an honest answer (nothing took effect: the
  // checker's unavailable_took_effect and unanswered_applied say so); without one, any 5xx fails.
  const ok = figures.violations === 0 && figures.noAnswer === 0 && (figures.status5xx === 0 || figures.disturbance !== null);
  const mode = bursts ? `bursts=${figures.rounds}x${figures.burst}${figures.disturbance ? `+${figures.disturbance}` : ''}` : `c=${figures.concurrency}`;
  const temporalPart = tf
    ? `wft_failed=${tf.failedTasks}${tf.failedTasks ? ` (${fmt(tf.failedByCause)})` : ''} wft_timed_out=${tf.timedOutTasks} histories_replayed=${tf.replayed}/${tf.runs} ` +
      `replay_failures=${tf.replayFailures} live_compared=${tf.liveCompared} `
    : 'temporal_checks=off ';
  const summary =
    `torture ${ok ? 'PASS' : 'FAIL'} seed=${opts.seed} ${figures.workers}x${figures.sessionsPerWorker}x${figures.worktrees} ${mode}${figures.cacheSize ? ` cache=${figures.cacheSize}` : ''}${figures.stack ? ` stack=${figures.stack}` : ''} ` +
    `run=${(figures.runMs / 1000).toFixed(1)}s calls=${figures.calls} intents=${figures.intents} 2xx=${figures.status2xx} ` +
    `4xx=${figures.status4xx}${figures.status4xx ? ` (${fmt(figures.codes4xx)})` : ''} 5xx=${figures.status5xx}${figures.status5xx ? ` (${fmt(figures.codes5xx)})` : ''} ` +
    `5xx_rate=${(figures.rate5xx * 100).toFixed(1)}% no_answer=${figures.noAnswer} runner_errors=${figures.runnerErrors} lifecycles=${figures.lifecycles} events=${figures.events} ` +
    `unanswered_applied=${figures.unansweredApplied}${Object.keys(figures.projection).length ? ` projection(${fmt(figures.projection)})` : ''} ` +
    `message_ids=${figures.messageIds} ack(logged=${figures.ackLogged},replays=${figures.ackReplays},unattributed=${figures.ackUnattributed}) ` +
    temporalPart +
    `violations=${figures.violations}${figures.violations ? ` (${fmt(figures.violationsByCheck)})` : ''}`;
  if (opts.runDir) {
    writeFileSync(
      path.join(opts.runDir, 'violations.jsonl'),
      checked.violations.map((v) => JSON.stringify(v)).join('\n') + (checked.violations.length ? '\n' : ''),
    );
    writeFileSync(path.join(opts.runDir, 'summary.json'), `${JSON.stringify({ summary, figures }, null, 2)}\n`);
  }
  return { figures, checked: input, violations: checked.violations, summary, ok };
}
