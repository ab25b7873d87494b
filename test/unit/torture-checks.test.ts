import { temporal } from '@temporalio/proto';
import { buildLog, worktreeKey, type EventRow, type Log, type OwnershipRow } from '../../torture/checker/load';
import { checkAcks } from '../../torture/checker/acks';
import { checkLifecycles } from '../../torture/checker/lifecycles';
import { withinSignal } from '../../torture/checker/match';
import { checkProjections, type Quiesced } from '../../torture/checker/projection';
import { localProjectionOf, NO_TENURE_HASHES } from '../../src/git/record';
import type { LocalProjection } from '../../src/git/projection';
import { checkRefusals } from '../../torture/checker/refusals';
import { checkAcknowledgedMessages, checkDuplicateMessages, checkRefusedMessages } from '../../torture/checker/messages';
import { checkHistories, checkLiveVsLog, checkReplays, type History, type LiveView, type RunHistory } from '../../torture/checker/temporal';
import { CHECK_NAMES, type CheckName, type Violation } from '../../torture/checker/types';
import type { CallRecord } from '../../torture/record';

/**
 * The torture checker's message-id and Temporal-side checks are pure functions over (calls, log,
 * histories, replay outcomes, live views): each is shown to fail on doctored input and to stay
 * quiet on clean input, without a stack.
 */

const OWN = 'own_01JTORTURE0000000000000001';
const WF = 'ownership/wt-0/0123456789ab';
const HOST = 'host-torture';
const WT = '/tmp/torture/repo/.worktrees/wt-0';
const REPO = '/tmp/torture/repo';
const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

const owner = (session: string, workerId: string) => ({
  executionSessionId: session,
  runtime: 'codex-cli',
  parentExecutionSessionId: null,
  conversation: null,
  worker: { runId: null, workerId },
  process: null,
});

type Data = Record<string, unknown>;
interface Ev {
  type: string;
  data: Data;
  session?: string | null;
  messageId?: string;
  /** ms after T0 */
  at: number;
}

/** Raw rows of ownership_events for one lifecycle: seq 1.. in order, recorded when they happened. */
function rows(events: Ev[], ownershipId = OWN): EventRow[] {
  return events.map((e, i) => ({
    ownership_id: ownershipId,
    seq: i + 1,
    worktree_path: WT,
    repo_root: REPO,
    host_id: HOST,
    recorded_at: new Date(T0 + e.at),
    event: {
      ownershipId,
      seq: i + 1,
      at: iso(T0 + e.at),
      actor: { executionSessionId: e.session ?? null, principal: 'executor:exec-1' },
      repoRoot: REPO,
      worktreePath: WT,
      branch: 'wt/wt-0',
      hostId: HOST,
      ...(e.messageId ? { messageId: e.messageId } : {}),
      type: e.type,
      data: e.data,
    },
  }));
}

const claimed = (at: number, messageId?: string): Ev => ({
  type: 'ownership.claimed',
  session: 's1',
  at,
  ...(messageId ? { messageId } : {}),
  data: { owner: owner('s1', 'w1'), epoch: 1, via: 'bind', handoffId: null, previousExecutionSessionId: null, lane: null, planRef: null, requestId: null },
});
const released = (at: number, messageId?: string): Ev => ({
  type: 'ownership.released',
  session: 's1',
  at,
  ...(messageId ? { messageId } : {}),
  data: { executionSessionId: 's1', epoch: 1, reason: null },
});
const planBound = (at: number, lane: string, messageId?: string): Ev => ({
  type: 'ownership.plan_bound',
  session: 's1',
  at,
  ...(messageId ? { messageId } : {}),
  data: { lane, planRef: 'docs/plans/p.md', requestId: null },
});
const handoffStarted = (at: number, messageId?: string): Ev => ({
  type: 'ownership.handoff_started',
  session: 's1',
  at,
  ...(messageId ? { messageId } : {}),
  data: { handoffId: 'hof_1', fromExecutionSessionId: 's1', toExecutionSessionId: 's2', toWorkerId: 'w1', reason: null, expiresAt: iso(T0 + 60_000) },
});
const handoffCancelled = (at: number, messageId?: string): Ev => ({
  type: 'ownership.handoff_cancelled',
  session: 's1',
  at,
  ...(messageId ? { messageId } : {}),
  data: { handoffId: 'hof_1', reason: 'cancelled' },
});

