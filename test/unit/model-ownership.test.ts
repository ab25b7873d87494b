import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { parseEvent, type OwnershipEvent } from '../../src/domain/events';
import { applyEvent, project, OwnershipRecordSchema, type OwnershipRecord } from '../../src/domain/projection';
import { WorktreeDriver, type RealOutcome } from './model/driver';
import { resolve, scenarioArb, type Scenario } from './model/generators';
import { initialWorktree, step, type ModelCommand, type ModelWorktree, type Outcome } from './model/reference';

/**
 * Model-based test of the ownership domain: random command sequences run against a reference
 * model written from the rules and against the real decide.ts + projection.ts, compared after
 * every step. FC_SEED / FC_RUNS override the fixed seed and the run count; a failure prints the
 * seed, the replay path and the shrunk sequence.
 */

const RUNS = Number(process.env.FC_RUNS ?? 10_000);
const SEED = process.env.FC_SEED !== undefined ? Number(process.env.FC_SEED) : 20260101;

const ownershipIdOf = (i: number) => `own_01J${'0'.repeat(22)}${i}`;
const WRONG_OWNERSHIP_ID = `own_01K${'0'.repeat(22)}9`;

interface Lane {
  model: ModelWorktree;
  real: WorktreeDriver;
  /** The log as emitted, copied at emission: later aliasing or mutation of an event would show against it. */
  log: OwnershipEvent[];
  /** The fold of `log`, advanced one event at a time. */
  folded: OwnershipRecord | null;
}

function lanes(n: number): Lane[] {
  return Array.from({ length: n }, (_, i) => ({
    model: initialWorktree(ownershipIdOf(i)),
    real: new WorktreeDriver(ownershipIdOf(i), { repoRoot: '/repo', worktreePath: `/repo/wt${i}`, branch: `wt/${i}`, hostId: 'host-1' }),
    log: [],
    folded: null,
  }));
}

class Divergence extends Error {}

function check(ok: boolean, what: string, ctx: () => object): void {
  if (!ok) throw new Divergence(`${what}\n${JSON.stringify(ctx(), null, 1)}`);
}

