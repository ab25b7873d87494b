/**
 * The tenure proof's names and shapes (docs/git-projection.md#keys): the owner of a tenure proves it
 * to the hooks and the git gate with a secret in OVERDECK_TENURE_SECRET, and the worktree holds only
 * its SHA-256 (`overdeck.owner.tenure-hash`). The derivation itself (HMAC over the service key) is
 * src/keys/tenure.ts; this module is what the contract and the projection format check against.
 */

/** Marks the secret's format: a later derivation gets another prefix, never a second meaning of this one. */
export const TENURE_SECRET_PREFIX = 'odt1_';

/** One tenure: who holds which lifecycle of a worktree, from which owner change on. */
export interface Tenure {
  ownershipId: string;
  epoch: number;
  executionSessionId: string;
}

/** Lowercase hex SHA-256 digests, space separated (at most 31: a projection value holds 2048 characters): `overdeck.owner.tenure-hash`. */
export const TENURE_HASH_WORDS = /^[0-9a-f]{64}(?: [0-9a-f]{64}){0,30}$/;

/** A tenure secret as handed out: the prefix and 43 base64url characters (32 bytes). */
export const TENURE_SECRET = /^odt1_[A-Za-z0-9_-]{43}$/;

/** Child holds per ownership at most (docs/failure-bounds.md): the record, its history and the projection stay bounded. */
export const MAX_HOLDS = 8;

/** A child hold's tenure (docs/ownership-record.md#child-holds): the parent's, narrowed to one hold and its child session. */
export interface HoldTenure extends Tenure {
  holdId: string;
}

/** A child hold's tenure rather than an owner's: it names its hold. */
export function isHoldTenure(t: Tenure | HoldTenure): t is HoldTenure {
  return 'holdId' in t && typeof t.holdId === 'string';
}

/**
 * Who may write in a worktree, as its local projection says: the owner's session with its tenure
 * hash words, and each live child hold's session with its own. The hash words are what
 * src/keys/tenure.ts wrote (one per key of the keyring).
 */
export interface ProjectedHolders {
  owner: { executionSessionId: string; tenureHash: string } | null;
  holds: ReadonlyArray<{ holdId: string; executionSessionId: string; tenureHash: string }>;
}

export type Standing = { as: 'owner' } | { as: 'child'; holdId: string } | null;

/**
 * Whether a session proving a tenure hash (the SHA-256 of its OVERDECK_TENURE_SECRET, as the hooks
 * compute it) holds the worktree, as its owner or as a child under a hold; null: neither. The session
 * and the hash must both be the holder's: a child's secret passes for that child only, never for the
 * owner or another child. Pure, for the gate and the hooks' judge.
 */
export function standingOf(projected: ProjectedHolders, executionSessionId: string, tenureHash: string): Standing {
  if (!/^[0-9a-f]{64}$/.test(tenureHash)) return null;
  const proves = (words: string) => words.split(' ').includes(tenureHash);
  const o = projected.owner;
  if (o !== null && o.executionSessionId === executionSessionId && proves(o.tenureHash)) return { as: 'owner' };
  const hold = projected.holds.find((h) => h.executionSessionId === executionSessionId && proves(h.tenureHash));
  return hold === undefined ? null : { as: 'child', holdId: hold.holdId };
}