const row = (state: string, seq: number, ownerSession: string | null = 's1'): OwnershipRow => ({
  ownership_id: OWN,
  workflow_id: WF,
  worktree_path: WT,
  host_id: HOST,
  state,
  epoch: 1,
  seq,
  owner_session_id: ownerSession,
  owner_worker_id: ownerSession ? 'w1' : null,
});

function logOf(events: Ev[], r?: OwnershipRow): Log {
  const violations: Violation[] = [];
  const log = buildLog(rows(events), r ? [r] : [], violations, (p) => p);
  expect(violations).toEqual([]);
  return log;
}

let n = 0;
function call(c: Partial<CallRecord> & Pick<CallRecord, 'op' | 'status'>): CallRecord {
  return {
    n: n++,
    intent: n,
    variant: 'owner',
    mustRefuse: false,
    caller: { kind: 'executor', worker: 0, workerId: 'w1' },
    slot: 0,
    target: OWN,
    method: 'POST',
    path: `/v1/ownerships/${OWN}/${c.op}`,
    t0: T0 + 1_000,
    t1: T0 + 1_500,
    ...c,
  };
}

const checks = (vs: Violation[]) => vs.map((v) => v.check);
/** Every kind some test below saw fire: the last test holds CHECK_NAMES to it. */
const fired = new Set<CheckName>();
/** The violations are exactly these kinds, in order (and each of them is counted as seen firing). */
function expectChecks(vs: Violation[], kinds: CheckName[]): void {
  expect(checks(vs)).toEqual(kinds);
  for (const k of kinds) fired.add(k);
}

describe('buildLog', () => {
  test('keeps each event’s messageId beside it and indexes the log by message', () => {
    const log = logOf([claimed(0, 'm-bind'), planBound(100, 'lane-a')]);
    const l = log.lifecycles.get(OWN)!;
    expect(l.messageIds).toEqual(['m-bind', null]);
    expect(l.folds.map((f) => f.seq)).toEqual([1, 2]);
    expect(log.byMessage.get('m-bind')).toEqual([{ ownershipId: OWN, seq: 1, type: 'ownership.claimed', index: 0 }]);
  });
});

describe('duplicate_message', () => {
  test('two events of one lifecycle with the same (messageId, type) are reported', () => {
    const out: Violation[] = [];
    checkDuplicateMessages(logOf([claimed(0, 'm1'), planBound(100, 'lane-a', 'm2'), planBound(200, 'lane-a', 'm2')]), out);
    expectChecks(out, ['duplicate_message']);
    expect(out[0]!.message).toContain('m2');
    expect(out[0]!.seq).toBe(3);
  });

  test('a request applied under its own id and its successor id is applied twice', () => {
    const out: Violation[] = [];
    checkDuplicateMessages(logOf([claimed(0, 'm1'), planBound(100, 'lane-a', 'm2'), planBound(200, 'lane-b', 'm2.1')]), out);
    expectChecks(out, ['duplicate_message']);
  });

  test('one message with events of different types, distinct messages, and events without a message id are clean', () => {
    const out: Violation[] = [];
    checkDuplicateMessages(
      logOf([claimed(0, 'm1'), planBound(100, 'lane-a', 'm1'), planBound(200, 'lane-b'), planBound(300, 'lane-c'), planBound(400, 'lane-d', 'm3')]),
      out,
    );
    expect(out).toEqual([]);
  });
});

describe('refused_yet_logged and unavailable_took_effect', () => {
  const log = logOf([claimed(0, 'm-bind'), planBound(1_200, 'lane-a', 'm-plan')]);

  test('a 409 whose message id an event carries is refused_yet_logged', () => {
    const out: Violation[] = [];
    checkRefusedMessages(
      log,
      [
        call({
          op: 'plan',
          status: 409,
          code: 'stale_epoch',
          messageId: 'm-plan',
          body: { executionSessionId: 's1', epoch: 1, lane: 'lane-a', planRef: 'docs/plans/p.md' },
        }),
      ],
      out,
    );
    expectChecks(out, ['refused_yet_logged']);
    expect(out[0]).toMatchObject({ ownershipId: OWN, seq: 2 });
  });

  test('a 503 whose message id an event carries is unavailable_took_effect', () => {
    const out: Violation[] = [];
    checkRefusedMessages(log, [call({ op: 'plan', status: 503, code: 'unavailable', messageId: 'm-plan' })], out);
    expectChecks(out, ['unavailable_took_effect']);
  });

  test('refusals and 5xx whose message is not in the log, and answers without a message id, are clean', () => {
    const out: Violation[] = [];
    checkRefusedMessages(
      log,
      [
        call({ op: 'plan', status: 409, code: 'stale_epoch', messageId: 'm-other' }),
        call({ op: 'release', status: 503, code: 'unavailable', messageId: 'm-other-2' }),
        call({ op: 'plan', status: 409, code: 'stale_epoch' }),
        call({ op: 'plan', status: 200, messageId: 'm-plan' }),
      ],
      out,
    );
    expect(out).toEqual([]);
  });
});

