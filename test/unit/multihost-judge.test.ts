import { buildLog, type Violation } from '../../faults/checker';
import { Timeline } from '../../faults/health';
import type { CallRecord } from '../../faults/http';
import type { IntentRecord } from '../../faults/load';
import {
  awayCallAnswer,
  bindAwayHost,
  boundMissed,
  CLAUSES,
  forcedReclaimSaid,
  hostsAgree,
  judgeLateHistory,
  judgeLoad,
  lateWorkPreserved,
  reclaimRefused,
  refsHolding,
  whoSaysPending,
  type Answer,
  type Clause,
  type Finding,
} from '../../multihost/judge';

/**
 * The multihost run's judging (multihost/judge.ts) on doctored input, without namespaces or a
 * stack: every clause in CLAUSES is made to fire by a test below, and a clean input finds nothing.
 */

const fired = new Set<Clause>();
function expectClauses(fs: readonly (Finding | null)[], clauses: Clause[]): void {
  expect(fs.filter((f): f is Finding => f !== null).map((f) => f.clause)).toEqual(clauses);
  for (const c of clauses) fired.add(c);
}
const answer = (status: number, body: Record<string, unknown> = {}): Answer => ({ status, body, ms: 40 });

test('bound_missed: a figure over its bound (equal is met)', () => {
  expect(boundMissed('x', 3_000, 3_000)).toBeNull();
  expectClauses([boundMissed('x', 3_000, 3_001)], ['bound_missed']);
});

test('hosts_disagree: the same lookup answered differently by a host, or failed there; the moment’s fields do not count', () => {
  const ok = (o: unknown) => ({ code: 0, stdout: JSON.stringify(o), stderr: '' });
  const hosts = ['h1', 'h2', 'h3'];
  const who = { owner: 's1', epoch: 1, liveness: { status: 'live', lastHeartbeatAt: '2026-12-01T00:00:00Z', checkedAt: 'a' } };
  const later = { ...who, liveness: { ...who.liveness, lastHeartbeatAt: '2026-12-01T00:00:05Z', checkedAt: 'b', status: 'silent' } };
  expect(hostsAgree('who', hosts, [ok(who), ok(later), ok(who)])).toBeNull();
  expectClauses([hostsAgree('who', hosts, [ok(who), ok({ ...who, epoch: 2 }), ok(who)])], ['hosts_disagree']);
  expectClauses([hostsAgree('who', hosts, [ok(who), ok(who), { code: 2, stdout: '', stderr: 'ECONNREFUSED' }])], ['hosts_disagree']);
});

test('bind_away_host: a bind for a host nobody serves is refused 503 host_unavailable, nothing else', () => {
  expect(bindAwayHost(answer(503, { code: 'host_unavailable' }))).toBeNull();
  expectClauses(
    [bindAwayHost(answer(200, { ownershipId: 'own_x' })), bindAwayHost(answer(503, { code: 'unavailable' }))],
    ['bind_away_host', 'bind_away_host'],
  );
});

test('reclaim_not_refused: a successor’s reclaim of a cut-off owner fails closed with liveness_unknown', () => {
  expect(reclaimRefused(answer(409, { code: 'liveness_unknown' }))).toBeNull();
  expectClauses([reclaimRefused(answer(200)), reclaimRefused(answer(409, { code: 'not_owner' }))], ['reclaim_not_refused', 'reclaim_not_refused']);
});

test('forced_reclaim_unsaid: the forced reclaim is recorded and says it is not yet enforced', () => {
  const said = answer(200, { epoch: 2, projection: 'pending', enforcement: { state: 'not_enforced', hostId: 'h3' } });
  expect(forcedReclaimSaid(said)).toBeNull();
  expectClauses(
    [
      forcedReclaimSaid(answer(409, { code: 'liveness_unknown' })),
      forcedReclaimSaid({ ...said, body: { ...said.body, projection: 'written' } }),
      forcedReclaimSaid({ ...said, body: { ...said.body, enforcement: { state: 'enforced' } } }),
    ],
    ['forced_reclaim_unsaid', 'forced_reclaim_unsaid', 'forced_reclaim_unsaid'],
  );
});

test('who_unsaid: who says the reclaim is not yet enforced on the host', () => {
  expect(whoSaysPending('Owner:    s2\nEnforced: NOT YET on host h3 (away 40 s)\n')).toBeNull();
  expectClauses([whoSaysPending('Owner:    s2\nEnforced: yes\n')], ['who_unsaid']);
});

test('late_work_not_preserved: some ref under refs/overdeck reaches every commit made while cut off', () => {
  const refs = [
    { ref: 'refs/overdeck/wip/a', reach: 'aaa\nbbb\n' },
    { ref: 'refs/overdeck/wip/b', reach: 'aaa\nbbb\nccc\n' },
  ];
  expect(refsHolding(refs, ['aaa', 'ccc'])).toEqual(['refs/overdeck/wip/b']);
  expect(lateWorkPreserved(refsHolding(refs, ['aaa', 'ccc']), ['aaa', 'ccc'])).toBeNull();
  expectClauses([lateWorkPreserved(refsHolding(refs, ['aaa', 'ddd']), ['aaa', 'ddd'])], ['late_work_not_preserved']);
});

