import type { OwnershipRecord } from '../domain/projection';
import { isFreeState } from '../domain/states';
import { isHoldTenure } from '../domain/tenure';
import { GitSideError } from '../git/errors';
import { lockFromProjection, readLock, worktreeLockReason } from '../git/lock';
import {
  applyLocalProjection,
  clearSupersededProvisional,
  GIT_LOCK_PREFIX,
  isLiveState,
  isProvisionalConflictState,
  type LocalProjection,
  PROVISIONAL_CONFLICT_STATE,
  PROVISIONAL_STATE,
  readProjection,
  readSupersededProvisional,
} from '../git/projection';
import { isProvisional } from '../git/provisional';
import { applyRecord, localProjectionOf, NO_TENURE_HASHES, type TenureHashes } from '../git/record';
import { worktreeDirs } from '../git/repo';
import { classify } from './classify';
import { type ProvisionalSummary, type ReconcileKind, type ReconcilePort, type ReconciliationEntry, ReconcileRefused, ReconcileUnavailable } from './port';
import { withoutRedaction } from './redacted';
import { inspectWorktree } from './worktree';

export interface ReconcileOptions {
  /** Rewrite a stale/corrupt/conflicting local projection from the durable record. Explicit only (docs/git-projection.md). */
  repair?: boolean;
  /** When set, the worktree must sit under one of these (docs/guarantees.md). */
  allowedRoots?: readonly string[];
  /**
   * The tenure hashes from the service key (src/keys/tenure.ts), when this process can read the
   * key; absent: see keptTenureHash.
   */
  tenureHashes?: TenureHashes;
  now?: () => Date;
}

interface Side {
  ownershipId: string;
  executionSessionId: string | null;
  seq: number;
  epoch: number;
  state: string;
}

export interface ReconcileResult {
  kind: ReconcileKind;
  reason: string | null;
  /** true when the local projection was rewritten by this call */
  changed: boolean;
  /** true when a stale/corrupt/conflicting projection was overwritten because `repair` was asked */
  repaired: boolean;
  worktreePath: string;
  /** the local projection as found (null: none, or unparseable) */
  local: (Side & { provisional: boolean }) | null;
  durable: Side | null;
  provisional: ProvisionalSummary | null;
  /** whether port.recordReconciliation took the entry; null when nothing was to be recorded or the port has no hook */
  recorded: boolean | null;
  recordError?: string;
}

/** Kinds that are logged: everything that found a difference. */
const LOGGED: ReadonlySet<ReconcileKind> = new Set(['rehydrated', 'stale', 'corrupt', 'submitted', 'conflict']);

async function ask<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ReconcileUnavailable || err instanceof ReconcileRefused || err instanceof GitSideError) throw err;
    throw new ReconcileUnavailable(err instanceof Error ? err.message.split('\n')[0]!.slice(0, 200) : String(err));
  }
}

function sideOf(r: OwnershipRecord | null): Side | null {
  return r === null
    ? null
    : { ownershipId: r.ownershipId, executionSessionId: r.owner?.executionSessionId ?? null, seq: r.seq, epoch: r.epoch, state: r.state };
}

function localSide(p: LocalProjection | null): ReconcileResult['local'] {
  return p === null
    ? null
    : { ownershipId: p.ownershipId, executionSessionId: p.executionSessionId, seq: p.seq, epoch: p.epoch, state: p.state, provisional: p.provisional === true };
}

function summary(p: LocalProjection): ProvisionalSummary {
  return { executionSessionId: p.executionSessionId, runtime: p.runtime, idempotencyKey: p.idempotencyKey ?? null, claimedAt: p.claimedAt };
}

/**
 * Refusals that say the caller submitted with the wrong credentials, not that the claim lost: the
 * claim stays provisional (unmarked) so the token of the worker it names can still submit it.
 */
const CALLER_REFUSALS: ReadonlySet<string> = new Set(['worker_mismatch']);

