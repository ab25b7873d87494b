import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Cleanup } from '../stack/cleanup';
import { checkAgreement, checkAnswers, checkHealth, checkLog, checkProgress, loadLog, rebuildCheck, type HealthFinding, type Violation } from './checker';
import { diagnoseWedge } from './diagnose';
import { makeWorktrees } from './git';
import { HealthMonitor, Timeline } from './health';
import { call, CallLog } from './http';
import { faultList, selectFaults, type DeletionResult, type Holds } from './injectors';
import { IntentLog, makeDrivers, type Driver, type LoadContext } from './load';
import { Rng } from '../chaos/rng';
import { FaultStack } from './stack';
import { BEACON_STALE_MS, BEAT_MS } from '../src/infra/beacon';

export interface FaultsOptions {
  seed: number;
  short: boolean;
  /** fault ids to run (default: all of the mode) */
  only: string[] | null;
  worktrees: number;
  executors: number;
  holds: Holds;
  warmupMs: number;
  settleMs: number;
  /** the next message after a fault: answered 2xx within this (the promise's bound) */
  probeBoundMs: number;
  /** how long a killed worker or host agent may still be reported up by /healthz */
  healthLagMs: number;
  keep: boolean;
  log: (line: string) => void;
}

export const PROBE_BOUND_MS = 30_000;
/**
 * How long /healthz may still call a killed or frozen worker or host agent up: their beacons
 * (src/infra/beacon.ts; every process of this stack has DATABASE_URL) go stale in
 * BEACON_STALE_MS, plus a beat and the sampler's period.
 */
export const HEALTH_LAG_MS = BEACON_STALE_MS + BEAT_MS + 5_000;

export function defaultOptions(short: boolean): Omit<FaultsOptions, 'seed' | 'log'> {
  return {
    short,
    only: null,
    worktrees: short ? 4 : 6,
    executors: 3,
    holds: short
      ? { workerDelayMs: 35_000, temporalDownMs: 4_000, temporalGoneMs: 120_000, postgresDownMs: 8_000, hostStoppedMs: 8_000, hostGoneMs: 75_000 }
      : { workerDelayMs: 40_000, temporalDownMs: 35_000, temporalGoneMs: 120_000, postgresDownMs: 30_000, hostStoppedMs: 30_000, hostGoneMs: 75_000 },
    warmupMs: short ? 2_000 : 8_000,
    settleMs: short ? 2_000 : 8_000,
    probeBoundMs: PROBE_BOUND_MS,
    healthLagMs: HEALTH_LAG_MS,
    keep: false,
  };
}

export interface PhaseFigures {
  id: string;
  title: string;
  acked: number;
  inDoubt: number;
  gaveUp: number;
  refused: number;
  lost: number;
  duplicated: number;
  unexplained: number;
  refusedLogged: number;
  wedged: number;
  /** events of intents left in doubt and never acknowledged (allowed: a 503 says "retry", not "nothing happened") */
  appliedUnacked: number;
  /** landings accepted (202), then refused by the workflow because an earlier removal had closed the lifecycle */
  droppedLandings: number;
  /** handoffs in doubt whose retry started a second handoff after the first had ended */
  retriedTwice: number;
  probes: number;
  maxProbeMs: number;
  calls: number;
  fivexx: Record<string, number>;
  maxLatencyMs: number;
  maxLatencyOp: string;
  health: HealthFinding[];
  rebuildClean: boolean;
  events: number;
  violations: Violation[];
  line: string;
}

