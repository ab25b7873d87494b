import { execFile } from 'node:child_process';
import path from 'node:path';
import type { Pool } from 'pg';
import { parseEvent, type OwnershipEvent } from '../src/domain/events';
import { applyEvent, type OwnershipRecord } from '../src/domain/projection';
import { PROJECT_ROOT } from '../src/infra/tools';
import { unavailableProblem } from '../chaos/answer-rules';
import { viewMismatch } from '../chaos/view-check';
import type { HealthSample, Timeline } from './health';
import type { CallRecord } from './http';
import type { DeletionResult } from './injectors';
import type { IntentRecord } from './load';
import { API_DEADLINE_MS, RECLAIM_DEADLINE_MS, STACK_SETTINGS, type Component } from './stack';

/**
 * The promise, clause by clause, over what the run recorded and what PostgreSQL holds:
 *
 * - exactly once: every acknowledged intent (some attempt answered 2xx) has exactly one event
 *   carrying its identifying fields (fresh session ids, lanes, landed heads make them unique); an
 *   intent left in doubt (503 or no answer, then given up or refused) has at most one; one refused
 *   outright (a 4xx with no attempt in doubt) has none. A landing answered 202 `accepted` (signalled,
 *   not yet durable) may have none only when a removal of the same ownership was accepted before it
 *   was sent and the lifecycle closed (the workflow then refuses it): counted as landings_dropped.
 *   A handoff in doubt whose retry started a second handoff (the first having ended meanwhile)
 *   has its acknowledged handoff id once: counted as retried_twice.
 * - nothing unexplained: every event is the event of some intent that was not refused outright,
 *   or system-caused / derived, defined as:
 *     heartbeat          a heartbeat intent (acked or in doubt) of the same session and epoch sent before it,
 *                        or the answer that made that session the owner (bind, accept, reclaim: the API
 *                        records it as heard, and the workflow reads it when the lease runs out);
 *     wip_preserved,
 *     wip_not_preserved  immediately followed (seq + 1) by the reclaimed event of the same actor session;
 *     handoff_cancelled  (reason timeout, system:workflow) the handoff it ends had expired by then;
 *     stale              (system:liveness) the tenure's last claim or heartbeat is a lease TTL older;
 *   anything else (conversation_bound, branch_renamed: this load sends neither) is unexplained.
 * - the log: seqs 1..n per ownership; the `ownerships` row, the API's GET view and the fold of the
 *   log agree; every 2xx view answered is the fold of the log at the seq it answered;
 *   `od-worktree admin rebuild-projection --check` is clean.
 * - answers: every call is answered (no client timeout), within the API's deadline (+5 s); every
 *   5xx is 503 with Retry-After and a `{code, message}` body (unavailable, host_unavailable), no
 *   500, nothing stack-like; a 503 that only the API's deadline produced (the workflow did not
 *   answer within its own bounds) is allowed only while Temporal, the worker or PostgreSQL was away.
 * - /healthz: answered every time; while Temporal or PostgreSQL is down (after 5 s) it is 503 and
 *   names it; a killed worker or host agent is named down within `healthLagMs`; a component that
 *   is up is never called down (after its recovery slack).
 * - next message: checked by the run (probe) and reported here as `wedged`.
 */

/** Every kind of violation the checker (and the run's progress checks) can report; a unit test makes each fire. */
export const CHECK_NAMES = [
  'lost',
  'duplicated',
  'refused_but_logged',
  'unexplained_event',
  'seq_gap',
  'fold_failed',
  'row_disagrees',
  'view_disagrees',
  'answer_not_in_log',
  'rebuild_check',
  'no_answer',
  'slow_answer',
  'bad_5xx',
  'unsafe_body',
  'workflow_unbounded',
  'health_unanswered',
  'health_lie',
  'wedged',
  'driver_error',
] as const;

export type CheckName = (typeof CHECK_NAMES)[number];

