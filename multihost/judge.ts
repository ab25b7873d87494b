import { checkAnswers, checkLog, type Log, type Violation } from '../faults/checker';
import type { Timeline } from '../faults/health';
import type { CallRecord } from '../faults/http';
import type { IntentRecord } from '../faults/load';

/**
 * The multihost run's judging, apart from its I/O (./run.ts gathers the answers, hosts' outputs
 * and the log; these decide): each clause a finding names, so a unit test can make every one fire
 * on doctored input. A finding's message is the line the run prints after FAIL.
 */

export const CLAUSES = [
  /** a measured figure over its stated bound (BOUNDS) */
  'bound_missed',
  /** a lookup (who, history, provenance, list --owners) failed on a host, or the hosts answered differently */
  'hosts_disagree',
  /** a bind for a host no agent serves was not refused 503 host_unavailable */
  'bind_away_host',
  /** a successor's reclaim of a cut-off owner was not refused 409 liveness_unknown */
  'reclaim_not_refused',
  /** an admin's forced reclaim on a cut-off host was not recorded, or not said to be pending (not_enforced) */
  'forced_reclaim_unsaid',
  /** `who` does not say the reclaim is not yet enforced on the cut-off host */
  'who_unsaid',
  /** no ref under refs/overdeck holds the commits made while cut off */
  'late_work_not_preserved',
  /** history does not list a late commit among the late attempts */
  'late_not_listed',
  /** history lists a commit made before the reclaim as late */
  'early_listed_late',
  /** history does not attribute a late commit to the old owner */
  'late_not_attributed',
  /** history attributes a commit made while cut off to the new owner */
  'attributed_to_successor',
  /** a call while a host agent was away answered other than its expected status */
  'away_call_answer',
  /** the fault run's checker found a violation in the load */
  'load_violation',
  /** no intent of the load was acknowledged */
  'load_did_not_run',
] as const;

export type Clause = (typeof CLAUSES)[number];

export interface Finding {
  clause: Clause;
  message: string;
}

/** An answer of the API as the run saw it. */
export interface Answer {
  status: number;
  body: Record<string, unknown>;
  ms: number;
}

const brief = (r: Answer, n = 200) => `${r.status} ${JSON.stringify(r.body).slice(0, n)}`;

export function boundMissed(name: string, boundMs: number, measuredMs: number): Finding | null {
  return measuredMs <= boundMs ? null : { clause: 'bound_missed', message: `${name}: ${measuredMs} ms (bound ${boundMs} ms)` };
}

/** One lookup asked on every host: each answered (exit 0), and the same once the moment's fields are dropped. */
export function hostsAgree(name: string, hosts: readonly string[], answers: readonly { code: number; stdout: string; stderr: string }[]): Finding | null {
  const bad = answers.findIndex((a) => a.code !== 0);
  if (bad >= 0) return { clause: 'hosts_disagree', message: `${name} on ${hosts[bad]}: exit ${answers[bad]!.code} ${answers[bad]!.stderr.slice(0, 300)}` };
  const norm = answers.map((a) => JSON.stringify(stable(JSON.parse(a.stdout))));
  return norm.some((n) => n !== norm[0]) ? { clause: 'hosts_disagree', message: `${name}: the hosts answered differently` } : null;
}

export function bindAwayHost(r: Answer): Finding | null {
  return r.status === 503 && r.body.code === 'host_unavailable' ? null : { clause: 'bind_away_host', message: `bind for a host no agent serves: ${brief(r)}` };
}

export function reclaimRefused(r: Answer): Finding | null {
  return r.status === 409 && r.body.code === 'liveness_unknown' ? null : { clause: 'reclaim_not_refused', message: `successor's reclaim: ${brief(r)}` };
}

export function forcedReclaimSaid(r: Answer): Finding | null {
  const enforcement = r.body.enforcement as { state?: string; hostId?: string } | undefined;
  if (r.status !== 200) return { clause: 'forced_reclaim_unsaid', message: `admin's forced reclaim: ${brief(r, 300)}` };
  if (enforcement?.state !== 'not_enforced' || r.body.projection !== 'pending')
    return {
      clause: 'forced_reclaim_unsaid',
      message: `forced reclaim answered without saying it is not yet enforced: ${JSON.stringify({ projection: r.body.projection, enforcement })}`,
    };
  return null;
}

export function whoSaysPending(stdout: string): Finding | null {
  return /Enforced:\s+NOT YET on host/.test(stdout)
    ? null
    : { clause: 'who_unsaid', message: `who on h1 does not say the reclaim is not yet enforced:\n${stdout}` };
}

/** The refs under refs/overdeck from which every one of `shas` is reachable (`reach`: rev-list of each ref). */
export function refsHolding(refs: readonly { ref: string; reach: string }[], shas: readonly string[]): string[] {
  return refs.filter((r) => shas.every((s) => r.reach.includes(s))).map((r) => r.ref);
}

export function lateWorkPreserved(holding: readonly string[], shas: readonly string[]): Finding | null {
  return holding.length > 0
    ? null
    : {
        clause: 'late_work_not_preserved',
        message: `no ref under refs/overdeck holds the commits made while cut off ${shas.map((s) => s.slice(0, 8)).join(', ')}`,
      };
}

/**
 * The history of the cut-off worktree (`od-worktree history --json`): the late commits listed as
 * late attempts and attributed to the old owner; the one made before the reclaim not late; none
 * attributed to the successor.
 */
