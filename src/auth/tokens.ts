import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Bearer tokens. Only their SHA-256 is ever kept: the principals file, the authenticator and the
 * logs hold hashes, so a leaked file or heap dump does not hand out credentials.
 */

/** Longer headers are refused before hashing, so a client cannot make us hash megabytes per request. */
export const MAX_TOKEN_LENGTH = 512;

export const SHA256_HEX_RE = /^[0-9a-f]{64}$/;

/** RFC 6750 b64token: also keeps whitespace and control characters out of anything we hash. */
const B64TOKEN_RE = /^[A-Za-z0-9\-._~+/]+=*$/;
const BEARER_RE = /^bearer +(\S+)$/i;

export function hashToken(token: string): string {
  return hashTokenBytes(token).toString('hex');
}

export function hashTokenBytes(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Constant-time equality of two hex SHA-256 digests; false (never a throw) on a malformed input. */
export function hashesEqual(a: string, b: string): boolean {
  if (!SHA256_HEX_RE.test(a) || !SHA256_HEX_RE.test(b)) return false;
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

/** 256 bits of randomness, URL- and header-safe. */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The token of an `Authorization: Bearer <token>` header, or null when the header is absent or malformed. */
export function parseBearer(authorization: string | undefined): string | null {
  if (typeof authorization !== 'string' || authorization.length > MAX_TOKEN_LENGTH + 16) return null;
  const m = BEARER_RE.exec(authorization);
  if (!m) return null;
  const token = m[1];
  if (token.length > MAX_TOKEN_LENGTH || !B64TOKEN_RE.test(token)) return null;
  return token;
}