describe('acknowledged_not_logged', () => {
  const releaseBody = { executionSessionId: 's1', epoch: 1, reason: 'torture release' };
  const releasedAnswer = { ownershipId: OWN, state: 'released', epoch: 1, seq: 2, ownerSession: 's1' };

  test('a 2xx release whose message no event carries, with no released event to replay, is reported', () => {
    const out: Violation[] = [];
    const log = logOf([claimed(0, 'm-bind'), planBound(1_200, 'lane-a', 'm-plan')]);
    const f = checkAcknowledgedMessages(
      log,
      [call({ op: 'release', status: 200, messageId: 'm-rel', body: releaseBody, answer: { ...releasedAnswer, seq: 2 } })],
      out,
    );
    expectChecks(out, ['acknowledged_not_logged']);
    expect(f.withMessageId).toBe(1);
  });

  test('a 2xx cancel whose message no event carries is reported even when another cancel’s event is there (a cancel is never a replay)', () => {
    const out: Violation[] = [];
    const log = logOf([claimed(0, 'm-bind'), handoffStarted(100, 'm-ho'), handoffCancelled(1_200, 'm-cancel-1')]);
    checkAcknowledgedMessages(
      log,
      [
        call({
          op: 'cancel',
          status: 200,
          messageId: 'm-cancel-2',
          body: { executionSessionId: 's1', epoch: 1 },
          answer: { ownershipId: OWN, state: 'active', epoch: 1, seq: 3 },
        }),
      ],
      out,
    );
    expectChecks(out, ['acknowledged_not_logged']);
  });

  test('a request the API went on with under its successor id (`<id>.1`) is logged; a 409 whose successor applied is reported', () => {
    const out: Violation[] = [];
    const log = logOf([claimed(0, 'm-bind'), handoffStarted(100, 'm-ho'), handoffCancelled(1_200, 'm-cancel.1')]);
    const f = checkAcknowledgedMessages(
      log,
      [
        call({
          op: 'cancel',
          status: 200,
          messageId: 'm-cancel',
          body: { executionSessionId: 's1', epoch: 1 },
          answer: { ownershipId: OWN, state: 'active', epoch: 1, seq: 3 },
        }),
      ],
      out,
    );
    expect(out).toEqual([]);
    expect(f.ackLogged).toBe(1);
    checkRefusedMessages(log, [call({ op: 'cancel', status: 409, code: 'no_pending_handoff', messageId: 'm-cancel' })], out);
    expectChecks(out, ['refused_yet_logged']);
  });

  test('a 2xx whose message is logged on another ownership is reported', () => {
    const out: Violation[] = [];
    const violations: Violation[] = [];
    const other = 'own_01JTORTURE0000000000000002';
    const log = buildLog([...rows([claimed(0, 'm-bind')]), ...rows([claimed(0, 'm-b2'), released(1_200, 'm-rel')], other)], [], violations, (p) => p);
    checkAcknowledgedMessages(log, [call({ op: 'release', status: 200, messageId: 'm-rel', body: releaseBody, answer: releasedAnswer })], out);
    expectChecks(out, ['acknowledged_not_logged']);
  });

  test('own event logged, replay of another message’s event, and replay of an event older than the call are clean', () => {
    const out: Violation[] = [];
    const log = logOf([claimed(0, 'm-bind'), released(1_200, 'm-rel')], row('released', 2));
    const f = checkAcknowledgedMessages(
      log,
      [
        call({ op: 'release', status: 200, messageId: 'm-rel', body: releaseBody, answer: releasedAnswer }),
        call({ op: 'release', status: 200, messageId: 'm-rel-again', body: releaseBody, answer: releasedAnswer }),
        call({ op: 'release', status: 200, messageId: 'm-rel-later', body: releaseBody, answer: releasedAnswer, t0: T0 + 5_000, t1: T0 + 5_100 }),
      ],
      out,
    );
    expect(out).toEqual([]);
    expect(f).toMatchObject({ withMessageId: 3, ackLogged: 1, ackReplays: 2, ackUnattributed: 0 });
  });

  test('a replay candidate without any message id, recorded during the call, is a figure, not a violation', () => {
    const out: Violation[] = [];
    const log = logOf([claimed(0), released(1_200)]);
    const f = checkAcknowledgedMessages(log, [call({ op: 'release', status: 200, messageId: 'm-rel', body: releaseBody, answer: releasedAnswer })], out);
    expect(out).toEqual([]);
    expect(f.ackUnattributed).toBe(1);
  });
});