describe('the history of the cut-off worktree', () => {
  const [before, late1, late2] = ['b'.repeat(40), '1'.repeat(40), '2'.repeat(40)];
  const w = { lateShas: [late1, late2], beforeSha: before, ownerSession: 'old', successorSession: 'new' };
  const history = (late: { commit: string; session: string }[], tenures: unknown[] = []) => ({
    tenures: [
      { executionSessionId: 'old', commits: [before] },
      { executionSessionId: 'new', commits: [] },
      ...tenures,
      { lateAttempts: [{ executionSessionId: 'old', head: late2, commits: late.map((l) => ({ commit: l.commit, session: l.session })) }] },
    ],
  });
  const clean = history([
    { commit: late1, session: 'old' },
    { commit: late2, session: 'old' },
  ]);

  test('clean: the late commits listed late and attributed to the old owner, the earlier one not late', () => {
    expect(judgeLateHistory(clean, w)).toEqual([]);
  });
  test('late_not_listed', () =>
    expectClauses(judgeLateHistory(history([{ commit: late2, session: 'old' }], [{ executionSessionId: 'old', head: late1 }]), w), ['late_not_listed']));
  test('early_listed_late', () =>
    expectClauses(
      judgeLateHistory(
        history([
          { commit: late1, session: 'old' },
          { commit: late2, session: 'old' },
          { commit: before, session: 'old' },
        ]),
        w,
      ),
      ['early_listed_late'],
    ));
  test('late_not_attributed', () =>
    expectClauses(
      judgeLateHistory(
        { lateAttempts: [{ commits: [{ commit: late1 }, { commit: late2, session: 'old' }] }], tenures: [{ executionSessionId: 'old', commits: [before] }] },
        w,
      ),
      ['late_not_attributed'],
    ));
  test('attributed_to_successor', () =>
    expectClauses(
      judgeLateHistory(
        history(
          [
            { commit: late1, session: 'old' },
            { commit: late2, session: 'old' },
          ],
          [{ executionSessionId: 'new', head: late1 }],
        ),
        w,
      ),
      ['attributed_to_successor'],
    ));
});

test('away_call_answer: with the host agent away, a first bind is refused host_unavailable, a reclaim without proof 409, the rest 200', () => {
  expect([
    awayCallAnswer('bind (first claim on the away host)', answer(503, { code: 'host_unavailable' })),
    awayCallAnswer('reclaim (not forced)', answer(409, { code: 'liveness_unknown' })),
    awayCallAnswer('plan', answer(200)),
  ]).toEqual([null, null, null]);
  expectClauses(
    [
      awayCallAnswer('bind (first claim on the away host)', answer(200)),
      awayCallAnswer('reclaim (not forced)', answer(200)),
      awayCallAnswer('plan', answer(503, { code: 'host_unavailable' })),
    ],
    ['away_call_answer', 'away_call_answer', 'away_call_answer'],
  );
});

describe('the load of check 5 (judgeLoad)', () => {
  const OWN = 'own_01JMULTIHOST0000000000001';
  const T0 = Date.parse('2026-12-01T00:00:00.000Z');
  const claimedRow = (ownershipId: string, session: string) => ({
    ownership_id: ownershipId,
    seq: 1,
    recorded_at: new Date(T0 + 1_000),
    event: {
      ownershipId,
      seq: 1,
      at: new Date(T0 + 1_000).toISOString(),
      actor: { executionSessionId: session, principal: 'executor:e0' },
      repoRoot: '/r',
      worktreePath: `/r/${ownershipId}`,
      branch: 'b',
      hostId: 'h1',
      type: 'ownership.claimed',
      data: {
        owner: {
          executionSessionId: session,
          runtime: 'm',
          parentExecutionSessionId: null,
          conversation: null,
          worker: { workerId: 'w0', runId: null },
          process: null,
        },
        epoch: 1,
        via: 'bind',
        handoffId: null,
        previousExecutionSessionId: null,
        lane: null,
        planRef: null,
        requestId: null,
      },
    },
  });
  // Another check's ownership (not the load's): its events are no intent of the load's, and stay out of its judging.
  const log = buildLog([claimedRow(OWN, 's1'), claimedRow('own_01JMULTIHOSTOTHERCHECK0001', 'other')], []);
  const bind = (outcome: IntentRecord['outcome'], session = 's1'): IntentRecord => ({
    id: 0,
    phase: 'load',
    slot: 0,
    op: 'bind',
    fields: { session },
    ownershipId: OWN,
    t0: T0,
    t1: T0 + 500,
    attempts: 1,
    outcome,
    inDoubt: false,
  });
  const call = (status: number): CallRecord => ({
    n: 0,
    phase: 'load',
    slot: 0,
    intent: 0,
    attempt: 1,
    op: 'bind',
    method: 'POST',
    path: '/v1/bind',
    fields: {},
    t0: T0,
    t1: T0 + 500,
    status,
  });

  test('clean: the load’s intents in the log once, the answers sound, the rebuild clean; other checks’ ownerships left out', () => {
    expect(judgeLoad(log, [bind('acked')], [call(200)], new Timeline(), [])).toEqual({ findings: [], violations: [] });
  });
  test('load_violation: the fault run’s checker finds something (the log, the answers, the rebuild)', () => {
    const rebuild: Violation[] = [{ check: 'rebuild_check', phase: 'load', message: 'inconsistent' }];
    const r = judgeLoad(log, [bind('acked'), { ...bind('acked', 's9'), id: 1 }], [call(500)], new Timeline(), rebuild);
    expect(r.violations.map((v) => v.check)).toEqual(['lost', 'bad_5xx', 'rebuild_check']);
    expectClauses(r.findings, ['load_violation', 'load_violation', 'load_violation']);
  });
  test('load_did_not_run: nothing acknowledged', () => {
    expectClauses(
      judgeLoad(
        log,
        [bind('gave_up')],
        [call(503)].map((c) => ({ ...c, code: 'unavailable', retryAfter: '5' })),
        new Timeline(),
        [],
      ).findings,
      ['load_did_not_run'],
    );
  });
});

test('every clause of the multihost judging is seen firing above (add a doctored input for a new clause)', () => {
  expect(CLAUSES.filter((c) => !fired.has(c))).toEqual([]);
});