/** A durable owner that holds the worktree now: a provisional claim of another session loses to it. */
function heldByOther(durable: OwnershipRecord | null, session: string): boolean {
  if (durable === null || durable.owner === null) return false;
  if (isFreeState(durable.state) || durable.worktreeRemoved) return false;
  return durable.owner.executionSessionId !== session;
}

/**
 * Without the service key reconcile cannot derive a tenure hash. It keeps the one on disk when that
 * projection is of the very tenure it writes (same ownership, epoch and session: the hash is still
 * the right one); for any other tenure it writes none, and until the host agent writes the hash the
 * guard falls back to the weaker check of the session id (docs/agent-gate.md).
 */
function keptTenureHash(local: LocalProjection | null): TenureHashes {
  return (t) => {
    if (local === null || local.ownershipId !== t.ownershipId || local.epoch !== t.epoch) return null;
    // A child hold's words are kept for that very hold and child only (its hash is never the owner's).
    if (isHoldTenure(t)) return local.holds?.find((h) => h.holdId === t.holdId && h.executionSessionId === t.executionSessionId)?.tenureHash ?? null;
    return local.executionSessionId === t.executionSessionId ? (local.tenureHash ?? null) : null;
  };
}

/** The same proofs: the owner's tenure hash and every child hold's (its session and hash), in any order. */
function sameProof(want: LocalProjection | null, local: LocalProjection | null): boolean {
  if ((want?.tenureHash ?? null) !== (local?.tenureHash ?? null)) return false;
  const holds = (p: LocalProjection | null) =>
    (p?.holds ?? [])
      .map((h) => `${h.holdId} ${h.executionSessionId} ${h.tenureHash}`)
      .sort()
      .join('\n');
  return holds(want) === holds(local);
}

/** Do the lock JSON and git's worktree lock match what the (in-sync) config projection says? */
async function locksAgree(worktreePath: string, record: OwnershipRecord): Promise<boolean> {
  const target = localProjectionOf(record, NO_TENURE_HASHES);
  if (target.projection === null) return true;
  const live = isLiveState(target.projection.state);
  let lock;
  try {
    lock = await readLock(worktreePath);
  } catch (err) {
    if (err instanceof GitSideError && err.code === 'lock_corrupt') return false;
    throw err;
  }
  const want = live ? lockFromProjection(target.projection) : null;
  if ((lock === null) !== (want === null)) return false;
  if (
    lock !== null &&
    want !== null &&
    (lock.ownership_id !== want.ownership_id || lock.execution_session_id !== want.execution_session_id || lock.epoch !== want.epoch)
  ) {
    return false;
  }
  if ((await worktreeDirs(worktreePath)).isMain) return true;
  const ours = (await worktreeLockReason(worktreePath))?.startsWith(GIT_LOCK_PREFIX) === true;
  return ours === (live && target.gitLock);
}

/**
 * Brings one worktree's local projection and the durable record together (docs/git-projection.md, Reconciliation):
 *
 * - in sync: nothing to do;
 * - local missing or behind (lower seq, older lifecycle): rewritten from the durable record
 *   ('rehydrated'), e.g. a worktree deleted while its branch survived and later recreated;
 * - local disagreeing at the same or a higher seq, or naming another ownership: reported as
 *   'corrupt' / 'stale' and rewritten only with `repair: true`;
 * - a provisional (offline) claim: submitted as a bind by its session; when it wins, the real
 *   projection replaces it ('submitted'); when another session owns the worktree by then, or the
 *   service refuses it, it is marked `provisional-conflict` (the guard refuses its session) and
 *   reported as 'conflict'. A provisional claim that a write superseded before reconciliation
 *   (SUPERSEDED_PROVISIONAL_FILE) is resolved the same way. A claim refused because it names
 *   another worker than the port's token (`worker_mismatch`) is reported as 'conflict' but left
 *   provisional: that worker's token may still submit it.
 *
 * Every outcome that found a difference is passed to `port.recordReconciliation`. Writes are
 * compare-and-swap on the seq that was read, so a projection the host agent writes meanwhile is
 * never overwritten; the decision is then taken again.
 */