describe('live_vs_log', () => {
  const log = logOf([claimed(0, 'm-bind'), released(1_200, 'm-rel')], row('released', 2));
  const live = (view: LiveView['view']): LiveView => ({ workflowId: WF, view });

  test('a running workflow whose record differs from the fold of the log is reported', () => {
    const out: Violation[] = [];
    checkLiveVsLog(log, [live({ ownershipId: OWN, seq: 3, state: 'active', epoch: 2, ownerSession: 's2' })], out);
    expectChecks(out, ['live_vs_log']);
    expect(out[0]!.message).toContain('"seq":2');
  });

  test('a failed query, a record missing from the log, and no record while the log is open are reported', () => {
    const out: Violation[] = [];
    checkLiveVsLog(
      log,
      [
        { workflowId: WF, error: 'QueryFailed: [TMPRL1100] nondeterminism' },
        live({ ownershipId: 'own_01JTORTURE0000000000000009', seq: 1, state: 'active', epoch: 1, ownerSession: 's1' }),
        live(null),
      ],
      out,
    );
    expectChecks(out, ['live_vs_log', 'live_vs_log', 'live_vs_log']);
  });

  test('a running workflow whose record is the fold of the log is clean', () => {
    const out: Violation[] = [];
    checkLiveVsLog(log, [live({ ownershipId: OWN, seq: 2, state: 'released', epoch: 1, ownerSession: 's1' })], out);
    expect(out).toEqual([]);
  });
});

const ET = temporal.api.enums.v1.EventType;
const history = (events: object[]): History => ({ events }) as unknown as History;
const started = { eventId: 1, eventType: ET.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED };
const taskCompleted = (id: number) => ({ eventId: id, eventType: ET.EVENT_TYPE_WORKFLOW_TASK_COMPLETED });

describe('failed_workflow_task', () => {
  test('every WorkflowTaskFailed is reported with its cause and message; timed-out tasks are only counted', () => {
    const out: Violation[] = [];
    const histories: RunHistory[] = [
      {
        workflowId: WF,
        runId: 'run-1',
        history: history([
          started,
          taskCompleted(4),
          {
            eventId: 9,
            eventType: ET.EVENT_TYPE_WORKFLOW_TASK_FAILED,
            workflowTaskFailedEventAttributes: {
              cause: temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR,
              failure: { message: '[TMPRL1100] Nondeterminism error: Activity type of scheduled event did not match' },
            },
          },
          { eventId: 12, eventType: ET.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT },
        ]),
      },
    ];
    const f = checkHistories(histories, out);
    expectChecks(out, ['failed_workflow_task']);
    expect(out[0]).toMatchObject({ workflowId: WF, runId: 'run-1' });
    expect(out[0]!.message).toContain('NON_DETERMINISTIC_ERROR');
    expect(out[0]!.message).toContain('TMPRL1100');
    expect(f).toMatchObject({ runs: 1, failedTasks: 1, timedOutTasks: 1, failedByCause: { NON_DETERMINISTIC_ERROR: 1 } });
  });

  test('histories without failed tasks are clean (timed-out tasks included)', () => {
    const out: Violation[] = [];
    const f = checkHistories(
      [{ workflowId: WF, runId: 'run-1', history: history([started, taskCompleted(4), { eventId: 7, eventType: ET.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT }]) }],
      out,
    );
    expect(out).toEqual([]);
    expect(f).toMatchObject({ failedTasks: 0, timedOutTasks: 1 });
  });
});

