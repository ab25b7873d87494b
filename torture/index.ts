import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { check, type CheckInput, type Violation } from './checker';
import { makeSlots } from './fixtures';
import { CallLog } from './record';
import { runOperations } from './runner';
import type { Target } from './target';
import { detectFeatures, World, type Features } from './world';

export type { Target } from './target';
export type { Violation } from './checker';

export interface TortureOptions {
  seed: number;
  durationMs: number;
  maxCalls: number;
  sessionsPerWorker: number;
  worktrees: number;
  concurrency: number;
  /** requests.jsonl, violations.jsonl and summary.json go here; null: memory only */
  runDir: string | null;
  log?: (line: string) => void;
}

export interface Figures {
  seed: number;
  workers: number;
  sessionsPerWorker: number;
  worktrees: number;
  concurrency: number;
  features: Features;
  intents: number;
  calls: number;
  runMs: number;
  checkMs: number;
  status2xx: number;
  status4xx: number;
  status5xx: number;
  noAnswer: number;
  codes4xx: Record<string, number>;
  codes5xx: Record<string, number>;
  /** owner-changing 2xx answers by their `projection` field (absent before the API reports it) */
  projection: Record<string, number>;
  intentsByKind: Record<string, number>;
  runnerErrors: number;
  lifecycles: number;
  events: number;
  unansweredApplied: number;
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

/** A whole torture run on a target: worktrees, traffic, quiesce, check, figures. */
export async function runTorture(given: Target, opts: TortureOptions): Promise<TortureResult> {
  const target = { ...given, baseDir: realpathSync(given.baseDir) };
  const log = opts.log ?? (() => undefined);
  if (opts.runDir) mkdirSync(opts.runDir, { recursive: true });
  const slots = await makeSlots(target.baseDir, opts.worktrees);
  const features = await detectFeatures(target.url);
  const world = new World(target, slots, opts.sessionsPerWorker, features, opts.seed.toString(36));
  log(`seed ${opts.seed}: ${target.executors.length} workers x ${opts.sessionsPerWorker} sessions x ${slots.length} worktrees, ${opts.concurrency} in flight, contract ${JSON.stringify(features)}`);
  const calls = new CallLog(opts.runDir ? path.join(opts.runDir, 'requests.jsonl') : null);
  const run = await runOperations(world, calls, { seed: opts.seed, durationMs: opts.durationMs, maxCalls: opts.maxCalls, concurrency: opts.concurrency, log });
  await calls.close();
  log(`traffic done: ${run.calls} calls in ${(run.elapsedMs / 1000).toFixed(1)} s; quiescing and checking`);
  const t = Date.now();
  const input: CheckInput = { target, calls: calls.records, worktrees: slots.map((s) => s.path), homeWorker: world.homeWorkerIds() };
  const checked = await check(input);
  const figures: Figures = {
    seed: opts.seed,
    workers: target.executors.length,
    sessionsPerWorker: opts.sessionsPerWorker,
    worktrees: slots.length,
    concurrency: opts.concurrency,
    features,
    intents: run.intents,
    calls: run.calls,
    runMs: run.elapsedMs,
    checkMs: Date.now() - t,
    status2xx: 0,
    status4xx: 0,
    status5xx: 0,
    noAnswer: 0,
    codes4xx: {},
    codes5xx: {},
    projection: {},
    intentsByKind: run.byKind,
    runnerErrors: run.runnerErrors,
    lifecycles: checked.lifecycles,
    events: checked.events,
    unansweredApplied: checked.unansweredApplied,
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
  for (const v of checked.violations) count(figures.violationsByCheck, v.check);
  const ok = figures.violations === 0 && figures.status5xx === 0 && figures.noAnswer === 0;
  const summary =
    `torture ${ok ? 'PASS' : 'FAIL'} seed=${opts.seed} ${figures.workers}x${figures.sessionsPerWorker}x${figures.worktrees} c=${figures.concurrency} ` +
    `run=${(figures.runMs / 1000).toFixed(1)}s calls=${figures.calls} intents=${figures.intents} 2xx=${figures.status2xx} ` +
    `4xx=${figures.status4xx}${figures.status4xx ? ` (${fmt(figures.codes4xx)})` : ''} 5xx=${figures.status5xx}${figures.status5xx ? ` (${fmt(figures.codes5xx)})` : ''} ` +
    `no_answer=${figures.noAnswer} runner_errors=${figures.runnerErrors} lifecycles=${figures.lifecycles} events=${figures.events} ` +
    `unanswered_applied=${figures.unansweredApplied}${Object.keys(figures.projection).length ? ` projection(${fmt(figures.projection)})` : ''} ` +
    `violations=${figures.violations}${figures.violations ? ` (${fmt(figures.violationsByCheck)})` : ''}`;
  if (opts.runDir) {
    writeFileSync(path.join(opts.runDir, 'violations.jsonl'), checked.violations.map((v) => JSON.stringify(v)).join('\n') + (checked.violations.length ? '\n' : ''));
    writeFileSync(path.join(opts.runDir, 'summary.json'), `${JSON.stringify({ summary, figures }, null, 2)}\n`);
  }
  return { figures, checked: input, violations: checked.violations, summary, ok };
}
