import { readFileSync, statSync, type Stats } from 'node:fs';
import { z } from 'zod';
import { IdString, type Principal } from '../domain/identity';
import { SHA256_HEX_RE } from './tokens';

/**
 * The principals file (OD_TOKENS_FILE) and its inline twin (OD_TOKENS). It holds token HASHES only:
 * it may be read by anyone who may read the service's config, and it must never let them act.
 */

export class PrincipalsConfigError extends Error {
  override name = 'PrincipalsConfigError';
}

const TokenSha256 = z.string().regex(SHA256_HEX_RE, "must be the 64 lowercase hex digits of the token's SHA-256, never the token");

/** `system` is absent on purpose: it is the service acting for itself and is never authenticated by a token. */
export const PrincipalEntrySchema = z
  .strictObject({
    id: IdString,
    kind: z.enum(['executor', 'landing', 'admin', 'reader']),
    workerId: IdString.optional(),
    runId: IdString.optional(),
    tokenSha256: TokenSha256,
  })
  .superRefine((e, ctx) => {
    if (e.kind === 'executor' && e.workerId === undefined) {
      ctx.addIssue({ code: 'custom', path: ['workerId'], message: 'an executor principal must name the workerId it acts for' });
    }
    if (e.kind !== 'executor') {
      for (const k of ['workerId', 'runId'] as const) {
        if (e[k] !== undefined)
          ctx.addIssue({ code: 'custom', path: [k], message: `only executor principals are bound to a worker; ${e.kind} must not have ${k}` });
      }
    }
  });
export type PrincipalEntry = z.infer<typeof PrincipalEntrySchema>;

export const PrincipalsFileSchema = z.strictObject({ principals: z.array(PrincipalEntrySchema).min(1).max(10_000) }).superRefine((f, ctx) => {
  for (const p of duplicateProblems(f.principals)) ctx.addIssue({ code: 'custom', path: ['principals'], message: p });
});
export type PrincipalsFile = z.infer<typeof PrincipalsFileSchema>;

/** Duplicate ids would make audit lines ambiguous; duplicate hashes would make one token two principals. */
export function duplicateProblems(entries: readonly PrincipalEntry[]): string[] {
  const problems: string[] = [];
  const ids = new Map<string, number>();
  const hashes = new Map<string, number>();
  entries.forEach((e, i) => {
    const id = ids.get(e.id);
    if (id !== undefined) problems.push(`duplicate principal id "${e.id}" (entries ${id} and ${i})`);
    else ids.set(e.id, i);
    // The hash is not echoed: it is not a secret, but there is no reason to spread it either.
    const h = hashes.get(e.tokenSha256);
    if (h !== undefined) problems.push(`entries ${h} and ${i} have the same tokenSha256: every principal needs its own token`);
    else hashes.set(e.tokenSha256, i);
  });
  return problems;
}

export function toPrincipal(e: PrincipalEntry): Principal {
  if (e.kind !== 'executor') return { kind: e.kind, id: e.id };
  return { kind: e.kind, id: e.id, workerId: e.workerId, ...(e.runId !== undefined ? { runId: e.runId } : {}) };
}

/** `source` names where the text came from, for the error message; the text itself is never quoted. */
export function parsePrincipals(text: string, source: string): PrincipalEntry[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // JSON.parse's own message quotes the input, which could be a misplaced clear token.
    throw new PrincipalsConfigError(`${source}: not valid JSON`);
  }
  const parsed = PrincipalsFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ');
    throw new PrincipalsConfigError(`${source}: invalid principals: ${issues}`);
  }
  return parsed.data.principals;
}

const MAX_FILE_BYTES = 4 * 1024 * 1024;

export function readPrincipalsFile(file: string): PrincipalEntry[] {
  let st: Stats;
  try {
    st = statSync(file);
  } catch {
    throw new PrincipalsConfigError(`OD_TOKENS_FILE ${file}: cannot be read`);
  }
  if (!st.isFile() || st.size > MAX_FILE_BYTES)
    throw new PrincipalsConfigError(`OD_TOKENS_FILE ${file}: not a regular file of at most ${MAX_FILE_BYTES} bytes`);
  // Anyone who can write this file can make themselves admin.
  if (process.platform !== 'win32' && (st.mode & 0o002) !== 0) throw new PrincipalsConfigError(`OD_TOKENS_FILE ${file}: is world-writable; chmod o-w it`);
  return parsePrincipals(readFileSync(file, 'utf8'), `OD_TOKENS_FILE ${file}`);
}