describe('replay', () => {
  test('a history that does not replay is reported with its workflow id and the error', () => {
    const out: Violation[] = [];
    checkReplays(
      [
        { workflowId: WF, runId: 'run-2', error: 'DeterminismViolationError: [TMPRL1100] Nondeterminism error' },
        { workflowId: WF, runId: 'run-1' },
      ],
      out,
    );
    expectChecks(out, ['replay']);
    expect(out[0]!.message).toContain(WF);
    expect(out[0]!.message).toContain('TMPRL1100');
  });

  test('histories that replay are clean', () => {
    const out: Violation[] = [];
    checkReplays([{ workflowId: WF, runId: 'run-1' }], out);
    expect(out).toEqual([]);
  });
});

describe('explained_event across a worker outage (--kill-worker)', () => {
  const heartbeat = (at: number): Ev => ({
    type: 'ownership.heartbeat',
    session: 's1',
    at,
    data: { executionSessionId: 's1', epoch: 1, transition: 'periodic' },
  });
  const bind = () => call({ op: 'bind', status: 200, t0: T0, t1: T0 + 800, path: '/v1/bind', body: { executionSessionId: 's1' } });
  const beat = () => call({ op: 'heartbeat', status: 202, t0: T0 + 1_000, t1: T0 + 1_500, body: { executionSessionId: 's1', epoch: 1 } });
  const slots = new Map([[0, worktreeKey(HOST, WT)]]);
  const refusals = (calls: CallRecord[], outages: { from: number; to: number }[]) => {
    const out: Violation[] = [];
    checkRefusals(logOf([claimed(500), heartbeat(12_000)]), calls, slots, out, outages);
    return out;
  };

  test('a signal applied long after its 202 with no outage is explained by no call', () => {
    expectChecks(refusals([bind(), beat()], []), ['explained_event']);
  });
  test('a signal answered just before the worker was killed is applied once a worker takes its task again', () => {
    expect(refusals([bind(), beat()], [{ from: T0 + 1_600, to: T0 + 11_000 }])).toEqual([]);
  });
  test('an outage over before the signal was sent, or one its event is still too late for, does not explain it', () => {
    expectChecks(refusals([bind(), beat()], [{ from: T0 - 20_000, to: T0 - 10_000 }]), ['explained_event']);
    expectChecks(refusals([bind(), beat()], [{ from: T0 + 1_600, to: T0 + 5_000 }]), ['explained_event']);
  });
  test('withinSignal: the call’s own window, stretched to the end of an outage that began before it ran out', () => {
    const r = beat();
    expect(withinSignal(r, T0 + 1_200, 1_000, [])).toBe(true);
    expect(withinSignal(r, T0 + 12_000, 1_000, [])).toBe(false);
    expect(withinSignal(r, T0 + 12_000, 1_000, [{ from: T0 + 1_600, to: T0 + 11_500 }])).toBe(true);
    expect(withinSignal(r, T0 + 12_000, 1_000, [{ from: T0 + 2_600, to: T0 + 11_500 }])).toBe(false);
  });
  test('updates are answered once applied: their windows never stretch', () => {
    const release = call({ op: 'release', status: 200, t0: T0 + 1_000, t1: T0 + 1_500, body: { executionSessionId: 's1', epoch: 1 } });
    const out: Violation[] = [];
    checkRefusals(logOf([claimed(500), released(12_000)]), [bind(), release], slots, out, [{ from: T0 + 1_600, to: T0 + 11_000 }]);
    expectChecks(out, ['explained_event']);
  });
});

// ---- the log alone (lifecycles.ts), the answers (acks.ts), the worktrees (projection.ts) ----------

const OWN2 = 'own_01JTORTURE0000000000000002';
const claimedBy = (at: number, session: string, workerId: string, epoch: number, extra: Data = {}): Ev => ({
  type: 'ownership.claimed',
  session,
  at,
  data: {
    owner: owner(session, workerId),
    epoch,
    via: 'bind',
    handoffId: null,
    previousExecutionSessionId: null,
    lane: null,
    planRef: null,
    requestId: null,
    ...extra,
  },
});
const removed = (at: number): Ev => ({ type: 'ownership.worktree_removed', session: null, at, data: { reason: null } });
const handoffTo = (at: number, toWorkerId: string): Ev => ({ ...handoffStarted(at), data: { ...handoffStarted(at).data, toWorkerId } });
const acceptedBy = (at: number, session: string, workerId: string, handoffId = 'hof_1'): Ev =>
  claimedBy(at, session, workerId, 2, { via: 'handoff', handoffId, previousExecutionSessionId: 's1' });

