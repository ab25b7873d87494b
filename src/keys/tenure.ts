import { createHash, createHmac } from 'node:crypto';
import { isHoldTenure, TENURE_SECRET_PREFIX, type HoldTenure, type Tenure } from '../domain/tenure';

/**
 * The tenure secret, derived from the service key and the tenure, never stored: whoever holds the
 * key (the API, the host agent) answers the same secret and writes the same hash for the same
 * tenure, on a replayed or repeated bind too. The names and shapes are src/domain/tenure.ts.
 */
const DOMAIN = 'overdeck-tenure-v1';

/** The secret key K hands out for a tenure: prefix + base64url (no padding) of HMAC-SHA256(K, domain, ownership, epoch, session). */
export function tenureSecret(key: Uint8Array, t: Tenure): string {
  const mac = createHmac('sha256', key).update(`${DOMAIN}\n${t.ownershipId}\n${t.epoch}\n${t.executionSessionId}`).digest('base64url');
  return `${TENURE_SECRET_PREFIX}${mac}`;
}

/**
 * A child hold's secret (docs/ownership-record.md#child-holds): derived like the owner's, scoped
 * to the ownership, the parent's epoch, the hold and the child session, under a domain of its own,
 * so no owner's secret is ever a child's or the other way round. Never stored or logged.
 */
const HOLD_DOMAIN = 'overdeck-hold-tenure-v1';

export function holdTenureSecret(key: Uint8Array, t: HoldTenure): string {
  const mac = createHmac('sha256', key).update(`${HOLD_DOMAIN}\n${t.ownershipId}\n${t.epoch}\n${t.holdId}\n${t.executionSessionId}`).digest('base64url');
  return `${TENURE_SECRET_PREFIX}${mac}`;
}

/** The hash words of a child's secret under each key, the sealing key first (as tenureHashWords). */
export function holdTenureHashWords(keys: readonly Uint8Array[], t: HoldTenure): string {
  if (keys.length === 0) throw new Error('holdTenureHashWords: no key');
  return keys.map((k) => tenureSecretHash(holdTenureSecret(k, t))).join(' ');
}

/**
 * What the hooks compute from OVERDECK_TENURE_SECRET (hooks/overdeck-guard.sh od_mine): the
 * lowercase hex SHA-256 of the secret and a newline, which is what `sha256sum <<EOF` reads. The
 * newline is the price of one process fewer per judged git command than `printf | sha256sum`.
 */
export function tenureSecretHash(secret: string): string {
  return createHash('sha256').update(`${secret}\n`, 'utf8').digest('hex');
}

/**
 * The value of `overdeck.owner.tenure-hash`: the hash of each key's secret, space separated, the
 * sealing key first. Every key of the keyring, so that an owner whose secret came from a key that
 * is now second (a key rotated in since) is not locked out of its own worktree.
 */
export function tenureHashWords(keys: readonly Uint8Array[], t: Tenure): string {
  if (keys.length === 0) throw new Error('tenureHashWords: no key');
  return keys.map((k) => tenureSecretHash(tenureSecret(k, t))).join(' ');
}

/** The words of either: an owner's tenure (tenureHashWords) or a child hold's (holdTenureHashWords), told apart by its holdId. */
export function anyTenureHashWords(keys: readonly Uint8Array[], t: Tenure | HoldTenure): string {
  return isHoldTenure(t) ? holdTenureHashWords(keys, t) : tenureHashWords(keys, t);
}
