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
