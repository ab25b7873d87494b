import type { OwnershipRecord } from '../domain/projection';
import type { LocalProjection } from '../git/projection';
import { localProjectionOf, NO_TENURE_HASHES } from '../git/record';

export type Classification =
  | { kind: 'in_sync' | 'unowned'; reason: null }
  | { kind: 'behind'; reason: 'missing' | 'older_seq' | 'older_ownership' | 'ended' }
  | { kind: 'stale'; reason: 'other_ownership' | 'unknown_to_service' }
  | { kind: 'corrupt'; reason: 'unparseable' | 'same_seq_mismatch' | 'ahead_of_durable' };

const OWNERSHIP_ID = /^own_[0-9A-HJKMNP-TV-Z]{26}$/;

/** Ownership ids are `own_<ULID>`: the ULID's leading timestamp orders lifecycles of one worktree. */
export function isOlderOwnership(local: string, durable: string): boolean {
  return OWNERSHIP_ID.test(local) && OWNERSHIP_ID.test(durable) && local < durable;
}

/** Fields a guard or a reader acts on; the two timestamps are display only and not compared. */
const COMPARED = [
  'ownershipId',
  'executionSessionId',
  'runtime',
  'conversationId',
  'conversationUrl',
  'workerId',
  'runId',
  'lane',
  'planRef',
  'epoch',
  'seq',
  'state',
] as const;

export function sameProjection(a: LocalProjection, b: LocalProjection): boolean {
  return COMPARED.every((k) => (a[k] ?? null) === (b[k] ?? null)) && (a.provisional ?? false) === (b.provisional ?? false);
}

/**
 * Pure comparison of the local projection with the durable record (docs/git-projection.md#reconciliation). A version is
 * (ownership, seq): local lower than durable is merely behind, and catching it up is what the host
 * agent would do anyway; local equal with other content, or ahead, or naming an ownership the
 * durable record does not lead to, is stale/corrupt and only an explicit repair rewrites it.
 */
export function classify(local: LocalProjection | null | 'corrupt', durable: OwnershipRecord | null): Classification {
  if (local === 'corrupt') return { kind: 'corrupt', reason: 'unparseable' };
  // The tenure hash is not compared: it is derived, and a writer without the key leaves it out.
  const target = durable === null ? null : localProjectionOf(durable, NO_TENURE_HASHES);
  if (durable === null || target === null || (target.projection === null && !target.ended)) {
    return local === null ? { kind: 'unowned', reason: null } : { kind: 'stale', reason: 'unknown_to_service' };
  }
  if (target.ended) {
    if (local === null) return { kind: 'unowned', reason: null };
    if (local.ownershipId === durable.ownershipId) {
      return local.seq <= durable.seq ? { kind: 'behind', reason: 'ended' } : { kind: 'corrupt', reason: 'ahead_of_durable' };
    }
    return isOlderOwnership(local.ownershipId, durable.ownershipId) ? { kind: 'behind', reason: 'ended' } : { kind: 'stale', reason: 'other_ownership' };
  }
  const expected = target.projection!;
  if (local === null) return { kind: 'behind', reason: 'missing' };
  if (local.ownershipId === durable.ownershipId) {
    if (local.seq < durable.seq) return { kind: 'behind', reason: 'older_seq' };
    if (local.seq > durable.seq) return { kind: 'corrupt', reason: 'ahead_of_durable' };
    return sameProjection(local, expected) ? { kind: 'in_sync', reason: null } : { kind: 'corrupt', reason: 'same_seq_mismatch' };
  }
  return isOlderOwnership(local.ownershipId, durable.ownershipId)
    ? { kind: 'behind', reason: 'older_ownership' }
    : { kind: 'stale', reason: 'other_ownership' };
}