export interface FaultsResult {
  ok: boolean;
  phases: PhaseFigures[];
  runDir: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmtMs = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/** The whole run: stack, worktrees, load, each fault in turn with its checks and figures line. */
export async function runFaults(opts: FaultsOptions, cleanup: Cleanup): Promise<FaultsResult> {
  const log = opts.log;
  const stack = new FaultStack(cleanup, log, { executors: opts.executors, keep: opts.keep });
  cleanup.add('stop the stack', () => stack.stopAll(), 40_000);
  log(`seed ${opts.seed} (${opts.short ? 'short' : 'long'} mode; repeat with --seed ${opts.seed}); run dir ${stack.root}${opts.keep ? ' (kept)' : ''}`);
  await stack.start();

  const rng = new Rng(opts.seed);
  const worktrees = await makeWorktrees(stack.repoDir, opts.worktrees);
  const calls = new CallLog(path.join(stack.runDir, 'requests.jsonl'));
  const intents = new IntentLog(path.join(stack.runDir, 'intents.jsonl'));
  cleanup.add('close request logs', async () => {
    await calls.close();
    await intents.close();
  });
  const ctx: LoadContext = {
    url: stack.url,
    tokens: stack.tokens,
    calls,
    intents,
    tag: opts.seed.toString(36),
    giveUpMs: opts.short ? 60_000 : 150_000,
    clientTimeoutMs: 90_000,
    log,
    phase: () => calls.phase,
  };
  const drivers = makeDrivers(ctx, worktrees, rng);
  const timeline = new Timeline();
  const health = new HealthMonitor(stack.url);
  health.start();
  cleanup.add('stop health sampler', () => health.stop());
  const deletions: DeletionResult[] = [];
  const phaseStarts: { id: string; t: number }[] = [{ id: 'setup', t: 0 }];
  const phaseOf = (t: number) => [...phaseStarts].reverse().find((p) => p.t <= t)?.id ?? 'setup';
  const seen = new Set<string>();
  const phases: PhaseFigures[] = [];

  const faults = selectFaults(faultList(opts.holds, opts.short), opts.short, opts.only);
  for (const fault of faults) {
    calls.phase = fault.id;
    phaseStarts.push({ id: fault.id, t: Date.now() });
    log(`${fault.id}: ${fault.title}`);
    await waitHealthy(stack.url, 60_000);
    drivers.forEach((d) => d.start());
    await sleep(opts.warmupMs);
    const t0 = Date.now();
    await fault.inject({ stack, load: ctx, timeline, drivers, rng: rng.fork(1000 + phases.length), holds: opts.holds, phase: fault.id, log, deletions });
    const healed = Date.now();
    // The next message, for every worktree's current ownership, within the bound from the moment
    // the fault healed: the load stops retrying what is in doubt, and each driver sends it.
    await Promise.all(drivers.map((d) => d.stop({ abandon: true })));
    const probes = await Promise.all(drivers.map((d) => d.probe(opts.probeBoundMs, healed)));
    log(
      `${fault.id}: healed after ${fmtMs(healed - t0)}; next message taken by all within ${fmtMs(Math.max(0, ...probes.map((x) => x.ms)))}; load goes on for ${fmtMs(opts.settleMs)}`,
    );
    // A wedge is diagnosed while it still stands: before the load goes on and may move it.
    for (const [k, pr] of probes.entries()) {
      if (pr.ok) continue;
      const d = drivers[k]!;
      const lines = await diagnoseWedge({
        pool: stack.pool,
        temporalAddress: `127.0.0.1:${stack.temporalPort}`,
        runDir: stack.runDir,
        worktreePath: d.wt.path,
        ownershipId: d.belief.ownershipId,
      });
      for (const l of lines) log(`  wedge ${fault.id} ${d.wt.name}: ${l}`);
    }
    drivers.forEach((d) => d.start());
    await sleep(opts.settleMs);
    await Promise.all(drivers.map((d) => d.stop()));
    await quiesce(stack, 60_000);
    const figures = await checkPhase({ fault, stack, calls, intents, timeline, health, phaseOf, opts, probes, drivers, deletions, seen });
    phases.push(figures);
    process.stdout.write(`${figures.line}\n`);
    for (const v of figures.violations.slice(0, 30)) log(`  violation ${v.check} [${v.phase}]: ${v.message}`);
    if (figures.violations.length > 30) log(`  … ${figures.violations.length - 30} more in ${path.join(stack.runDir, 'violations.jsonl')}`);
  }
  health.stop();
  writeFileSync(path.join(stack.runDir, 'timeline.json'), `${JSON.stringify(timeline.intervals, null, 1)}\n`);
  writeFileSync(path.join(stack.runDir, 'healthz.jsonl'), health.samples.map((x) => JSON.stringify(x)).join('\n') + '\n');
  writeFileSync(
    path.join(stack.runDir, 'violations.jsonl'),
    phases
      .flatMap((p) => p.violations)
      .map((v) => JSON.stringify(v))
      .join('\n') + '\n',
  );
  writeFileSync(
    path.join(stack.runDir, 'summary.json'),
    `${JSON.stringify(
      phases.map(({ violations, ...p }) => ({ ...p, violations: violations.length })),
      null,
      2,
    )}\n`,
  );
  const ok = phases.length === faults.length && phases.every((p) => p.violations.length === 0);
  return { ok, phases, runDir: stack.root };
}

async function waitHealthy(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) });
      if (res.status === 200) return;
    } catch {
      /* not yet */
    }
    await sleep(500);
  }
  throw new Error(`the stack did not get healthy within ${timeoutMs} ms`);
}