export interface Violation {
  check: CheckName;
  phase: string;
  message: string;
  ownershipId?: string;
  call?: number;
  intent?: number;
}

export interface Log {
  byOwnership: Map<string, OwnershipEvent[]>;
  /** recorded_at of each (ownershipId, seq) */
  recordedAt: Map<string, number>;
  /** ownerships rows */
  rows: Map<string, OwnershipRow>;
  events: number;
  /** rows of ownership_events that do not parse as an ownership event: the log does not fold past them (fold_failed) */
  unparseable?: { ownershipId: string; seq: number; recordedAt: number; error: string }[];
}

/** A row of ownership_events as the checker reads it (`event` is the raw JSON). */
export interface EventRow {
  ownership_id: string;
  seq: number;
  event: unknown;
  recorded_at: Date;
}

/** A row of ownerships (the read projection). */
export interface OwnershipRow {
  ownership_id: string;
  state: string;
  epoch: number;
  seq: number;
  owner_session_id: string | null;
  record: OwnershipRecord;
}

export async function loadLog(pool: Pool): Promise<Log> {
  const ev = await pool.query<EventRow>('SELECT ownership_id, seq, event, recorded_at FROM ownership_events ORDER BY ownership_id, seq');
  const rr = await pool.query<OwnershipRow>('SELECT ownership_id, state, epoch, seq, owner_session_id, record FROM ownerships');
  return buildLog(ev.rows, rr.rows);
}

