import {
  buildLog,
  CHECK_NAMES,
  checkAgreement,
  checkAnswers,
  checkHealth,
  checkLog,
  checkProgress,
  judgeRebuild,
  type CheckName,
  type EventRow,
  type Log,
  type OwnershipRow,
  type Violation,
} from '../../faults/checker';
import { Timeline, type HealthBody, type HealthSample } from '../../faults/health';
import type { CallRecord, Op } from '../../faults/http';
import type { IntentRecord } from '../../faults/load';
import { API_DEADLINE_MS } from '../../faults/stack';
import { applyEvent, type OwnershipRecord } from '../../src/domain/projection';

/**
 * The fault run's checker, clause by clause, on doctored input and without a stack: every kind in
 * CHECK_NAMES is made to fire by a test below that breaks exactly that clause (the last test holds
 * the list to it), and a clean input reports none.
 */

const OWN = 'own_01JFAULTS00000000000000001';
const T0 = Date.parse('2026-12-01T00:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1_000).toISOString();

const owner = (session: string) => ({
  executionSessionId: session,
  runtime: 'faults',
  parentExecutionSessionId: null,
  conversation: null,
  worker: { workerId: 'w0', runId: null },
  process: null,
});
interface Ev {
  type: string;
  data: Record<string, unknown>;
  /** seconds after T0 (also its seq's default) */
  s: number;
  session?: string | null;
  principal?: string;
}
const claimed = (s: number, session = 's1', epoch = 1): Ev => ({
  type: 'ownership.claimed',
  s,
  session,
  data: { owner: owner(session), epoch, via: 'bind', handoffId: null, previousExecutionSessionId: null, lane: null, planRef: null, requestId: null },
});
const plan = (s: number, lane: string): Ev => ({ type: 'ownership.plan_bound', s, data: { lane, planRef: null, requestId: null } });
const beat = (s: number, session = 's1'): Ev => ({
  type: 'ownership.heartbeat',
  s,
  session,
  data: { executionSessionId: session, epoch: 1, transition: 'periodic' },
});
const released = (s: number): Ev => ({ type: 'ownership.released', s, data: { executionSessionId: 's1', epoch: 1, reason: null } });

/** Rows of ownership_events, seq 1.. unless a seq is given per event. */
function rows(events: Ev[], seqs?: number[], ownershipId = OWN): EventRow[] {
  return events.map((e, i) => {
    const seq = seqs?.[i] ?? i + 1;
    return {
      ownership_id: ownershipId,
      seq,
      recorded_at: new Date(T0 + e.s * 1_000 + 5),
      event: {
        ownershipId,
        seq,
        at: at(e.s),
        actor: { executionSessionId: e.session === undefined ? 's1' : e.session, principal: e.principal ?? 'executor:e0' },
        repoRoot: '/r',
        worktreePath: '/r/wt',
        branch: 'b',
        hostId: 'h',
        type: e.type,
        data: e.data,
      },
    };
  });
}

function logOf(events: Ev[], seqs?: number[]): Log {
  const log = buildLog(rows(events, seqs), []);
  expect(log.unparseable).toEqual([]);
  return log;
}

const intent = (id: number, op: Op, fields: Record<string, unknown>, outcome: IntentRecord['outcome'], extra: Partial<IntentRecord> = {}): IntentRecord => ({
  id,
  phase: 'p',
  slot: 0,
  op,
  fields,
  ownershipId: OWN,
  t0: T0 - 500,
  t1: T0 - 400,
  attempts: 1,
  outcome,
  inDoubt: false,
  ...extra,
});

const call = (n: number, status: number, ms: number, extra: Partial<CallRecord> = {}): CallRecord => ({
  n,
  phase: 'p',
  slot: 0,
  intent: n,
  attempt: 1,
  op: 'plan',
  method: 'POST',
  path: `/v1/ownerships/${OWN}/plan`,
  fields: {},
  t0: T0,
  t1: T0 + ms,
  status,
  ...extra,
});

const fired = new Set<CheckName>();
/** The violations are exactly these kinds, in order (each counted as seen firing). */
function expectChecks(vs: readonly Violation[], kinds: CheckName[]): void {
  expect(vs.map((v) => v.check)).toEqual(kinds);
  for (const k of kinds) fired.add(k);
}
const phase = () => 'p';

/** A clean run: a bind, a plan, a heartbeat, a release, all acknowledged and in the log once. */
const cleanEvents = [claimed(1), plan(2, 'L1'), beat(3), released(4)];
const cleanIntents = [
  intent(0, 'bind', { session: 's1' }, 'acked'),
  intent(1, 'plan', { lane: 'L1' }, 'acked'),
  intent(2, 'heartbeat', { session: 's1', epoch: 1 }, 'acked'),
  intent(3, 'release', { session: 's1', epoch: 1 }, 'acked'),
];
const bindView = { ownershipId: OWN, seq: 1, state: 'active', epoch: 1, ownerSession: 's1', ownerWorker: 'w0', handoffId: null };

describe('checkLog: exactly once, nothing unexplained, the log folds, answers in the log', () => {
  test('clean', () => {
    const r = checkLog(logOf(cleanEvents), cleanIntents, [call(0, 200, 10, { op: 'bind', answer: bindView })], phase);
    expect(r.violations).toEqual([]);
    expect([...r.matched.values()]).toEqual([1, 1, 1]);
  });

  test('lost: an acknowledged intent without its event; a bind answered for another ownership than its claim', () => {
    expectChecks(checkLog(logOf(cleanEvents), [...cleanIntents, intent(4, 'plan', { lane: 'L2' }, 'acked')], [], phase).violations, ['lost']);
    const other = [intent(0, 'bind', { session: 's1' }, 'acked', { answer: { ...bindView, ownershipId: 'own_other' } }), ...cleanIntents.slice(1)];
    expectChecks(checkLog(logOf(cleanEvents), other, [], phase).violations, ['lost']);
  });

  test('duplicated: two events for one intent', () => {
    expectChecks(checkLog(logOf([claimed(1), plan(2, 'L1'), plan(3, 'L1')]), cleanIntents.slice(0, 2), [], phase).violations, ['duplicated']);
  });

  test('refused_but_logged: refused without doubt, yet its event is in the log', () => {
    const refused = [...cleanIntents.slice(0, 3), intent(3, 'release', { session: 's1', epoch: 1 }, 'refused', { code: 'not_owner' })];
    expectChecks(checkLog(logOf(cleanEvents), refused, [], phase).violations, ['refused_but_logged']);
    // In doubt (some attempt got a 503): it may have been applied.
    const doubt = [...cleanIntents.slice(0, 3), intent(3, 'release', { session: 's1', epoch: 1 }, 'refused', { inDoubt: true })];
    expect(checkLog(logOf(cleanEvents), doubt, [], phase).violations).toEqual([]);
  });

  test('unexplained_event: no intent carries it, a heartbeat nobody sent, an early stale, a timeout of a live handoff, WIP without a reclaim, an event this load never causes', () => {
    const i = cleanIntents.slice(0, 1);
    const one = (extra: Ev) => checkLog(logOf([claimed(1), extra]), i, [], phase).violations;
    expectChecks(one(plan(2, 'L9')), ['unexplained_event']);
    expectChecks(one(beat(2, 's7')), ['unexplained_event']);
    expectChecks(
      one({ type: 'ownership.stale', s: 60, principal: 'system:liveness', data: { executionSessionId: 's1', epoch: 1, verdict: 'dead', detail: null } }),
      ['unexplained_event'],
    );
    expectChecks(
      checkLog(
        logOf([
          claimed(1),
          {
            type: 'ownership.handoff_started',
            s: 2,
            data: { handoffId: 'hof_1', fromExecutionSessionId: 's1', toExecutionSessionId: 's2', reason: null, expiresAt: at(600) },
          },
          { type: 'ownership.handoff_cancelled', s: 3, principal: 'system:workflow', data: { handoffId: 'hof_1', reason: 'timeout' } },
        ]),
        [...i, intent(1, 'handoff', { session: 's1', toSession: 's2' }, 'acked')],
        [],
        phase,
      ).violations,
      ['unexplained_event'],
    );
    expectChecks(one({ type: 'ownership.wip_not_preserved', s: 2, data: { executionSessionId: 's1', reason: 'worktree_missing' } }), ['unexplained_event']);
    expectChecks(one({ type: 'ownership.branch_renamed', s: 2, data: { from: 'b', to: 'b2' } }), ['unexplained_event']);
  });

  test('seq_gap: the log of an ownership skips a seq', () => {
    expectChecks(checkLog(logOf([claimed(1), beat(2)], [1, 3]), cleanIntents.slice(0, 1), [], phase).violations, ['seq_gap']);
  });

  test('fold_failed: a row of the log that is no ownership event', () => {
    const r = rows(cleanEvents);
    r[3]!.event = { ...(r[3]!.event as object), data: { executionSessionId: 's1', epoch: 'one', reason: null } };
    const log = buildLog(r, []);
    expect(log.unparseable).toHaveLength(1);
    const vs = checkLog(log, cleanIntents.slice(0, 3), [], phase).violations;
    expectChecks(vs, ['fold_failed']);
    expect(vs[0]).toMatchObject({ ownershipId: OWN });
  });

  test('answer_not_in_log: a 2xx view that is not the fold at its seq, past the log, or of an ownership the log does not hold', () => {
    const answers = (a: object) =>
      checkLog(logOf(cleanEvents), cleanIntents, [call(0, 200, 10, { op: 'bind', answer: { ...bindView, ...a } })], phase).violations;
    expectChecks(answers({ state: 'released' }), ['answer_not_in_log']);
    expectChecks(answers({ seq: 9 }), ['answer_not_in_log']);
    expectChecks(answers({ ownershipId: 'own_nowhere' }), ['answer_not_in_log']);
  });
});

describe('checkAgreement: the row, the GET view and the fold of the log', () => {
  const log = logOf(cleanEvents);
  const fold = log.byOwnership.get(OWN)!.reduce<OwnershipRecord | null>((r, e) => applyEvent(r, e), null)!;
  const row: OwnershipRow = {
    ownership_id: OWN,
    state: fold.state,
    epoch: fold.epoch,
    seq: fold.seq,
    owner_session_id: fold.owner!.executionSessionId,
    record: fold,
  };
  const view = { status: 200, body: { state: fold.state, epoch: fold.epoch, seq: fold.seq, owner: { executionSessionId: 's1' }, handoff: null } };
  const agree = (rows: OwnershipRow[], v: { status: number; body: unknown } = view) =>
    checkAgreement({ ...log, rows: new Map(rows.map((r) => [r.ownership_id, r])) }, async () => v, 'p');

  test('clean', async () => {
    expect(await agree([row])).toEqual([]);
  });
  test('row_disagrees: no row, or a row that is not the fold', async () => {
    expectChecks(await agree([]), ['row_disagrees']);
    expectChecks(await agree([{ ...row, state: 'active' }]), ['row_disagrees']);
    expectChecks(await agree([{ ...row, record: { ...fold, lane: 'L2' } }]), ['row_disagrees']);
  });
  test('view_disagrees: the GET view answers another record, or no 200', async () => {
    const r = [row];
    expectChecks(await agree(r, { status: 200, body: { ...view.body, seq: 3 } }), ['view_disagrees']);
    expectChecks(await agree(r, { status: 503, body: { code: 'unavailable' } }), ['view_disagrees']);
  });
});

describe('judgeRebuild: rebuild-projection --check', () => {
  test('clean only with exit 0 and consistent: true', () => {
    expect(judgeRebuild(null, '{"consistent":true,"diffs":[]}', '', 'p')).toMatchObject({ clean: true, violations: [] });
  });
  test('rebuild_check: inconsistent, a non-zero exit, or an answer that is not JSON', () => {
    expectChecks(judgeRebuild(null, '{"consistent":false}', '', 'p').violations, ['rebuild_check']);
    expectChecks(judgeRebuild({ code: 1 }, '{"consistent":true}', 'boom', 'p').violations, ['rebuild_check']);
    expectChecks(judgeRebuild(null, 'consistent', '', 'p').violations, ['rebuild_check']);
  });
});

describe('checkAnswers: bounded, 503 + Retry-After with a plain body', () => {
  const quiet = new Timeline();
  test('clean: a 200, a refusal, a 503 unavailable with Retry-After, a 503 host_unavailable', () => {
    expect(
      checkAnswers(
        [
          call(0, 200, 10),
          call(1, 409, 10, { code: 'not_owner' }),
          call(2, 503, 10, { code: 'unavailable', retryAfter: '5' }),
          call(3, 503, 10, { code: 'host_unavailable', retryAfter: '5' }),
        ],
        quiet,
      ),
    ).toEqual([]);
  });
  test('no_answer', () => expectChecks(checkAnswers([call(0, 0, 10)], quiet), ['no_answer']));
  test('slow_answer', () => expectChecks(checkAnswers([call(0, 200, API_DEADLINE_MS + 5_001)], quiet), ['slow_answer']));
  test('bad_5xx: a 500, a 503 without Retry-After, a 503 with another code', () => {
    expectChecks(
      checkAnswers(
        [
          call(0, 500, 10, { code: 'internal' }),
          call(1, 503, 10, { code: 'unavailable', retryAfter: null }),
          call(2, 503, 10, { code: 'internal', retryAfter: '5' }),
        ],
        quiet,
      ),
      ['bad_5xx', 'bad_5xx', 'bad_5xx'],
    );
  });
  test('unsafe_body', () =>
    expectChecks(checkAnswers([call(0, 409, 10, { code: 'not_owner', unsafeBody: 'at foo (/src/x.ts:1:1)' })], quiet), ['unsafe_body']));
  test('workflow_unbounded: the API’s own deadline answered while everything was up (allowed with the worker away)', () => {
    const c = call(0, 503, API_DEADLINE_MS, { code: 'unavailable', retryAfter: '5' });
    expectChecks(checkAnswers([c], quiet), ['workflow_unbounded']);
    const away = new Timeline();
    away.intervals.push({ component: 'worker', phase: 'p', from: T0 - 1_000, to: T0 + 40_000 });
    expect(checkAnswers([c], away)).toEqual([]);
  });
});

describe('checkHealth: /healthz tells the truth', () => {
  const up: HealthBody = { ok: true, temporal: 'up', postgres: 'up', worker: 'up', hostAgent: 'up' };
  const sample = (s: number, status: number, body: HealthBody | null): HealthSample => ({ t0: T0 + s * 1_000, t1: T0 + s * 1_000 + 50, status, body });
  const postgresDown = () => {
    const t = new Timeline();
    t.intervals.push({ component: 'postgres', phase: 'p', from: T0, to: T0 + 100_000 });
    return t;
  };
  const health = (samples: HealthSample[], t: Timeline = new Timeline()) => checkHealth(samples, t, 30_000, phase).violations;

  test('clean: everything up and said so; PostgreSQL down, named down with 503', () => {
    expect(health([sample(1, 200, up)])).toEqual([]);
    expect(health([sample(20, 503, { ...up, ok: false, postgres: 'down' })], postgresDown())).toEqual([]);
    const f = checkHealth([sample(20, 503, { ...up, ok: false, postgres: 'down' })], postgresDown(), 30_000, phase).findings;
    expect(f).toMatchObject([{ component: 'postgres', reportedAfterMs: 20_050 }]);
  });
  test('health_unanswered', () => expectChecks(health([sample(1, 0, null)]), ['health_unanswered']));
  test('health_lie: up called down (and 503 with everything up); down called up (and 200 with a dependency down)', () => {
    expectChecks(health([sample(1, 503, { ...up, ok: false, temporal: 'down' })]), ['health_lie', 'health_lie']);
    expectChecks(health([sample(20, 200, up)], postgresDown()), ['health_lie', 'health_lie']);
  });
});

describe('checkProgress: the next message after a fault, and the load itself', () => {
  const acked = { outcome: 'acked' as const, body: null, ms: 900 };
  test('clean: every probe taken, every deleted worktree reclaimed, no driver error', () => {
    expect(
      checkProgress('p', [{ name: 'wt-0', op: 'plan', ok: true, ms: 300 }], 30_000, [{ slot: 1, variant: 'before', setupFailed: false, result: acked }], []),
    ).toEqual([]);
  });
  test('wedged: a probe not taken within the bound; a deleted worktree’s reclaim not acknowledged (or never sent)', () => {
    expectChecks(checkProgress('p', [{ name: 'wt-0', op: 'plan', ok: false, ms: 30_001, code: 'unavailable' }], 30_000, [], []), ['wedged']);
    expectChecks(
      checkProgress(
        'p',
        [],
        30_000,
        [
          { slot: 1, variant: 'during', setupFailed: false, result: { ...acked, outcome: 'gave_up', code: 'unavailable' } },
          { slot: 2, variant: 'before', setupFailed: false, result: null },
        ],
        [],
      ),
      ['wedged', 'wedged'],
    );
  });
  test('driver_error: a worktree the load could not own before deleting it; a driver’s own error', () => {
    expectChecks(checkProgress('p', [], 30_000, [{ slot: 1, variant: 'before', setupFailed: true, result: null }], [{ name: 'wt-3', error: 'TypeError: x' }]), [
      'driver_error',
      'driver_error',
    ]);
  });
});

test('every kind the faults checker can report is seen firing above (add a doctored input for a new kind)', () => {
  expect(CHECK_NAMES.filter((k) => !fired.has(k))).toEqual([]);
});