/** Until every live ownership's view, row and log agree on the seq (signals and projections settled). */
async function quiesce(stack: FaultStack, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let stableRounds = 0;
  while (Date.now() < deadline && stableRounds < 2) {
    const rows = await stack.pool.query<{ ownership_id: string; seq: number; state: string }>(
      "SELECT ownership_id, seq, state FROM ownerships WHERE state <> 'closed'",
    );
    let settled = true;
    for (const r of rows.rows) {
      const res = await fetch(`${stack.url}/v1/ownerships/${r.ownership_id}`, { headers: { authorization: `Bearer ${stack.tokens.reader}` } }).catch(
        () => null,
      );
      const v = res && res.ok ? ((await res.json()) as { seq?: number; projectionSync?: { durableSeq?: number; localSeq?: number } | null }) : null;
      if (!v || v.seq !== r.seq || (v.projectionSync && v.projectionSync.durableSeq !== r.seq)) settled = false;
    }
    stableRounds = settled ? stableRounds + 1 : 0;
    await sleep(500);
  }
}

interface PhaseInput {
  fault: { id: string; title: string };
  stack: FaultStack;
  calls: CallLog;
  intents: IntentLog;
  timeline: Timeline;
  health: HealthMonitor;
  phaseOf: (t: number) => string;
  opts: FaultsOptions;
  probes: { op: string; ok: boolean; ms: number; code?: string }[];
  drivers: Driver[];
  deletions: DeletionResult[];
  seen: Set<string>;
}

