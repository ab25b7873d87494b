import { randomBytes } from 'node:crypto';
import { IdString } from '../domain/identity';
import { confineDirs } from './confine';
import { GitSideError } from './errors';
import { assertUnderAllowedRoots, PathRefusal } from './paths';
import {
  applyLocalProjection,
  isLiveState,
  isProvisionalConflictState,
  type LocalProjection,
  LocalProjectionSchema,
  PROVISIONAL_STATE,
  readProjection,
} from './projection';
import { worktreeDirs } from './repo';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** 128 random bits in Crockford base32 (26 characters): the same alphabet as the ULIDs of ownership ids. */
export function randomBase32(bytes = 16): string {
  const buf = randomBytes(bytes);
  let out = '';
  let acc = 0;
  let bits = 0;
  for (const b of buf) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += CROCKFORD[(acc >>> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  if (bits > 0) out += CROCKFORD[(acc << (5 - bits)) & 31];
  return out;
}

/** `idem_<base32>`: the idempotency key of one offline claim; its ownership placeholder is `prov_<same>`. */
export function newIdempotencyKey(): string {
  return `idem_${randomBase32()}`;
}

export function provisionalOwnershipId(idempotencyKey: string): string {
  return `prov_${idempotencyKey.replace(/^idem_/, '')}`;
}

export function isProvisional(p: LocalProjection | null): p is LocalProjection {
  return p !== null && p.provisional === true;
}

export interface OfflineClaimInput {
  executionSessionId: string;
  runtime: string;
  workerId?: string | null;
  runId?: string | null;
  lane?: string | null;
  planRef?: string | null;
  /** The worktree must sit under one of these before anything is written. */
  allowedRoots: readonly string[];
  /** Injected for tests; defaults to a fresh random key. */
  idempotencyKey?: string;
  now?: () => Date;
}

export type OfflineClaimOutcome =
  /** a new provisional projection was written */
  | { status: 'claimed'; projection: LocalProjection }
  /** this session's provisional claim was already there: returned unchanged (same idempotency key) */
  | { status: 'already_provisional'; projection: LocalProjection }
  /** this session already owns the worktree durably: nothing written */
  | { status: 'already_owned'; projection: LocalProjection }
  /** another session holds the worktree (local projection says so) */
  | { status: 'refused'; projection: LocalProjection }
  /** the local projection is corrupt or a lost provisional claim: reconcile first */
  | { status: 'conflict'; projection: LocalProjection | null; reason: 'projection_corrupt' | 'provisional_conflict' };

/**
 * Offline claim (docs/git-projection.md#offline-claims): the orchestrator is unreachable while a session starts work in a worktree. Writes a
 * provisional, session-owned local projection (config keys, lock JSON, git worktree lock) without
 * contacting the service, so the guard treats the session as the owner until reconciliation.
 *
 * - never a conversation: conversation id and URL stay absent: only an executor's observation names one;
 * - seq 0 and epoch 0: any real projection the host agent writes later supersedes it (and a write
 *   that supersedes it before reconciliation stashes it, see SUPERSEDED_PROVISIONAL_FILE);
 * - a random idempotency key, carried to the service by `reconcile`.
 *
 * Refuses (without writing) when the local projection names another live owner.
 */
export async function offlineClaim(worktreePath: string, input: OfflineClaimInput): Promise<OfflineClaimOutcome> {
  for (const [field, value] of [
    ['executionSessionId', input.executionSessionId],
    ['runtime', input.runtime],
    ['workerId', input.workerId],
    ['runId', input.runId],
  ] as const) {
    if (value !== undefined && value !== null && !IdString.safeParse(value).success)
      throw new GitSideError('invalid_argument', `${field} is not a valid identifier`);
  }
  let wt: string;
  try {
    wt = await assertUnderAllowedRoots(worktreePath, input.allowedRoots, { mustExist: true });
    // A worktree's top directory, and its git dirs under the roots too (a `.git` file naming a git
    // dir elsewhere must not get a claim written there); checked again by the write itself.
    await confineDirs(await worktreeDirs(wt), input.allowedRoots);
  } catch (err) {
    if (err instanceof PathRefusal) throw new GitSideError('invalid_argument', err.message);
    throw err;
  }

  // Decide on what is on disk, then write only if it is still that (compare-and-swap on the seq):
  // a real projection the host agent writes in between wins, and the decision is taken again.
  for (let attempt = 0; ; attempt++) {
    let local: LocalProjection | null;
    try {
      local = await readProjection(wt);
    } catch (err) {
      if (err instanceof GitSideError && err.code === 'projection_corrupt') return { status: 'conflict', projection: null, reason: 'projection_corrupt' };
      throw err;
    }
    if (local !== null) {
      const mine = local.executionSessionId === input.executionSessionId;
      if (isProvisionalConflictState(local.state)) {
        return { status: 'conflict', projection: local, reason: 'provisional_conflict' };
      }
      if (isLiveState(local.state)) {
        if (!mine) return { status: 'refused', projection: local };
        return isProvisional(local) ? { status: 'already_provisional', projection: local } : { status: 'already_owned', projection: local };
      }
    }

    const now = (input.now ?? (() => new Date()))().toISOString();
    const idempotencyKey = input.idempotencyKey ?? newIdempotencyKey();
    const projection = LocalProjectionSchema.parse({
      ownershipId: provisionalOwnershipId(idempotencyKey),
      executionSessionId: input.executionSessionId,
      runtime: input.runtime,
      conversationId: null,
      conversationUrl: null,
      workerId: input.workerId ?? null,
      runId: input.runId ?? null,
      lane: input.lane ?? null,
      planRef: input.planRef ?? null,
      epoch: 0,
      seq: 0,
      state: PROVISIONAL_STATE,
      claimedAt: now,
      lastSeenAt: now,
      provisional: true,
      idempotencyKey,
    } satisfies LocalProjection);
    // A non-live projection (released, landed) may carry any seq: replacing it is the purpose of
    // this explicit claim, hence expectSeq rather than the order check.
    const result = await applyLocalProjection(wt, projection, {
      gitLock: true,
      expectSeq: local?.seq ?? null,
      allowedRoots: input.allowedRoots,
      lockReason: `provisionally owned by session ${projection.executionSessionId} (offline claim ${idempotencyKey})`,
    });
    if (result === 'written') return { status: 'claimed', projection };
    if (attempt >= 3) throw new GitSideError('git_failed', 'the local projection kept changing during the offline claim');
  }
}
