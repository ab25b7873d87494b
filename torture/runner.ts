import { send, summarize } from './http';
import { DRAWS, OP_WEIGHTS, OPERATIONS, type CallSpec, type OpKind } from './operations';
import { CallLog, type CallRecord } from './record';
import { Rng } from './rng';
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

export interface RunStats {
  intents: number;
  calls: number;
  elapsedMs: number;
  byKind: Record<string, number>;
  /** intents that failed in the runner itself (git in the worktree, not an answer of the service) */
  runnerErrors: number;
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
  const timeoutMs = opts.callTimeoutMs ?? 90_000;
  const stop = () => Date.now() >= deadline || calls.records.length + inFlight >= opts.maxCalls;
  let inFlight = 0;

  const call = async (intent: number, spec: CallSpec): Promise<CallRecord> => {
    const n = calls.nextN();
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
    };
    calls.add(rec);
    world.observe(spec.slot, answer);
    return rec;
  };

  let lastReport = started;
  const lane = async () => {
    while (!stop()) {
      const i = intents++;
      let kind: OpKind = rng.weighted(OP_WEIGHTS);
      const r = Array.from({ length: DRAWS }, () => rng.next());
      const k = Math.min(world.slots.length - 1, Math.floor(r[0]! * world.slots.length));
      const b = world.beliefs[k]!;
      // A worktree being removed and re-added gets reads only meanwhile.
      if (b.recycling) kind = 'look';
      // A landed worktree is what a landing controller removes next; binds keep meeting the ended lifecycle.
      else if ((b.state === 'landed' || b.state === 'closed') && !KEEP_ON_LANDED.has(kind)) kind = 'recycle';
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