/** The ownerships row that agrees with the fold of these events (what a healthy read projection holds). */
function rowOf(events: Ev[], ownershipId = OWN, workflowId = WF): OwnershipRow {
  const f = buildLog(rows(events, ownershipId), [], [], (p) => p)
    .lifecycles.get(ownershipId)!
    .folds.at(-1)!;
  return {
    ownership_id: ownershipId,
    workflow_id: workflowId,
    worktree_path: WT,
    host_id: HOST,
    state: f.state,
    epoch: f.epoch,
    seq: f.seq,
    owner_session_id: f.owner?.executionSessionId ?? null,
    owner_worker_id: f.worker?.workerId ?? null,
  };
}

/** Lifecycles (each with the row that agrees with it unless given) through checkLifecycles; git says REPO. */
function lifecycles(
  lcs: { events: Ev[]; id?: string; row?: OwnershipRow | null; workflowId?: string }[],
  homeWorker: Map<string, string> = new Map(),
  opts: { canonicalize?: (p: string) => string; repoRootOf?: (p: string) => string | null; rows?: EventRow[] } = {},
): Violation[] {
  const out: Violation[] = [];
  const eventRows = opts.rows ?? lcs.flatMap((l) => rows(l.events, l.id ?? OWN));
  const ownershipRows = lcs.flatMap((l) => (l.row === null ? [] : [l.row ?? rowOf(l.events, l.id ?? OWN, l.workflowId)]));
  const log = buildLog(eventRows, ownershipRows, out, opts.canonicalize ?? ((p) => p));
  checkLifecycles(log, homeWorker, out, opts.repoRootOf ?? (() => REPO));
  return out;
}

