import { summarize } from '../chaos/answer';
import { send } from '../chaos/http';
import { DRAWS, OP_WEIGHTS, OPERATIONS, type CallSpec, type OpKind } from './operations';
import { CallLog, type CallRecord } from './record';
import { Rng } from '../chaos/rng';
import type { World } from './world';

const KEEP_ON_LANDED: ReadonlySet<OpKind> = new Set(['bind', 'bindRace', 'bindSpoofedRoot', 'look', 'landed', 'heartbeat']);

export interface RunOptions {
  seed: number;
  /** stop starting operations after this long */
  durationMs: number;
  /** or after this many calls, whichever comes first */
  maxCalls: number;
  /** intents in flight at once (a bind race is one intent of several calls) */
  concurrency: number;
  callTimeoutMs?: number;
  log?: (line: string) => void;
}

/** A disturbance run once in every round of a burst run, after the round is under way (e.g. a worker restart). */
export interface Disturbance {
  name: string;
  /** runs mid-round; what it returns is printed on the round's line */
  run(round: number): Promise<string>;
  /**
   * When in the round it runs, if it chooses: once `share` of the round's intents have ended, or
   * after `afterMs` (null: no time fallback, the share alone decides), whichever first. Absent:
   * BurstOptions' disturbAtShare / disturbAfterMs.
   */
  at?(round: number): { share: number; afterMs: number | null };
  /** spans in which it left the workflow worker down (epoch ms), for the checker's signal windows */
  outages?(): readonly { from: number; to: number }[];
}

export interface BurstOptions {
  seed: number;
  rounds: number;
  /** intents fired at once in each round (an intent is one call, a bind race two or three) */
  burst: number;
  callTimeoutMs?: number;
  /** started once this share of the round's intents has ended, or after `disturbAfterMs`, whichever first */
  disturb?: Disturbance;
  disturbAtShare?: number;
  disturbAfterMs?: number;
  log?: (line: string) => void;
}

export interface RoundStats {
  round: number;
  intents: number;
  calls: number;
  status2xx: number;
  status4xx: number;
  status5xx: number;
  noAnswer: number;
  ms: number;
  /** what the round's disturbance reported, and when it started (ms into the round) */
  disturbance?: { atMs: number; note: string };
}

export interface RunStats {
  intents: number;
  calls: number;
  elapsedMs: number;
  byKind: Record<string, number>;
  /** intents that failed in the runner itself (git in the worktree, not an answer of the service) */
  runnerErrors: number;
  /** burst mode only */
  rounds?: RoundStats[];
}

/** Sends one call of an intent and records it (and its message id) in the call log and the world's beliefs. */
function caller(world: World, calls: CallLog, timeoutMs: number, round: () => number | undefined) {
  let inFlight = 0;
  const call = async (intent: number, spec: CallSpec): Promise<CallRecord> => {
    const n = calls.nextN();
    const r = round();
    inFlight++;
    const t0 = Date.now();
    const res = await send(world.target.url, spec.method, spec.path, spec.token, spec.body, timeoutMs);
    const t1 = Date.now();
    inFlight--;
    const { code, answer } = summarize(res.status, res.body);
    const rec: CallRecord = {
      n,
      intent,
      op: spec.op,
      variant: spec.variant,
      mustRefuse: spec.mustRefuse === true,
      caller: spec.caller,
      slot: spec.slot,
      ...(spec.target ? { target: spec.target } : {}),
      method: spec.method,
      path: spec.path,
      ...(spec.body ? { body: spec.body } : {}),
      t0,
      t1,
      status: res.status,
      ...(code ? { code } : {}),
      ...(answer ? { answer } : {}),
      ...(res.messageId ? { messageId: res.messageId } : {}),
      ...(r !== undefined ? { round: r } : {}),
    };
    calls.add(rec);
    world.observe(spec.slot, answer);
    return rec;
  };
  return { call, inFlight: () => inFlight };
}

/**
 * The next intent from the seed: an operation kind and every random number it will use, drawn in
 * a fixed order whatever the timing. What the world believes about the worktree may turn it into a
 * read (the worktree is being recycled) or a recycle (it landed).
 */
function drawIntent(rng: Rng, world: World, weights: Readonly<Record<OpKind, number>> = OP_WEIGHTS): { kind: OpKind; r: number[] } {
  let kind: OpKind = rng.weighted(weights);
  const r = Array.from({ length: DRAWS }, () => rng.next());
  const k = Math.min(world.slots.length - 1, Math.floor(r[0]! * world.slots.length));
  const b = world.beliefs[k]!;
  // A worktree being removed and re-added gets reads only meanwhile.
  if (b.recycling) kind = 'look';
  // A landed worktree is what a landing controller removes next; binds keep meeting the ended lifecycle.
  else if ((b.state === 'landed' || b.state === 'closed') && !KEEP_ON_LANDED.has(kind)) kind = 'recycle';
  return { kind, r };
}

/**
 * The burst mix: the lanes' weights, but for the landing, which ends the lifecycle (the worktree is
 * recycled next and every other writer of the round meets a closed ownership). With k writers per
 * ownership in a round the lanes' weight would land about 0.8 of the worktrees every round; scaled
 * by 5/k a worktree lands about once in five rounds, so most rounds contend on live ownerships.
 */
export function burstWeights(writersPerOwnership: number): Record<OpKind, number> {
  return { ...OP_WEIGHTS, landed: OP_WEIGHTS.landed * Math.min(1, 5 / Math.max(1, writersPerOwnership)) };
}