export async function reconcile(worktreePath: string, port: ReconcilePort, opts: ReconcileOptions = {}): Promise<ReconcileResult> {
  const wt = await inspectWorktree(worktreePath, opts.allowedRoots);
  for (let attempt = 0; ; attempt++) {
    const result = await reconcileOnce(wt, port, opts);
    if (result !== 'retry') return result;
    if (attempt >= 3) throw new GitSideError('git_failed', 'the local projection kept changing during reconciliation');
  }
}

async function reconcileOnce(
  wt: { path: string; repoRoot: string; branch: string | null },
  port: ReconcilePort,
  opts: ReconcileOptions,
): Promise<ReconcileResult | 'retry'> {
  // Reconcile's own writes are confined like the host agent's: every git dir under the roots.
  const confined = opts.allowedRoots ? { allowedRoots: opts.allowedRoots } : {};
  const repair = opts.repair === true;
  const at = (opts.now ?? (() => new Date()))().toISOString();

  let local: LocalProjection | null = null;
  let unparseable = false;
  try {
    local = await readProjection(wt.path);
  } catch (err) {
    if (!(err instanceof GitSideError && err.code === 'projection_corrupt')) throw err;
    unparseable = true;
  }
  const tenureHashes = opts.tenureHashes ?? keptTenureHash(local);
  const superseded = await readSupersededProvisional(wt.path);
  const durableNow = async () => withoutRedaction(await ask(() => port.durable(wt.path)), local);
  let durable = await durableNow();

  const base = {
    worktreePath: wt.path,
    local: localSide(local),
    localOwnershipId: local?.ownershipId ?? null,
    localSeq: local?.seq ?? null,
  };
  const finish = async (
    kind: ReconcileKind,
    reason: string | null,
    changed: boolean,
    repaired: boolean,
    provisional: ProvisionalSummary | null,
  ): Promise<ReconcileResult> => {
    const result: ReconcileResult = {
      kind,
      reason,
      changed,
      repaired,
      worktreePath: wt.path,
      local: base.local,
      durable: sideOf(durable),
      provisional,
      recorded: null,
    };
    if (LOGGED.has(kind) && port.recordReconciliation) {
      const entry: ReconciliationEntry = {
        worktreePath: wt.path,
        kind,
        reason,
        repaired,
        ownershipId: durable?.ownershipId ?? null,
        localOwnershipId: base.localOwnershipId,
        localSeq: base.localSeq,
        durableSeq: durable?.seq ?? null,
        provisional,
        at,
      };
      try {
        await port.recordReconciliation(entry);
        result.recorded = true;
      } catch (err) {
        result.recorded = false;
        result.recordError = err instanceof Error ? err.message.slice(0, 200) : String(err);
      }
    }
    return result;
  };
  /** Rewrites local from durable (or clears it), compare-and-swap on what was read. */
  const rewrite = async (force: boolean): Promise<boolean> => {
    const cas = { ...confined, ...(force ? { force: true } : { expectSeq: local?.seq ?? null }) };
    if (durable === null) return (await applyLocalProjection(wt.path, null, { gitLock: false, ...cas })) !== 'skipped';
    return (await applyRecord(wt.path, durable, tenureHashes, cas)) !== 'skipped';
  };

  // --- a provisional claim, still on disk or superseded before it was reconciled ---------------
  const pending = isProvisional(local) && local.state === PROVISIONAL_STATE ? local : superseded;
  if (pending !== null) {
    const onDisk = pending === local;
    const provisional = summary(pending);
    let refusal: string | null = heldByOther(durable, pending.executionSessionId) ? 'worktree_owned' : null;
    if (refusal === null) {
      if (wt.branch === null) throw new GitSideError('invalid_argument', 'HEAD is detached: a provisional claim needs the worktree on a branch');
      const outcome = await ask(() =>
        port.bind({
          repoRoot: wt.repoRoot,
          worktreePath: wt.path,
          branch: wt.branch!,
          executionSessionId: pending.executionSessionId,
          runtime: pending.runtime,
          worker: pending.workerId === null ? null : { workerId: pending.workerId, runId: pending.runId },
          lane: pending.lane,
          planRef: pending.planRef,
          idempotencyKey: pending.idempotencyKey ?? null,
          claimedAt: pending.claimedAt,
        }),
      );
      if (outcome.ok) {
        durable = outcome.record;
        // The host agent normally writes this itself; if it is down or behind, the service's
        // answer is durable already, so the real projection may replace the provisional one now.
        await applyRecord(wt.path, durable, tenureHashes, confined);
        await clearSupersededProvisional(wt.path, pending.idempotencyKey ?? null);
        return finish('submitted', null, true, false, provisional);
      }
      refusal = outcome.code;
      if (CALLER_REFUSALS.has(refusal) && !repair) return finish('conflict', refusal, false, false, provisional);
      durable = await durableNow();
    }
    let changed = false;
    if (onDisk) {
      if (repair) {
        if (!(await rewrite(false))) return 'retry';
      } else {
        const marked: LocalProjection = { ...pending, state: PROVISIONAL_CONFLICT_STATE };
        const res = await applyLocalProjection(wt.path, marked, {
          ...confined,
          gitLock: true,
          expectSeq: pending.seq,
          lockReason: `provisional claim ${pending.idempotencyKey ?? ''} by session ${pending.executionSessionId} conflicts with the durable owner`.trim(),
        });
        if (res === 'skipped') return 'retry';
      }
      changed = true;
    } else if (repair && classify(unparseable ? 'corrupt' : local, durable).kind !== 'in_sync') {
      if (!(await rewrite(unparseable))) return 'retry';
      changed = true;
    }
    await clearSupersededProvisional(wt.path, pending.idempotencyKey ?? null);
    return finish('conflict', refusal, changed, repair && changed, provisional);
  }

  // --- a provisional claim already marked as lost: stays until an explicit repair -------------
  if (local !== null && isProvisional(local) && isProvisionalConflictState(local.state)) {
    if (!repair) {
      return {
        kind: 'conflict',
        reason: 'provisional_conflict',
        changed: false,
        repaired: false,
        worktreePath: wt.path,
        local: base.local,
        durable: sideOf(durable),
        provisional: summary(local),
        recorded: null,
      };
    }
    if (!(await rewrite(false))) return 'retry';
    return finish('conflict', 'provisional_conflict', true, true, summary(local));
  }

  // --- an ordinary projection against the durable record ---------------------------------------
  const c = classify(unparseable ? 'corrupt' : local, durable);
  switch (c.kind) {
    case 'unowned':
      return finish('unowned', null, false, false, null);
    case 'in_sync':
      if (durable !== null && !(await locksAgree(wt.path, durable))) {
        if (!(await rewrite(false))) return 'retry';
        return finish('rehydrated', 'locks', true, false, null);
      }
      // Only a writer with the key corrects the proof: without it, what is on disk is kept anyway.
      if (durable !== null && opts.tenureHashes !== undefined && !sameProof(localProjectionOf(durable, opts.tenureHashes).projection, local)) {
        if (!(await rewrite(false))) return 'retry';
        return finish('rehydrated', 'tenure_hash', true, false, null);
      }
      return finish('in_sync', null, false, false, null);
    case 'behind':
      if (!(await rewrite(false))) return 'retry';
      return finish('rehydrated', c.reason, true, false, null);
    case 'stale':
    case 'corrupt':
      if (!repair) return finish(c.kind, c.reason, false, false, null);
      if (!(await rewrite(unparseable))) return 'retry';
      return finish(c.kind, c.reason, true, true, null);
  }
}