/** The log from its rows (ordered by ownership, seq), without I/O: what loadLog reads, and what a unit test feeds the checks. */
export function buildLog(eventRows: readonly EventRow[], ownershipRows: readonly OwnershipRow[]): Log {
  const byOwnership = new Map<string, OwnershipEvent[]>();
  const recordedAt = new Map<string, number>();
  const unparseable: NonNullable<Log['unparseable']> = [];
  for (const row of eventRows) {
    let e: OwnershipEvent;
    try {
      e = parseEvent(row.event);
    } catch (err) {
      unparseable.push({
        ownershipId: row.ownership_id,
        seq: row.seq,
        recordedAt: row.recorded_at.getTime(),
        error: (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').slice(0, 300),
      });
      continue;
    }
    const list = byOwnership.get(e.ownershipId) ?? [];
    list.push(e);
    byOwnership.set(e.ownershipId, list);
    recordedAt.set(`${e.ownershipId}#${e.seq}`, row.recorded_at.getTime());
  }
  const rows = new Map<string, OwnershipRow>();
  for (const r of ownershipRows) rows.set(r.ownership_id, r);
  return { byOwnership, recordedAt, rows, events: eventRows.length, unparseable };
}

/** The key an intent's event carries (unique per intent but for the removal, one per ownership). */
export function intentKey(i: Pick<IntentRecord, 'op' | 'fields' | 'ownershipId'>): string | null {
  const f = i.fields as Record<string, string | number | undefined>;
  switch (i.op) {
    case 'bind':
      return `claim:${f.session}`;
    case 'accept':
      return `accept:${f.handoffId}:${f.session}`;
    case 'reclaim':
      return `reclaim:${f.session}`;
    case 'handoff':
      return `handoff:${f.session}:${f.toSession}`;
    case 'cancel':
      return `cancel:${f.handoffId}`;
    case 'release':
      return `release:${f.session}:${f.epoch}`;
    case 'submit':
      return `submit:${f.session}:${f.epoch}`;
    case 'plan':
      return `plan:${f.lane}`;
    case 'landed':
      return `landed:${f.landedHead}`;
    case 'worktreeRemoved':
      return i.ownershipId ? `removed:${i.ownershipId}` : null;
    case 'heartbeat':
      return `hb:${f.session}:${f.epoch}`;
    default:
      return null;
  }
}

export function eventKey(e: OwnershipEvent): string | null {
  switch (e.type) {
    case 'ownership.claimed':
      return e.data.via === 'handoff' ? `accept:${e.data.handoffId}:${e.data.owner.executionSessionId}` : `claim:${e.data.owner.executionSessionId}`;
    case 'ownership.reclaimed':
      return `reclaim:${e.data.owner.executionSessionId}`;
    case 'ownership.handoff_started':
      return `handoff:${e.data.fromExecutionSessionId}:${e.data.toExecutionSessionId}`;
    case 'ownership.handoff_cancelled':
      return e.data.reason === 'cancelled' ? `cancel:${e.data.handoffId}` : null;
    case 'ownership.released':
      return `release:${e.data.executionSessionId}:${e.data.epoch}`;
    case 'ownership.submitted':
      return `submit:${e.data.executionSessionId}:${e.data.epoch}`;
    case 'ownership.plan_bound':
      return e.data.lane === null ? null : `plan:${e.data.lane}`;
    case 'ownership.landed':
      return `landed:${e.data.receipt.landedHead}`;
    case 'ownership.worktree_removed':
      return `removed:${e.ownershipId}`;
    case 'ownership.heartbeat':
      return `hb:${e.data.executionSessionId}:${e.data.epoch}`;
    default:
      return null;
  }
}

const refusedOutright = (i: IntentRecord) => i.outcome === 'refused' && !i.inDoubt;

export interface LogCheckResult {
  violations: Violation[];
  /** per intent id: how many events carry its key (for the figures) */
  matched: Map<number, number>;
  /** handoffs in doubt, retried, and started twice (the first one ended before the retry started the second) */
  retriedTwice: { phase: string; intent: number; ownershipId: string }[];
  /** landings accepted (202) and then refused by the workflow, their lifecycle closed first by an earlier removal */
  droppedLandings: { phase: string; intent: number; ownershipId: string }[];
  /** events whose intents were all left in doubt (503 or no answer, never a 2xx): applied, never acknowledged */
  appliedUnacked: { phase: string; ownershipId: string; seq: number; type: string }[];
}

/** Exactly once, nothing unexplained, gap-free seqs, answers in the log. */
export function checkLog(log: Log, intents: readonly IntentRecord[], calls: readonly CallRecord[], phaseOf: (t: number) => string): LogCheckResult {
  const out: Violation[] = [];
  const log0 = log;
  const eventsByKey = new Map<string, OwnershipEvent[]>();
  const folds = new Map<string, OwnershipRecord[]>();
  for (const [id, events] of log.byOwnership) {
    let r: OwnershipRecord | null = null;
    const f: OwnershipRecord[] = [];
    for (const [i, e] of events.entries()) {
      if (e.seq !== i + 1) {
        out.push({
          check: 'seq_gap',
          phase: phaseOf(log.recordedAt.get(`${id}#${e.seq}`) ?? 0),
          ownershipId: id,
          message: `${id}: event #${i + 1} has seq ${e.seq}`,
        });
        break;
      }
      // applyEvent throws only on a seq gap, caught just above.
      r = applyEvent(r, e);
      f.push(r);
      const k = eventKey(e);
      if (k) eventsByKey.set(k, [...(eventsByKey.get(k) ?? []), e]);
    }
    folds.set(id, f);
  }
  for (const u of log.unparseable ?? []) {
    out.push({
      check: 'fold_failed',
      phase: phaseOf(u.recordedAt),
      ownershipId: u.ownershipId,
      message: `${u.ownershipId} seq ${u.seq} is no ownership event, the log does not fold past it: ${u.error}`,
    });
  }

  const intentsByKey = new Map<string, IntentRecord[]>();
  for (const i of intents) {
    const k = intentKey(i);
    if (k) intentsByKey.set(k, [...(intentsByKey.get(k) ?? []), i]);
  }

  // Exactly once, per intent.
  const matched = new Map<number, number>();
  /**
   * A landing answered 202 `accepted` is a signal, not yet an event: the workflow refuses it if,
   * by the time it is handled, the lifecycle has closed. Allowed only when that closing was asked
   * for first: a worktree-removed of the same ownership accepted before the landing was sent, and
   * the lifecycle closed in the log.
   */
  const droppedLandings: LogCheckResult['droppedLandings'] = [];
  /**
   * A handoff's id is the server's, not the caller's: a retry after an attempt in doubt that was
   * applied, then expired or was cancelled, starts a second handoff. Allowed (counted as
   * retried_twice) only for an intent in doubt whose acknowledged handoff is in the log exactly
   * once, every earlier one with the same sessions having ended before the next began.
   */
  const retriedTwice: LogCheckResult['retriedTwice'] = [];
  const retriedHandoff = (i: IntentRecord, events: OwnershipEvent[]): boolean => {
    if (i.op !== 'handoff' || !i.inDoubt || i.outcome !== 'acked' || !i.answer?.handoffId) return false;
    const started = events.filter((e): e is Extract<OwnershipEvent, { type: 'ownership.handoff_started' }> => e.type === 'ownership.handoff_started');
    if (started.filter((e) => e.data.handoffId === i.answer!.handoffId).length !== 1) return false;
    const log = log0.byOwnership.get(i.ownershipId ?? '') ?? [];
    return started.every(
      (e) =>
        e.data.handoffId === i.answer!.handoffId ||
        log.some((x) => x.seq > e.seq && x.type === 'ownership.handoff_cancelled' && x.data.handoffId === e.data.handoffId),
    );
  };
  const droppedLanding = (i: IntentRecord): boolean => {
    if (i.op !== 'landed' || i.answer?.landingStatus !== 'accepted' || !i.ownershipId) return false;
    const f = folds.get(i.ownershipId);
    if (f?.at(-1)?.state !== 'closed') return false;
    return intents.some((x) => x.op === 'worktreeRemoved' && x.ownershipId === i.ownershipId && (x.outcome === 'acked' || x.inDoubt) && x.t1 <= i.t0);
  };
  for (const i of intents) {
    if (i.op === 'heartbeat' || i.op === 'get') continue;
    const k = intentKey(i);
    if (!k) continue;
    const n = eventsByKey.get(k)?.length ?? 0;
    matched.set(i.id, n);
    const v = (check: CheckName, message: string) =>
      out.push({
        check,
        phase: i.phase,
        intent: i.id,
        ...(i.ownershipId ? { ownershipId: i.ownershipId } : {}),
        message: `${i.op} intent #${i.id} (${i.attempts} attempt(s), ${i.outcome}${i.inDoubt ? ', in doubt' : ''}${i.code ? `, ${i.code}` : ''}): ${message}`,
      });
    if (i.outcome === 'acked' && n === 0 && droppedLanding(i)) droppedLandings.push({ phase: i.phase, intent: i.id, ownershipId: i.ownershipId ?? '' });
    else if (i.outcome === 'acked' && n === 0) v('lost', `acknowledged, no ${k} event in the log`);
    else if (n > 1 && retriedHandoff(i, eventsByKey.get(k)!)) retriedTwice.push({ phase: i.phase, intent: i.id, ownershipId: i.ownershipId ?? '' });
    else if (n > 1) v('duplicated', `${n} events for ${k}`);
    else if (refusedOutright(i) && n === 1 && (intentsByKey.get(k) ?? []).every(refusedOutright))
      v('refused_but_logged', `refused without doubt, yet ${k} is in the log`);
    // A bind answers the ownership its claim is in.
    if (i.outcome === 'acked' && n === 1 && i.op === 'bind' && i.answer?.ownershipId && eventsByKey.get(k)![0]!.ownershipId !== i.answer.ownershipId) {
      v('lost', `answered ownership ${i.answer.ownershipId}, the claim is in ${eventsByKey.get(k)![0]!.ownershipId}`);
    }
  }

  // Nothing unexplained, per event.
  const appliedUnacked: LogCheckResult['appliedUnacked'] = [];
  const noteUnacked = (mine: IntentRecord[], e: OwnershipEvent, phase: string) => {
    if (mine.length > 0 && mine.every((i) => i.outcome !== 'acked' && i.inDoubt))
      appliedUnacked.push({ phase, ownershipId: e.ownershipId, seq: e.seq, type: e.type });
  };
  for (const [id, events] of log.byOwnership) {
    const f = folds.get(id) ?? [];
    for (const [idx, e] of events.entries()) {
      const phase = phaseOf(log.recordedAt.get(`${id}#${e.seq}`) ?? 0);
      const unexplained = (why: string) => out.push({ check: 'unexplained_event', phase, ownershipId: id, message: `${id} seq ${e.seq} ${e.type}: ${why}` });
      const before = idx > 0 ? f[idx - 1] : null;
      const at = Date.parse(e.at);
      switch (e.type) {
        case 'ownership.heartbeat': {
          const hb = intentsByKey.get(eventKey(e)!) ?? [];
          const sent = (i: IntentRecord) => (i.outcome === 'acked' || i.inDoubt) && i.t0 <= at + 1_000;
          // Sessions are fresh per intent: a tenure-giving answer to this very session is what the API recorded as heard.
          const answered = () =>
            intents.some((i) => (i.op === 'bind' || i.op === 'accept' || i.op === 'reclaim') && i.fields.session === e.data.executionSessionId && sent(i));
          if (!hb.some(sent) && !answered()) unexplained('no heartbeat of that session and epoch before it');
          break;
        }
        case 'ownership.wip_preserved':
        case 'ownership.wip_not_preserved': {
          const next = events[idx + 1];
          if (!next || next.type !== 'ownership.reclaimed' || next.data.owner.executionSessionId !== e.actor.executionSessionId)
            unexplained('not immediately followed by the reclaim of its actor');
          break;
        }
        case 'ownership.handoff_cancelled':
          if (e.data.reason === 'timeout') {
            const h = before?.handoff;
            if (e.actor.principal !== 'system:workflow' || !h || h.handoffId !== e.data.handoffId || Date.parse(h.expiresAt) > at + 1_000)
              unexplained('a timeout of a handoff that had not expired');
            break;
          }
          noteUnacked(explainByIntent(e, intentsByKey, unexplained), e, phase);
          break;
        case 'ownership.stale': {
          const last = [...events.slice(0, idx)]
            .reverse()
            .find((x) => x.type === 'ownership.heartbeat' || x.type === 'ownership.claimed' || x.type === 'ownership.reclaimed');
          if (e.actor.principal !== 'system:liveness' || !last || at - Date.parse(last.at) < STACK_SETTINGS.leaseTtlMs)
            unexplained('stale within the lease TTL of the last sign of life');
          break;
        }
        default:
          if (eventKey(e) === null) unexplained('this load never sends what makes it');
          else noteUnacked(explainByIntent(e, intentsByKey, unexplained), e, phase);
      }
    }
  }

  // Every 2xx view is the log folded at its seq.
  for (const c of calls) {
    if (c.status < 200 || c.status >= 300 || !c.answer?.ownershipId || c.answer.seq === undefined || c.answer.state === undefined) continue;
    const f = folds.get(c.answer.ownershipId);
    const v = (m: string) =>
      out.push({ check: 'answer_not_in_log', phase: c.phase, call: c.n, ownershipId: c.answer!.ownershipId!, message: `${c.op} call #${c.n}: ${m}` });
    if (!f) {
      v('answered an ownership the log does not hold');
      continue;
    }
    const at = f[c.answer.seq - 1];
    if (!at) {
      v(`answered seq ${c.answer.seq}, the log ends at ${f.length}`);
      continue;
    }
    const off = viewMismatch(at, c.answer);
    if (off) v(`answered ${off.answered} at seq ${c.answer.seq}, the log says ${off.logged}`);
  }
  return { violations: out, matched, appliedUnacked, droppedLandings, retriedTwice };
}

/** Whether some intent carries the event's key: false when none does (then reported unexplained). */
function explainByIntent(e: OwnershipEvent, intentsByKey: Map<string, IntentRecord[]>, unexplained: (why: string) => void): IntentRecord[] {
  const k = eventKey(e);
  const mine = k ? (intentsByKey.get(k) ?? []) : [];
  if (mine.length === 0) unexplained(`no request of the run carries ${k}`);
  // refused outright: reported once, per intent, as refused_but_logged
  return mine;
}

/** The row, the GET view and the fold of the log, for every ownership. */
export async function checkAgreement(
  log: Log,
  getView: (ownershipId: string) => Promise<{ status: number; body: unknown }>,
  phase: string,
): Promise<Violation[]> {
  const out: Violation[] = [];
  for (const [id, events] of log.byOwnership) {
    let fold: OwnershipRecord | null = null;
    try {
      for (const e of events) fold = applyEvent(fold, e);
    } catch {
      continue; // a seq gap: reported as seq_gap
    }
    if (!fold) continue;
    const row = log.rows.get(id);
    if (!row) {
      out.push({ check: 'row_disagrees', phase, ownershipId: id, message: `${id}: no ownerships row` });
      continue;
    }
    if (
      canonical(row.record) !== canonical(fold) ||
      row.state !== fold.state ||
      row.epoch !== fold.epoch ||
      row.seq !== fold.seq ||
      row.owner_session_id !== (fold.owner?.executionSessionId ?? null)
    ) {
      out.push({
        check: 'row_disagrees',
        phase,
        ownershipId: id,
        message: `${id}: row state ${row.state} epoch ${row.epoch} seq ${row.seq}, log fold ${fold.state} ${fold.epoch} ${fold.seq}`,
      });
    }
    const v = await getView(id);
    const b = v.body as {
      state?: string;
      epoch?: number;
      seq?: number;
      owner?: { executionSessionId?: string } | null;
      handoff?: { handoffId?: string } | null;
    } | null;
    const got = { state: b?.state, epoch: b?.epoch, seq: b?.seq, owner: b?.owner?.executionSessionId ?? null, handoff: b?.handoff?.handoffId ?? null };
    const want = {
      state: fold.state,
      epoch: fold.epoch,
      seq: fold.seq,
      owner: fold.owner?.executionSessionId ?? null,
      handoff: fold.handoff?.handoffId ?? null,
    };
    if (v.status !== 200 || JSON.stringify(got) !== JSON.stringify(want)) {
      out.push({
        check: 'view_disagrees',
        phase,
        ownershipId: id,
        message: `${id}: GET answered ${v.status} ${JSON.stringify(got)}, the log folds to ${JSON.stringify(want)}`,
      });
    }
  }
  return out;
}

function canonical(x: unknown): string {
  return JSON.stringify(x, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** `od-worktree admin rebuild-projection --check --json`, as an operator would run it. */
export function rebuildCheck(databaseUrl: string, phase: string): Promise<{ clean: boolean; violations: Violation[]; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(PROJECT_ROOT, 'bin', 'od-worktree.js'), 'admin', 'rebuild-projection', '--check', '--json'],
      { cwd: PROJECT_ROOT, env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }, encoding: 'utf8', timeout: 120_000 },
      (err, stdout, stderr) => resolve(judgeRebuild(err, stdout, stderr, phase)),
    );
  });
}

