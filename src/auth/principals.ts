import { timingSafeEqual } from 'node:crypto';
import type { Principal } from '../domain/identity';
import { duplicateProblems, PrincipalsConfigError, parsePrincipals, readPrincipalsFile, toPrincipal, type PrincipalEntry } from './principals-file';
import { hashTokenBytes, parseBearer } from './tokens';

/**
 * Bearer-token authentication for the HTTP API and the MCP server (docs/identities.md#principals). The
 * authenticator holds principals and token hashes only; a clear token lives for one call.
 */

export {
  PrincipalEntrySchema,
  PrincipalsConfigError,
  PrincipalsFileSchema,
  parsePrincipals,
  readPrincipalsFile,
  type PrincipalEntry,
  type PrincipalsFile,
} from './principals-file';
export { createDevTokens, DEV_WORKER_ID, devSecretFile, type DevTokens } from './dev-tokens';

export interface Authenticator {
  /** The principal of an `Authorization` header value, or null (missing, malformed or unknown token). */
  authenticate(authorization: string | undefined): Principal | null;
  principals(): readonly Principal[];
}

export interface AuthenticatorOptions {
  /** OD_TOKENS_FILE */
  tokensFile?: string;
  /** OD_TOKENS: the same JSON as the file, inline */
  tokensJson?: string;
}

/**
 * Both sources may be given; their principals are merged and must stay unique across them.
 * Neither is a configuration error: a service that authenticates nobody is never what was meant.
 */
export function loadAuthenticator(opts: AuthenticatorOptions): Authenticator {
  if (!opts.tokensFile && !opts.tokensJson) throw new PrincipalsConfigError('no principals configured: set OD_TOKENS_FILE or OD_TOKENS');
  const entries: PrincipalEntry[] = [];
  if (opts.tokensFile) entries.push(...readPrincipalsFile(opts.tokensFile));
  if (opts.tokensJson) entries.push(...parsePrincipals(opts.tokensJson, 'OD_TOKENS'));
  const problems = duplicateProblems(entries);
  if (problems.length > 0) throw new PrincipalsConfigError(`OD_TOKENS_FILE + OD_TOKENS: ${problems.join('; ')}`);
  return createAuthenticator(entries);
}

export function createAuthenticator(entries: readonly PrincipalEntry[]): Authenticator {
  const table = entries.map((e) => ({ hash: Buffer.from(e.tokenSha256, 'hex'), principal: Object.freeze(toPrincipal(e)) }));
  const list: readonly Principal[] = Object.freeze(table.map((t) => t.principal));
  return {
    authenticate(authorization) {
      const token = parseBearer(authorization);
      if (token === null) return null;
      const presented = hashTokenBytes(token);
      // Every entry is compared, with no early exit: the time taken does not say which one matched.
      let found: Principal | null = null;
      for (const t of table) {
        const equal = timingSafeEqual(t.hash, presented);
        if (equal && found === null) found = t.principal;
      }
      return found;
    },
    principals: () => list,
  };
}
