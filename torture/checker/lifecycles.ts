import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { OwnershipRecord } from '../../src/domain/projection';
import type { Lifecycle, Log } from './load';
import type { Violation } from './types';

/**
 * Checks on the log alone: seqs gap-free (6), epochs +1 exactly at each owner change (2), the read
 * projection row is the fold of the log, handoffs accepted only by the worker offered, sessions
 * owned only with their own worker, and one live ownership per (host, worktree) at every step (1).
 * `repoRootOf` is git's answer for a worktree's repository (given by a unit test; git by default).
 */
export function checkLifecycles(
  log: Log,
  homeWorker: ReadonlyMap<string, string>,
  out: Violation[],
  repoRootOf: (worktree: string) => string | null = gitRepoRoot,
): void {
  for (const l of log.lifecycles.values()) {
    checkSeqs(l, out);
    checkEpochs(l, homeWorker, out);
    if (l.loggedPath !== l.path) {
      out.push({
        check: 'path_not_canonical',
        message: `ownership logged under a non-canonical spelling of ${l.path}`,
        ownershipId: l.ownershipId,
        worktree: l.path,
      });
    }
  }
  for (const [, group] of log.worktrees) checkOneLive(group, out);
  checkRepoRoots(log, out, repoRootOf);
}

function checkSeqs(l: Lifecycle, out: Violation[]): void {
  l.events.forEach((e, i) => {
    if (e.seq !== i + 1) out.push({ check: 'seq_gap_free', message: `seq ${e.seq} at position ${i + 1}`, ownershipId: l.ownershipId, seq: e.seq });
  });
  const n = l.events.length;
  if (!l.row) {
    out.push({ check: 'read_projection_matches_log', message: 'no row in ownerships', ownershipId: l.ownershipId });
    return;
  }
  if (l.row.seq !== n) out.push({ check: 'seq_gap_free', message: `ownerships row at seq ${l.row.seq}, log ends at ${n}`, ownershipId: l.ownershipId });
  const last = l.folds[n - 1];
  if (!last) return;
  const want = { state: last.state, epoch: last.epoch, ownerSession: last.owner?.executionSessionId ?? null, ownerWorker: last.worker?.workerId ?? null };
  const got = { state: l.row.state, epoch: l.row.epoch, ownerSession: l.row.ownerSession, ownerWorker: l.row.ownerWorker };
  if (JSON.stringify(want) !== JSON.stringify(got)) {
    out.push({
      check: 'read_projection_matches_log',
      message: `row ${JSON.stringify(got)} but the log folds to ${JSON.stringify(want)}`,
      ownershipId: l.ownershipId,
    });
  }
}

function checkEpochs(l: Lifecycle, homeWorker: ReadonlyMap<string, string>, out: Violation[]): void {
  let prev: OwnershipRecord | null = null;
  let epoch = 0;
  for (const [i, e] of l.events.entries()) {
    const v = (message: string, check: Violation['check'] = 'epochs') => out.push({ check, message, ownershipId: l.ownershipId, seq: e.seq });
    const owner = prev?.owner?.executionSessionId ?? null;
    if (e.type === 'ownership.claimed' || e.type === 'ownership.reclaimed') {
      if (e.data.epoch !== epoch + 1) v(`${e.type} at epoch ${e.data.epoch} after epoch ${epoch} (owner changes are +1 exactly)`);
      const session = e.data.owner.executionSessionId;
      const worker = e.data.owner.worker?.workerId;
      const home = homeWorker.get(session);
      if (home !== undefined && home !== worker) v(`session ${session} (of worker ${home}) became owner under worker ${worker}`, 'session_foreign_worker');
      if (e.type === 'ownership.claimed' && e.data.via === 'handoff') {
        const h = prev?.state === 'handoff_pending' ? prev.handoff : null;
        if (!h || h.handoffId !== e.data.handoffId || h.toExecutionSessionId !== session) {
          v(`accepted handoff ${e.data.handoffId} by ${session} that was not pending for it`, 'handoff_successor_worker');
        } else {
          // The offer names its successor's worker; an offer that names none meant the offering owner's own worker.
          const offered = (h as { toWorkerId?: string | null }).toWorkerId ?? prev?.worker?.workerId ?? null;
          if (offered !== worker) v(`handoff ${h.handoffId} offered to worker ${offered} was accepted by worker ${worker}`, 'handoff_successor_worker');
        }
      }
      epoch = e.data.epoch;
    } else if ('data' in e && typeof (e.data as { epoch?: unknown }).epoch === 'number') {
      const d = e.data as { epoch: number; executionSessionId?: string };
      if (d.epoch !== epoch) v(`${e.type} names epoch ${d.epoch}, current is ${epoch}`);
      if (d.executionSessionId !== undefined && d.executionSessionId !== owner) v(`${e.type} names session ${d.executionSessionId}, owner is ${owner}`);
    }
    prev = l.folds[i] ?? prev;
  }
}