/** rebuild_check: clean only when the command exited 0 and said `{"consistent": true}` on stdout. */
export function judgeRebuild(
  err: { code?: unknown } | null,
  stdout: string,
  stderr: string,
  phase: string,
): { clean: boolean; violations: Violation[]; output: string } {
  const output = `${stdout}${stderr}`.trim();
  let consistent = false;
  try {
    consistent = (JSON.parse(stdout) as { consistent?: boolean }).consistent === true;
  } catch {
    /* not JSON: not clean */
  }
  const clean = err === null && consistent;
  return {
    clean,
    output,
    violations: clean ? [] : [{ check: 'rebuild_check', phase, message: `rebuild-projection --check: exit ${err ? err.code : 0}: ${output.slice(0, 500)}` }],
  };
}

const DEADLINE_SLACK_MS = 5_000;
const deadlineOf = (op: string) => (op === 'reclaim' ? RECLAIM_DEADLINE_MS : API_DEADLINE_MS);
/** After a restart the worker replays, Temporal re-dispatches, the pool reconnects: answers may still be slow. */
const RECOVERY_MS = 20_000;

/** Every answer: bounded, 503 with Retry-After and a plain body, and never the API's backstop while the workflow could answer. */
export function checkAnswers(calls: readonly CallRecord[], timeline: Timeline): Violation[] {
  const out: Violation[] = [];
  for (const c of calls) {
    const v = (check: CheckName, m: string) =>
      out.push({ check, phase: c.phase, call: c.n, message: `${c.op} call #${c.n} (${c.method} ${c.path.replace(/\?.*$/, '')}): ${m}` });
    const ms = c.t1 - c.t0;
    if (c.status === 0) v('no_answer', `no answer within ${ms} ms`);
    if (ms > deadlineOf(c.op) + DEADLINE_SLACK_MS) v('slow_answer', `answered after ${ms} ms (bound ${deadlineOf(c.op) + DEADLINE_SLACK_MS} ms)`);
    const unavailable = unavailableProblem(c.status, c.retryAfter);
    if (unavailable) v('bad_5xx', `${unavailable} ${c.code ?? ''}`);
    else if (c.status === 503 && c.code !== 'unavailable' && c.code !== 'host_unavailable') v('bad_5xx', `503 with code ${c.code ?? '(none)'}`);
    if (c.unsafeBody) v('unsafe_body', c.unsafeBody);
    const workflowAway = timeline.overlaps(['temporal', 'worker', 'postgres'], c.t0, c.t1, RECOVERY_MS);
    if (c.status === 503 && c.code === 'unavailable' && ms >= deadlineOf(c.op) - 1_500 && !workflowAway) {
      v(
        'workflow_unbounded',
        `503 unavailable after ${ms} ms, the API's own deadline, while Temporal, the worker and PostgreSQL were up: the workflow did not answer within its bounds`,
      );
    }
  }
  return out;
}