async function checkPhase(p: PhaseInput): Promise<PhaseFigures> {
  const { fault, stack } = p;
  const logData = await loadLog(stack.pool);
  const all: Violation[] = [];
  const logCheck = checkLog(logData, p.intents.intents, p.calls.records, p.phaseOf);
  all.push(...logCheck.violations);
  all.push(...checkAnswers(p.calls.records, p.timeline));
  const healthCheck = checkHealth(p.health.samples, p.timeline, p.opts.healthLagMs, p.phaseOf);
  all.push(...healthCheck.violations);
  all.push(
    ...(await checkAgreement(
      logData,
      async (id) => {
        const a = await call(
          p.calls,
          stack.url,
          'GET',
          `/v1/ownerships/${id}`,
          stack.tokens.reader,
          undefined,
          { op: 'get', slot: -1, intent: -1, attempt: 1, fields: {} },
          30_000,
        );
        return { status: a.record.status, body: a.body };
      },
      fault.id,
    )),
  );
  const rebuild = await rebuildCheck(stack.databaseUrl, fault.id);
  all.push(...rebuild.violations);
  all.push(
    ...checkProgress(
      fault.id,
      p.probes.map((pr, k) => ({ ...pr, name: p.drivers[k]!.wt.name })),
      p.opts.probeBoundMs,
      p.deletions.filter((x) => x.phase === fault.id),
      p.drivers.flatMap((d) => d.errors.splice(0).map((error) => ({ name: d.wt.name, error }))),
    ),
  );

  // Only what this phase newly found is its own.
  const fresh = all.filter((v) => {
    const key = `${v.check}|${v.message}`;
    if (p.seen.has(key)) return false;
    p.seen.add(key);
    return true;
  });
  const mine = p.intents.intents.filter((i) => i.phase === fault.id);
  const myCalls = p.calls.records.filter((c) => c.phase === fault.id);
  const fivexx: Record<string, number> = {};
  let maxLatencyMs = 0;
  let maxLatencyOp = '';
  for (const c of myCalls) {
    if (c.status >= 500 || c.status === 0) fivexx[`${c.status}:${c.code ?? ''}`] = (fivexx[`${c.status}:${c.code ?? ''}`] ?? 0) + 1;
    if (c.t1 - c.t0 > maxLatencyMs) {
      maxLatencyMs = c.t1 - c.t0;
      maxLatencyOp = c.op;
    }
  }
  const count = (check: string) => fresh.filter((v) => v.check === check).length;
  const healthFindings = healthCheck.findings.filter((f) => f.phase === fault.id);
  const f: PhaseFigures = {
    id: fault.id,
    title: fault.title,
    acked: mine.filter((i) => i.outcome === 'acked').length,
    inDoubt: mine.filter((i) => i.inDoubt).length,
    gaveUp: mine.filter((i) => i.outcome === 'gave_up').length,
    refused: mine.filter((i) => i.outcome === 'refused').length,
    lost: count('lost'),
    duplicated: count('duplicated'),
    unexplained: count('unexplained_event'),
    refusedLogged: count('refused_but_logged'),
    wedged: count('wedged'),
    appliedUnacked: logCheck.appliedUnacked.filter((x) => x.phase === fault.id).length,
    droppedLandings: logCheck.droppedLandings.filter((x) => x.phase === fault.id).length,
    retriedTwice: logCheck.retriedTwice.filter((x) => x.phase === fault.id).length,
    probes: p.probes.length,
    maxProbeMs: Math.max(0, ...p.probes.map((x) => x.ms)),
    calls: myCalls.length,
    fivexx,
    maxLatencyMs,
    maxLatencyOp,
    health: healthFindings,
    rebuildClean: rebuild.clean,
    events: logData.events,
    violations: fresh,
    line: '',
  };
  const fx = Object.entries(fivexx)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  // Recovery: once the component was back, when /healthz said 200 again and when the last 503 was answered.
  const recovery = (h: HealthFinding): string => {
    const d = p.timeline.intervals.find((x) => x.phase === h.phase && x.component === h.component);
    if (!d || !Number.isFinite(d.to)) return '';
    const ok = p.health.samples.find((x) => x.t0 >= d.to && x.status === 200);
    const last503 = myCalls.filter((c) => c.status === 503 && c.t1 >= d.to).at(-1);
    return `, back: 200 after ${ok ? fmtMs(ok.t1 - d.to) : 'never'}${last503 ? `, last 503 +${fmtMs(last503.t1 - d.to)}` : ''}`;
  };
  const hx = healthFindings
    .map(
      (h) =>
        `${h.component} down ${fmtMs(h.downMs)}: ${h.reportedAfterMs === null ? 'never reported' : `reported after ${fmtMs(h.reportedAfterMs)}`}${recovery(h)}`,
    )
    .join('; ');
  const byCheck = new Map<string, number>();
  for (const v of fresh) byCheck.set(v.check, (byCheck.get(v.check) ?? 0) + 1);
  // What the reclaim of a deleted worktree logged before its reclaimed event: WIP kept (git was quicker) or not.
  const wipOf = (d: DeletionResult): string => {
    const events = d.ownershipId ? (logData.byOwnership.get(d.ownershipId) ?? []) : [];
    const i = events.findIndex((e) => e.type === 'ownership.reclaimed' && e.data.owner.executionSessionId === d.session);
    const prev = i > 0 ? events[i - 1]!.type : null;
    return prev === 'ownership.wip_preserved' ? 'wip_preserved' : prev === 'ownership.wip_not_preserved' ? 'wip_not_preserved' : 'no_wip_event';
  };
  const dx = p.deletions
    .filter((d) => d.phase === fault.id)
    .map(
      (d) =>
        `wt-${d.slot}/${d.variant}${d.hit ? '(in git)' : ''}:${d.result?.outcome ?? 'none'}${d.result ? `@${fmtMs(d.result.ms)}` : ''}${d.session ? `/${wipOf(d)}` : ''}`,
    )
    .join(',');
  f.line =
    `[faults] ${fault.id} ${fresh.length === 0 ? 'PASS' : 'FAIL'} acked=${f.acked} lost=${f.lost} duplicated=${f.duplicated} unexplained=${f.unexplained + f.refusedLogged} ` +
    `wedged=${f.wedged}/${f.probes} (next message within ${fmtMs(f.maxProbeMs)} of the heal) in_doubt=${f.inDoubt} gave_up=${f.gaveUp} applied_unacked=${f.appliedUnacked} retried_twice=${f.retriedTwice} landings_dropped=${f.droppedLandings} calls=${f.calls} ` +
    `5xx={${fx}} max_latency=${fmtMs(maxLatencyMs)}${maxLatencyOp ? `(${maxLatencyOp})` : ''} rebuild=${rebuild.clean ? 'clean' : 'DIRTY'} events=${f.events}` +
    `${hx ? ` healthz=[${hx}]` : ''}${dx ? ` deleted=[${dx}]` : ''} violations=${fresh.length}${fresh.length ? ` (${[...byCheck].map(([k, v]) => `${k}=${v}`).join(',')})` : ''} | ${fault.title}`;
  return f;
}