describe('the log alone (checkLifecycles, buildLog)', () => {
  test('a clean log: a tenure, a handoff to the worker offered, a release, the worktree removed, then a new lifecycle', () => {
    const first = [
      claimed(0),
      handoffTo(100, 'w2'),
      acceptedBy(200, 's2', 'w2'),
      { ...released(300), session: 's2', data: { executionSessionId: 's2', epoch: 2, reason: null } },
      removed(400),
    ];
    const second = [claimedBy(1_000, 's3', 'w1', 1)];
    expect(lifecycles([{ events: first }, { events: second, id: OWN2 }], new Map([['s2', 'w2']]))).toEqual([]);
  });

  test('one_live_ownership: two open lifecycles of one worktree at once', () => {
    const vs = lifecycles([{ events: [claimed(0)] }, { events: [claimedBy(100, 's2', 'w1', 1)], id: OWN2 }]);
    expectChecks(vs, ['one_live_ownership']);
    expect(vs[0]!.message).toContain(OWN);
    expect(vs[0]!.message).toContain(OWN2);
  });

  test('one_workflow_per_worktree: one after the other, but governed by two workflow ids', () => {
    const vs = lifecycles([
      { events: [claimed(0), released(100), removed(200)] },
      { events: [claimedBy(1_000, 's2', 'w1', 1)], id: OWN2, workflowId: 'ownership/wt-0/ffffffffffff' },
    ]);
    expectChecks(vs, ['one_workflow_per_worktree']);
  });

  test('epochs: an owner change that is not +1, an event naming another epoch, and one naming a session that is not the owner', () => {
    expectChecks(lifecycles([{ events: [claimedBy(0, 's1', 'w1', 2)] }]), ['epochs']);
    expectChecks(lifecycles([{ events: [claimed(0), { ...released(100), data: { executionSessionId: 's1', epoch: 2, reason: null } }] }]), ['epochs']);
    expectChecks(
      lifecycles([
        { events: [claimed(0), { ...planBound(50, 'a'), session: 's1' }, { ...released(100), data: { executionSessionId: 's9', epoch: 1, reason: null } }] },
      ]),
      ['epochs'],
    );
  });

  test('session_foreign_worker: a session of one worker became owner under another', () => {
    expectChecks(lifecycles([{ events: [claimed(0)] }], new Map([['s1', 'w2']])), ['session_foreign_worker']);
  });

  test('handoff_successor_worker: accepted by another worker than the one offered, or a handoff that was not pending for the session', () => {
    expectChecks(lifecycles([{ events: [claimed(0), handoffTo(100, 'w2'), acceptedBy(200, 's2', 'w1')] }]), ['handoff_successor_worker']);
    expectChecks(lifecycles([{ events: [claimed(0), handoffTo(100, 'w2'), acceptedBy(200, 's3', 'w2')] }]), ['handoff_successor_worker']);
    expectChecks(lifecycles([{ events: [claimed(0), acceptedBy(200, 's2', 'w1', 'hof_never')] }]), ['handoff_successor_worker']);
  });

  test('seq_gap_free: a gap in the log, a row ahead of the log, a row without events', () => {
    const gapped = rows([claimed(0), planBound(100, 'lane-a'), planBound(200, 'lane-b')]);
    gapped.splice(1, 1); // seq 2 is lost: the log reads 1, 3
    expectChecks(lifecycles([{ events: [claimed(0), planBound(100, 'lane-a')], row: { ...rowOf([claimed(0)]), seq: 2 } }], new Map(), { rows: gapped }), [
      'seq_gap_free',
    ]);
    expectChecks(lifecycles([{ events: [claimed(0)], row: { ...rowOf([claimed(0)]), seq: 2 } }]), ['seq_gap_free']);
    expectChecks(lifecycles([{ events: [claimed(0)] }, { events: [], id: OWN2, row: { ...rowOf([claimed(0)]), ownership_id: OWN2 } }]), ['seq_gap_free']);
  });

  test('read_projection_matches_log: a row that is not the fold of the log, and a lifecycle without a row', () => {
    expectChecks(lifecycles([{ events: [claimed(0), released(100)], row: { ...rowOf([claimed(0), released(100)]), state: 'active' } }]), [
      'read_projection_matches_log',
    ]);
    expectChecks(lifecycles([{ events: [claimed(0)], row: null }]), ['read_projection_matches_log']);
  });

  test('path_not_canonical: logged under a spelling that is not the realpath, or naming a repository git does not', () => {
    expectChecks(lifecycles([{ events: [claimed(0)] }], new Map(), { canonicalize: (p) => p.replace('/tmp/', '/private/tmp/') }), ['path_not_canonical']);
    expectChecks(lifecycles([{ events: [claimed(0)] }], new Map(), { repoRootOf: () => '/tmp/torture/other-repo' }), ['path_not_canonical']);
  });

  test('unparseable_event: a row of ownership_events that is no ownership event', () => {
    const out: Violation[] = [];
    const bad = rows([claimed(0), released(100)]);
    bad[1]!.event = { ...(bad[1]!.event as Data), type: 'ownership.exploded' };
    buildLog(bad, [], out, (p) => p);
    expectChecks(out, ['unparseable_event']);
    expect(out[0]).toMatchObject({ ownershipId: OWN, seq: 2 });
  });
});

describe('the answers against the log (checkAcks)', () => {
  const view = { ownershipId: OWN, state: 'active', epoch: 1, seq: 1, ownerSession: 's1', ownerWorker: 'w1', handoffId: null };
  const bindCall = (answer: object = view) =>
    call({ op: 'bind', status: 200, target: undefined, path: '/v1/bind', t0: T0, t1: T0 + 800, body: { executionSessionId: 's1' }, answer });
  const acks = (events: Ev[], calls: CallRecord[]) => {
    const out: Violation[] = [];
    checkAcks(logOf(events), calls, out);
    return out;
  };

  test('clean: a bind answered as logged, a heartbeat within its tenure, a refusal, an answered read', () => {
    const beat = call({ op: 'heartbeat', status: 202, body: { executionSessionId: 's1', epoch: 1 } });
    expect(acks([claimed(500)], [bindCall(), beat, call({ op: 'release', status: 409, mustRefuse: true }), call({ op: 'get', status: 200 })])).toEqual([]);
  });

  test('illegal_acknowledged: a call the contract refuses whatever the interleaving was answered 2xx', () => {
    expectChecks(acks([claimed(500)], [call({ op: 'get', status: 200, variant: 'hijack', mustRefuse: true })]), ['illegal_acknowledged']);
  });

  test('acknowledged_in_log: an answer the log does not hold, as answered', () => {
    expectChecks(acks([claimed(500)], [bindCall({ ...view, state: 'released' })]), ['acknowledged_in_log']);
    expectChecks(acks([claimed(500)], [bindCall({ ...view, seq: 4 })]), ['acknowledged_in_log']);
    expectChecks(acks([claimed(500)], [bindCall({ ...view, ownershipId: OWN2 })]), ['acknowledged_in_log']);
    expectChecks(acks([claimed(500)], [call({ op: 'heartbeat', status: 202, body: { executionSessionId: 's1', epoch: 7 } })]), ['acknowledged_in_log']);
    expectChecks(acks([claimed(500)], [call({ op: 'worktreeRemoved', status: 202 })]), ['acknowledged_in_log']);
    expectChecks(acks([claimed(500)], [call({ op: 'landed', status: 202, body: { landedHead: 'a'.repeat(40) }, answer: { landingStatus: 'recorded' } })]), [
      'acknowledged_in_log',
    ]);
  });
});