export interface HealthFinding {
  component: Component;
  phase: string;
  downMs: number;
  /** ms from the kill to the first sample naming it down; null: never within the interval */
  reportedAfterMs: number | null;
}

/**
 * /healthz tells the truth: a component down for longer than its lag (5 s for Temporal and
 * PostgreSQL; `healthLagMs` for the worker and host agent, whose liveness Temporal reports by
 * their last poll) is named down, with 503 unless it is the host agent; one that is up is not.
 */
export function checkHealth(
  samples: readonly HealthSample[],
  timeline: Timeline,
  healthLagMs: number,
  phaseOf: (t: number) => string,
): { violations: Violation[]; findings: HealthFinding[] } {
  const out: Violation[] = [];
  const lag: Record<Component, number> = { temporal: 5_000, postgres: 5_000, worker: healthLagMs, hostAgent: healthLagMs, api: 0 };
  const field: Partial<Record<Component, keyof NonNullable<HealthSample['body']>>> = {
    temporal: 'temporal',
    postgres: 'postgres',
    worker: 'worker',
    hostAgent: 'hostAgent',
  };
  const findings: HealthFinding[] = [];
  for (const d of timeline.intervals) {
    const f = field[d.component];
    if (!f) continue;
    const first = samples.find((s) => s.t0 >= d.from && s.t1 <= d.to && s.body?.[f] === 'down');
    findings.push({
      component: d.component,
      phase: d.phase,
      downMs: (Number.isFinite(d.to) ? d.to : Date.now()) - d.from,
      reportedAfterMs: first ? first.t1 - d.from : null,
    });
  }
  for (const s of samples) {
    const phase = phaseOf(s.t0);
    const v = (m: string) => out.push({ check: 'health_lie', phase, message: `/healthz at ${new Date(s.t0).toISOString()}: ${m}` });
    if (s.status === 0 || !s.body) {
      out.push({ check: 'health_unanswered', phase, message: `/healthz at ${new Date(s.t0).toISOString()} unanswered within ${s.t1 - s.t0} ms` });
      continue;
    }
    const temporalAway = timeline.overlaps(['temporal'], s.t0, s.t1, RECOVERY_MS);
    let mustBe503 = false;
    for (const c of ['temporal', 'postgres', 'worker', 'hostAgent'] as const) {
      const f = field[c]!;
      const surelyDown = timeline.intervals.some((d) => d.component === c && d.from + lag[c] <= s.t0 && s.t1 <= d.to);
      // The worker's and host agent's beacons live in PostgreSQL: right after it is back they may be a beat behind.
      const surelyUp =
        !timeline.overlaps(c === 'worker' || c === 'hostAgent' ? [c, 'postgres'] : [c], s.t0, s.t1, RECOVERY_MS) &&
        !(c !== 'temporal' && c !== 'postgres' && temporalAway);
      if (surelyDown && s.body[f] !== 'down')
        v(
          `${c} down for ${s.t0 - timeline.intervals.find((d) => d.component === c && d.from <= s.t0 && s.t1 <= d.to)!.from} ms, reported ${String(s.body[f])}`,
        );
      if (surelyDown && c !== 'hostAgent') mustBe503 = true;
      if (surelyUp && s.body[f] !== 'up') v(`${c} up, reported ${String(s.body[f])}`);
    }
    if (mustBe503 && s.status !== 503) v(`a dependency is down, answered ${s.status}`);
    const allUp = !timeline.overlaps(['temporal', 'postgres', 'worker'], s.t0, s.t1, RECOVERY_MS);
    if (allUp && s.status !== 200) v(`everything up, answered ${s.status} ${JSON.stringify(s.body)}`);
  }
  return { violations: out, findings };
}