/**
 * Random legal and illegal operations over HTTP, `concurrency` at a time. The intents (which
 * operation, and every random number it uses) come from the seed in a fixed order; what they
 * meet depends on timing, which is what a torture run is for.
 */
export async function runOperations(world: World, calls: CallLog, opts: RunOptions): Promise<RunStats> {
  const rng = new Rng(opts.seed);
  const started = Date.now();
  const deadline = started + opts.durationMs;
  const byKind: Record<string, number> = {};
  let intents = 0;
  let runnerErrors = 0;
  const { call, inFlight } = caller(world, calls, opts.callTimeoutMs ?? 90_000, () => undefined);
  const stop = () => Date.now() >= deadline || calls.records.length + inFlight() >= opts.maxCalls;

  let lastReport = started;
  const lane = async () => {
    while (!stop()) {
      const i = intents++;
      const { kind, r } = drawIntent(rng, world);
      byKind[kind] = (byKind[kind] ?? 0) + 1;
      try {
        await OPERATIONS[kind]({ world, intent: i, r, call: (spec) => call(i, spec) });
      } catch (err) {
        runnerErrors++;
        opts.log?.(`intent ${i} (${kind}) failed in the runner: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (opts.log && Date.now() - lastReport > 10_000) {
        lastReport = Date.now();
        opts.log(`${Math.round((Date.now() - started) / 1000)} s: ${calls.records.length} calls, ${intents} intents`);
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, lane));
  return { intents, calls: calls.records.length, elapsedMs: Date.now() - started, byKind, runnerErrors };
}

/**
 * Burst mode: `rounds` rounds, each firing `burst` intents at once (drawn from the seed as lanes
 * draw them, with fewer landings: burstWeights; all against the beliefs of the round's start), then waiting for every answer before
 * the next round. Over few worktrees this is contention on single ownerships: with 200 intents
 * over 10 worktrees, some 20 writers (owners, successors, intruders, admins; sessions of every
 * worker) address each ownership at the same moment. A disturbance, if any, runs mid-round.
 */
export async function runBursts(world: World, calls: CallLog, opts: BurstOptions): Promise<RunStats> {
  const rng = new Rng(opts.seed);
  const started = Date.now();
  const byKind: Record<string, number> = {};
  let intents = 0;
  let runnerErrors = 0;
  let current: number | undefined;
  const { call } = caller(world, calls, opts.callTimeoutMs ?? 90_000, () => current);
  const rounds: RoundStats[] = [];
  const weights = burstWeights(opts.burst / world.slots.length);
  for (let round = 1; round <= opts.rounds; round++) {
    current = round;
    const t0 = Date.now();
    const firstCall = calls.records.length;
    let ended = 0;
    let midRound: () => void = () => undefined;
    const mid = new Promise<void>((resolve) => {
      midRound = resolve;
    });
    const at = opts.disturb?.at?.(round);
    const share = Math.max(1, Math.ceil(opts.burst * (at ? at.share : (opts.disturbAtShare ?? 0.25))));
    const afterMs = at ? at.afterMs : (opts.disturbAfterMs ?? 1_500);
    const timer = afterMs === null ? undefined : setTimeout(midRound, afterMs);
    const fired: Promise<void>[] = [];
    // Drawn and started in one synchronous loop: each operation runs up to its first await before
    // the next is drawn (a recycle marks its worktree before any later intent of the round looks).
    for (let j = 0; j < opts.burst; j++) {
      const i = intents++;
      const { kind, r } = drawIntent(rng, world, weights);
      byKind[kind] = (byKind[kind] ?? 0) + 1;
      fired.push(
        OPERATIONS[kind]({ world, intent: i, r, call: (spec) => call(i, spec) })
          .catch((err: unknown) => {
            runnerErrors++;
            opts.log?.(`round ${round} intent ${i} (${kind}) failed in the runner: ${err instanceof Error ? err.message : String(err)}`);
          })
          .finally(() => {
            if (++ended >= share) midRound();
          }),
      );
    }
    let disturbance: RoundStats['disturbance'];
    const disturbed = opts.disturb
      ? mid.then(async () => {
          const atMs = Date.now() - t0;
          let note: string;
          try {
            note = await opts.disturb!.run(round);
          } catch (err) {
            note = `${opts.disturb!.name} failed: ${err instanceof Error ? err.message : String(err)}`;
          }
          disturbance = { atMs, note };
        })
      : Promise.resolve();
    await Promise.all([...fired, disturbed]);
    clearTimeout(timer);
    const mine = calls.records.slice(firstCall);
    const stats: RoundStats = {
      round,
      intents: opts.burst,
      calls: mine.length,
      status2xx: mine.filter((c) => c.status >= 200 && c.status < 300).length,
      status4xx: mine.filter((c) => c.status >= 400 && c.status < 500).length,
      status5xx: mine.filter((c) => c.status >= 500).length,
      noAnswer: mine.filter((c) => c.status === 0).length,
      ms: Date.now() - t0,
      ...(disturbance ? { disturbance } : {}),
    };
    rounds.push(stats);
    opts.log?.(
      `round ${round}/${opts.rounds}: ${stats.intents} intents, ${stats.calls} calls in ${(stats.ms / 1000).toFixed(1)} s: ` +
        `2xx=${stats.status2xx} 4xx=${stats.status4xx} 5xx=${stats.status5xx} no_answer=${stats.noAnswer}` +
        (disturbance ? `; ${disturbance.note} (${(disturbance.atMs / 1000).toFixed(1)} s in)` : ''),
    );
  }
  current = undefined;
  return { intents, calls: calls.records.length, elapsedMs: Date.now() - started, byKind, runnerErrors, rounds };
}