describe('the worktrees (checkProjections)', () => {
  const log = logOf([claimed(0)], row('active', 1));
  const q: Quiesced = { caughtUp: true, ms: 10, syncErrors: new Map(), lagging: [] };
  const wts = [{ path: WT, key: worktreeKey(HOST, WT) }];
  const want = localProjectionOf(log.lifecycles.get(OWN)!.folds.at(-1)!, NO_TENURE_HASHES).projection!;
  const projections = async (disk: () => Promise<LocalProjection | null | undefined>, quiesced: Quiesced = q, l: Log = log) => {
    const out: Violation[] = [];
    await checkProjections(l, wts, quiesced, out, disk);
    return out;
  };

  test('clean: the worktree shows its durable owner; a worktree that is gone is not read', async () => {
    expect(await projections(async () => want)).toEqual([]);
    expect(await projections(async () => undefined)).toEqual([]);
  });

  test('local_projection: not caught up, failed on the host, unreadable, another owner shown, a live owner shown after the end', async () => {
    expectChecks(await projections(async () => want, { ...q, caughtUp: false, lagging: [OWN] }), ['local_projection']);
    expectChecks(await projections(async () => want, { ...q, syncErrors: new Map([[OWN, 'projection_conflict']]) }), ['local_projection']);
    expectChecks(
      await projections(async () => {
        throw new Error('git config exited 128');
      }),
      ['local_projection'],
    );
    expectChecks(await projections(async () => ({ ...want, epoch: 2 })), ['local_projection']);
    expectChecks(await projections(async () => null), ['local_projection']);
    const ended = logOf([claimed(0), released(100), removed(200)]);
    expectChecks(await projections(async () => want, q, ended), ['local_projection']);
    expect(await projections(async () => null, q, ended)).toEqual([]);
  });
});

describe('refused_not_logged (checkRefusals)', () => {
  const slots = new Map([[0, worktreeKey(HOST, WT)]]);
  const bind = () => call({ op: 'bind', status: 200, t0: T0, t1: T0 + 800, path: '/v1/bind', body: { executionSessionId: 's1' } });
  const release = (status: number, target = OWN) =>
    call({ op: 'release', status, target, t0: T0 + 1_000, t1: T0 + 1_500, body: { executionSessionId: 's1', epoch: 1 } });
  const refusals = (calls: CallRecord[]) => {
    const out: Violation[] = [];
    checkRefusals(logOf([claimed(500), released(1_200)]), calls, slots, out);
    return out;
  };

  test('clean: every event is a 2xx call’s, addressed to its lifecycle', () => {
    expect(refusals([bind(), release(200)])).toEqual([]);
  });
  test('an event only refused calls could have made', () => {
    expectChecks(refusals([bind(), release(409)]), ['refused_not_logged']);
  });
  test('an event applied to a lifecycle by a call addressed to another', () => {
    expectChecks(refusals([bind(), release(200, OWN2)]), ['refused_not_logged']);
  });
});

test('every kind the torture checker can report is seen firing above (add a doctored input for a new kind)', () => {
  expect(CHECK_NAMES.filter((k) => !fired.has(k))).toEqual([]);
  expect([...fired].filter((k) => !(CHECK_NAMES as readonly string[]).includes(k))).toEqual([]);
});