function runScenario(s: Scenario): void {
  const ls = lanes(s.worktrees);
  s.commands.forEach((sym, i) => {
    const lane = ls[sym.wt % s.worktrees]!;
    const cmd: ModelCommand = resolve(sym, lane.model, { wrongOwnershipId: WRONG_OWNERSHIP_ID, nextHandoffId: lane.real.nextHandoffId() });
    const before = lane.real.record;
    const beforeJson = JSON.stringify(before);
    const beforeEvents = lane.real.events.length;
    const modelBefore = lane.model.state;
    const expected: Outcome = step(lane.model, cmd);
    tally(cmd, modelBefore, expected, before);
    const got: RealOutcome = lane.real.step(cmd);
    const after = lane.real.record;
    const afterJson = JSON.stringify(after);
    const ctx = () => ({
      step: i,
      worktree: sym.wt % s.worktrees,
      command: cmd,
      stateBefore: modelBefore,
      expected,
      got: got.kind === 'changed' ? { kind: got.kind, events: got.events.map((e) => e.type) } : got,
      model: lane.model,
      real: summary(after),
    });

    // Model and real agree on success, replay and refusal, and on the reason where the rules name one.
    check(expected.kind === got.kind, `outcome: model ${expected.kind}, real ${got.kind}`, ctx);
    if (expected.kind === 'refused' && expected.code && got.kind === 'refused')
      check(expected.code === got.code, `refusal code: model ${expected.code}, real ${got.code}`, ctx);
    if (got.kind !== 'changed') {
      // A refusal or a replay changes nothing: no events, and the record untouched (not even mutated in place).
      check(lane.real.events.length === beforeEvents && after === before && afterJson === beforeJson, 'a refused or replayed command changed the record', ctx);
    } else {
      check(got.events.length > 0 && JSON.stringify(before) === beforeJson, 'an accepted command mutated the previous record', ctx);
    }

    // Same state, owner and epoch as the model; one owner identity.
    const m = lane.model;
    if (m.state === 'none') {
      check(after === null, 'real record exists where the model has none', ctx);
    } else {
      check(after !== null, 'no real record where the model has one', ctx);
      const r = after!;
      check(r.state === m.state, `state: model ${m.state}, real ${r.state}`, ctx);
      check(r.epoch === m.epoch, `epoch: model ${m.epoch}, real ${r.epoch}`, ctx);
      check(r.owner?.executionSessionId === m.owner?.session && r.worker?.workerId === m.owner?.worker, 'owner differs from the model', ctx);
      check(r.owner?.worker?.workerId === r.worker?.workerId, 'record.worker is not the owner’s worker', ctx);
      check(
        isDeepStrictEqual(
          r.handoff ? { id: r.handoff.handoffId, to: { session: r.handoff.toExecutionSessionId, worker: r.handoff.toWorkerId } } : null,
          m.handoff,
        ),
        'pending handoff differs from the model',
        ctx,
      );
      check(
        r.worktreeRemoved === m.removed &&
          isDeepStrictEqual(
            r.landings.map((l) => l.landedHead),
            m.landedHeads,
          ),
        'removal or landings differ from the model',
        ctx,
      );
    }

    // The epoch moves by exactly one with every new tenure (a new owner, or the same one after release) and never otherwise.
    if (after) {
      const prevTenures = before?.lineage.length ?? 0;
      const tenures = after.lineage.length - prevTenures;
      const prevEpoch = before?.epoch ?? 0;
      check(tenures === 0 || tenures === 1, `${tenures} tenures in one step`, ctx);
      check(after.epoch === prevEpoch + tenures, `epoch ${prevEpoch} -> ${after.epoch} with ${tenures} new tenure(s)`, ctx);
      const ownerChanged = before?.owner?.executionSessionId !== after.owner?.executionSessionId || before?.worker?.workerId !== after.worker?.workerId;
      check(!ownerChanged || tenures === 1, 'the owner changed without a new tenure', ctx);
      check(
        after.lineage.every((l, k) => l.epoch === k + 1),
        'lineage epochs are not 1, 2, 3, ...',
        ctx,
      );
    }

    // The record is the fold of its log; seqs are gap-free; every event is schema-valid.
    if (got.kind === 'changed') {
      for (const e of got.events) {
        const copy = parseEvent(JSON.parse(JSON.stringify(e)));
        check(copy.seq === lane.log.length + 1, `seq gap: ${lane.log.length} then ${copy.seq}`, ctx);
        lane.log.push(copy);
        lane.folded = applyEvent(lane.folded, copy);
      }
    }
    check(JSON.stringify(lane.folded) === afterJson, 'record differs from the fold of its log', ctx);
  });

  for (const lane of ls) {
    const r = lane.real.record;
    if (!r) continue;
    OwnershipRecordSchema.parse(r);
    check(
      isDeepStrictEqual(project(lane.log), r) && isDeepStrictEqual(lane.log, JSON.parse(JSON.stringify(lane.real.events))),
      'project(log) differs from the record at the end',
      () => ({ real: summary(r) }),
    );
  }
}