/** A probe: the next message sent to a worktree once a fault healed (faults/run.ts). */
export interface Probe {
  /** the worktree's name */
  name: string;
  op: string;
  ok: boolean;
  ms: number;
  code?: string;
}

/**
 * The run's progress after a fault: wedged, a worktree whose next message was not taken within
 * the bound, or a deleted worktree whose reclaim was not acknowledged; driver_error, what the load
 * itself could not do (a worktree it could not own before deleting it, a driver's own error).
 */
export function checkProgress(
  phase: string,
  probes: readonly Probe[],
  probeBoundMs: number,
  deletions: readonly Pick<DeletionResult, 'slot' | 'variant' | 'setupFailed' | 'result'>[],
  driverErrors: readonly { name: string; error: string }[],
): Violation[] {
  const out: Violation[] = [];
  for (const pr of probes) {
    if (!pr.ok)
      out.push({
        check: 'wedged',
        phase,
        message: `${pr.name}: the next message (${pr.op}) was not taken within ${probeBoundMs} ms (${pr.code ?? 'no 2xx'} after ${pr.ms} ms)`,
      });
  }
  for (const d of deletions) {
    if (d.setupFailed) out.push({ check: 'driver_error', phase, message: `e: wt-${d.slot} could not be owned before its deletion` });
    else if (d.result?.outcome !== 'acked')
      out.push({
        check: 'wedged',
        phase,
        message: `e: reclaim of wt-${d.slot} (deleted ${d.variant}) was not acknowledged: ${d.result?.outcome ?? 'not sent'} ${d.result?.code ?? ''}`,
      });
  }
  for (const e of driverErrors) out.push({ check: 'driver_error', phase, message: `${e.name}: ${e.error}` });
  return out;
}