export function judgeLateHistory(
  history: unknown,
  w: { lateShas: readonly string[]; beforeSha: string | null; ownerSession: string; successorSession: string },
): Finding[] {
  const out: Finding[] = [];
  const listed = lateListed(history);
  for (const sha of w.lateShas)
    if (!listed.includes(sha)) out.push({ clause: 'late_not_listed', message: `history does not list ${sha.slice(0, 8)} among the late attempts` });
  if (w.beforeSha && listed.includes(w.beforeSha))
    out.push({ clause: 'early_listed_late', message: `history lists ${w.beforeSha.slice(0, 8)}, made before the reclaim, as late` });
  for (const sha of [w.beforeSha, ...w.lateShas].filter((s): s is string => s !== null)) {
    const who = sessionsNaming(history, sha);
    if (w.lateShas.includes(sha) && !who.has(w.ownerSession))
      out.push({
        clause: 'late_not_attributed',
        message: `history does not attribute ${sha.slice(0, 8)} to ${w.ownerSession} (${[...who].join(', ') || 'nobody'})`,
      });
    if (who.has(w.successorSession))
      out.push({ clause: 'attributed_to_successor', message: `history attributes ${sha.slice(0, 8)} to the new owner ${w.successorSession}` });
  }
  return out;
}

/** The commits each late attempt lists as late (its `head` and snapshot are beside them, not among them). */
export function lateListed(history: unknown): string[] {
  return collect(collect(history, 'lateAttempts'), 'commits').flatMap((cs) =>
    Array.isArray(cs) ? cs.map((c) => String((c as { commit?: unknown }).commit)) : [],
  );
}

/** A call on a worktree of a host whose agent is away: a first bind refused host_unavailable, a reclaim without proof of death 409, the rest 200. */
export function awayCallAnswer(op: string, r: Answer): Finding | null {
  const expected = op.startsWith('bind')
    ? r.status === 503 && r.body.code === 'host_unavailable'
    : op.startsWith('reclaim (not')
      ? r.status === 409
      : r.status === 200;
  return expected ? null : { clause: 'away_call_answer', message: `${op}: ${brief(r)}` };
}

/**
 * The load of check 5, by the fault run's checker: the log of the load's ownerships only (the
 * other checks' messages are not its intents), every answer, the rebuild check's own violations.
 */
export function judgeLoad(
  log: Log,
  intents: readonly IntentRecord[],
  calls: readonly CallRecord[],
  timeline: Timeline,
  rebuildViolations: readonly Violation[],
): { findings: Finding[]; violations: Violation[] } {
  const mine = new Set(intents.map((i) => i.ownershipId).filter((x): x is string => x !== null));
  for (const c of calls) if (c.answer?.ownershipId) mine.add(c.answer.ownershipId);
  const only: Log = {
    ...log,
    byOwnership: new Map([...log.byOwnership].filter(([id]) => mine.has(id))),
    rows: new Map([...log.rows].filter(([id]) => mine.has(id))),
    unparseable: (log.unparseable ?? []).filter((u) => mine.has(u.ownershipId)),
  };
  const starts = [{ t: 0, id: 'load' }];
  const checked = checkLog(only, intents, calls, (t) => starts.find((s) => s.t <= t)?.id ?? 'load');
  const violations: Violation[] = [...checked.violations, ...checkAnswers(calls, timeline), ...rebuildViolations];
  const findings: Finding[] = violations.slice(0, 20).map((v) => ({ clause: 'load_violation', message: `${v.check}: ${v.message}` }));
  if (violations.length > 20) findings.push({ clause: 'load_violation', message: `… ${violations.length - 20} more violations` });
  if (!intents.some((i) => i.outcome === 'acked')) findings.push({ clause: 'load_did_not_run', message: 'no intent was acknowledged: the load did not run' });
  return { findings, violations };
}

/** Every value under a key named `key`, anywhere in a JSON answer. */
export function collect(x: unknown, key: string, out: unknown[] = []): unknown[] {
  if (Array.isArray(x)) x.forEach((v) => collect(v, key, out));
  else if (x !== null && typeof x === 'object') {
    for (const [k, v] of Object.entries(x)) {
      if (k === key) out.push(v);
      collect(v, key, out);
    }
  }
  return out;
}

/** The sessions named beside `sha` in a JSON answer: executionSessionId / session fields of every object that holds the sha. */
export function sessionsNaming(x: unknown, sha: string, out = new Set<string>()): Set<string> {
  if (Array.isArray(x)) x.forEach((v) => sessionsNaming(v, sha, out));
  else if (x !== null && typeof x === 'object') {
    const o = x as Record<string, unknown>;
    if (Object.values(o).some((v) => v === sha || (Array.isArray(v) && v.includes(sha)))) {
      for (const k of ['executionSessionId', 'session', 'sessionId', 'actorSessionId']) if (typeof o[k] === 'string') out.add(o[k] as string);
    }
    Object.values(o).forEach((v) => sessionsNaming(v, sha, out));
  }
  return out;
}

/** An answer without what differs by the moment it was asked: ages, clocks of the last look, beacon ages. */
export function stable(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(stable);
  if (x === null || typeof x !== 'object') return x;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(x)) {
    if (['lastHeartbeatAt', 'checkedAt', 'hostAgentSeenAgoMs', 'at', 'status', 'verdict'].includes(k) && typeof v !== 'object') continue;
    out[k] = stable(v);
  }
  return out;
}