/** How often each kind of step ran: the generator must reach every rule, or passing proves little. */
const coverage = new Map<string, number>();
function tally(c: ModelCommand, from: string, o: Outcome, r: OwnershipRecord | null): void {
  const labels = [`${c.op}:${o.kind}${o.kind === 'refused' && o.code ? `:${o.code}` : ''}`];
  const owner = r?.owner ? { session: r.owner.executionSessionId, worker: r.worker?.workerId } : null;
  if (c.op === 'bind' && owner && c.session === owner.session && c.worker !== owner.worker) labels.push('bind:owner_session_by_other_worker');
  if (
    c.op === 'accept' &&
    o.kind === 'refused' &&
    r?.handoff &&
    c.handoffId === r.handoff.handoffId &&
    c.session === r.handoff.toExecutionSessionId &&
    c.worker !== r.handoff.toWorkerId
  ) {
    labels.push('accept:right_session_wrong_worker');
  }
  if (c.op === 'accept' && o.kind === 'refused' && r?.handoff && c.handoffId !== r.handoff.handoffId && c.handoffId !== 'hof_bogus')
    labels.push('accept:stale_handoff_id');
  if (c.op === 'reclaim' && o.kind === 'changed') labels.push(`reclaim:from_${from}${c.force ? ':forced' : ''}`);
  if (c.op === 'liveness' && c.verdict === 'dead' && from === 'active' && o.kind === 'noop') labels.push('liveness:dead_about_another_tenure');
  if (c.op === 'heartbeat' && from === 'stale' && o.kind === 'noop') labels.push('heartbeat:ignored_on_stale');
  if ('ownershipId' in c && c.ownershipId !== undefined && o.kind === 'refused' && o.code === 'ownership_mismatch') labels.push(`${c.op}:misaddressed`);
  for (const l of labels) coverage.set(l, (coverage.get(l) ?? 0) + 1);
}

/** Steps every full run must have taken at least once (each is a rule some mutation of decide.ts would break). */
const MUST_COVER = [
  'bind:changed',
  'bind:noop',
  'bind:refused:worktree_owned',
  'bind:owner_session_by_other_worker',
  'bind:refused:worker_mismatch',
  'bind:refused:ownership_closed',
  'handoff:changed',
  'handoff:refused:not_owner',
  'handoff:refused:stale_epoch',
  'handoff:refused:worker_mismatch',
  'accept:changed',
  'accept:noop',
  'accept:refused:handoff_mismatch',
  'accept:right_session_wrong_worker',
  'accept:stale_handoff_id',
  'cancel:changed',
  'timeout:changed',
  'release:changed',
  'release:noop',
  'submit:changed',
  'submit:noop',
  'reclaim:from_stale',
  'reclaim:from_active:forced',
  'reclaim:from_released:forced',
  'reclaim:refused:owner_alive',
  'reclaim:refused:liveness_unknown',
  'reclaim:refused:force_requires_admin',
  'reclaim:refused:force_requires_reason',
  'reclaim:refused:invalid_state',
  'liveness:changed',
  'liveness:dead_about_another_tenure',
  'heartbeat:changed',
  'heartbeat:ignored_on_stale',
  'landed:changed',
  'landed:noop',
  'removed:changed',
  'removed:noop',
  'bind:misaddressed',
  'accept:misaddressed',
  'release:misaddressed',
  'reclaim:misaddressed',
  'landed:misaddressed',
];

function summary(r: OwnershipRecord | null) {
  if (!r) return null;
  return {
    state: r.state,
    epoch: r.epoch,
    seq: r.seq,
    owner: r.owner ? { session: r.owner.executionSessionId, worker: r.worker?.workerId } : null,
    handoff: r.handoff,
    removed: r.worktreeRemoved,
    landed: r.landings.map((l) => l.landedHead.slice(0, 4)),
    lineage: r.lineage.map((l) => `${l.executionSessionId}@${l.epoch}:${l.via}`),
  };
}

test(`ownership domain matches the reference model (${RUNS} random sequences, seed ${SEED})`, () => {
  const started = Date.now();
  fc.assert(
    fc.property(scenarioArb(30), (s) => runScenario(s)),
    { numRuns: RUNS, seed: SEED },
  );
  process.stderr.write(`[model] ${RUNS} sequences in ${Date.now() - started} ms\n`);
  if (process.env.FC_STATS)
    process.stderr.write(
      `${[...coverage]
        .sort()
        .map(([k, n]) => `${k} ${n}`)
        .join('\n')}\n`,
    );
  if (RUNS >= 1_000) expect(MUST_COVER.filter((l) => !coverage.has(l))).toEqual([]);
});