/**
 * Replays every lifecycle of one worktree in the order things happened (event time, then the
 * time PostgreSQL recorded it): at no step may two ownerships be open (not closed) at once.
 */
function checkOneLive(group: Lifecycle[], out: Violation[]): void {
  const workflows = new Set(group.map((l) => l.row?.workflowId).filter((x): x is string => Boolean(x)));
  if (workflows.size > 1) {
    out.push({
      check: 'one_workflow_per_worktree',
      message: `${workflows.size} workflow ids govern ${group[0]!.path}: ${[...workflows].join(', ')}`,
      worktree: group[0]!.path,
    });
  }
  if (group.length < 2) return;
  const steps = group.flatMap((l) => l.events.map((e, i) => ({ l, i, at: Date.parse(e.at), rec: l.recordedAt[i]! })));
  steps.sort((a, b) => a.at - b.at || a.rec - b.rec);
  const current = new Map<string, OwnershipRecord>();
  const reported = new Set<string>();
  for (const s of steps) {
    const fold = s.l.folds[s.i];
    if (!fold) continue;
    current.set(s.l.ownershipId, fold);
    const open = [...current.values()].filter((r) => r.state !== 'closed');
    if (open.length < 2) continue;
    const key = open
      .map((r) => r.ownershipId)
      .sort()
      .join(' ');
    if (reported.has(key)) continue;
    reported.add(key);
    out.push({
      check: 'one_live_ownership',
      message: `${open.length} live ownerships of ${s.l.path} at ${new Date(s.at).toISOString()}: ${open.map((r) => `${r.ownershipId} (${r.state}, epoch ${r.epoch}, owner ${r.owner?.executionSessionId ?? 'none'}, repoRoot ${r.repoRoot})`).join('; ')}`,
      worktree: s.l.path,
      ownershipId: s.l.ownershipId,
      seq: s.l.events[s.i]!.seq,
    });
  }
}

/** The repository a lifecycle names is the one git says the worktree belongs to (ids and provenance hang on it). */
function checkRepoRoots(log: Log, out: Violation[], repoRootOf: (worktree: string) => string | null): void {
  const truth = new Map<string, string | null>();
  for (const l of log.lifecycles.values()) {
    if (!truth.has(l.path)) truth.set(l.path, repoRootOf(l.path));
    const real = truth.get(l.path);
    const named = l.events[0]?.repoRoot;
    if (real && named && named !== real) {
      out.push({ check: 'path_not_canonical', message: `ownership names repoRoot ${named}, git says ${real}`, ownershipId: l.ownershipId, worktree: l.path });
    }
  }
}

function gitRepoRoot(worktree: string): string | null {
  if (!existsSync(worktree)) return null;
  try {
    const common = execFileSync('git', ['rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd: worktree, encoding: 'utf8' }).trim();
    return path.dirname(common);
  } catch {
    return null;
  }
}
