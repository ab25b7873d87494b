import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { parsePrincipals, type PrincipalEntry, type PrincipalsFile } from './principals-file';
import { generateToken, hashesEqual, hashToken, MAX_TOKEN_LENGTH } from './tokens';

/**
 * Tokens for `npm start` on a developer machine when none are configured: one principal of each
 * kind. The principals file holds hashes only, like any other. The clear tokens go to a sibling
 * `<file>.secret.json`, mode 0600, for the local user's clients: that file is for the local trusted
 * dev machine ONLY and must never be committed, shared, or used for a deployment.
 */

export interface DevTokens {
  admin: string;
  landing: string;
  reader: string;
  executor: string;
}

export const DEV_WORKER_ID = 'dev-worker';
const KINDS = ['admin', 'landing', 'reader', 'executor'] as const;
const devId = (kind: (typeof KINDS)[number]) => `dev-${kind}`;

const SECRET_NOTE =
  'Clear bearer tokens of the dev principals in the sibling principals file. For the local trusted dev machine only: never commit, share or deploy them.';

const Token = z.string().min(32).max(MAX_TOKEN_LENGTH);
const SecretFileSchema = z.strictObject({
  note: z.string(),
  tokens: z.strictObject({ admin: Token, landing: Token, reader: Token, executor: Token }),
});

export function devSecretFile(file: string): string {
  return `${file}.secret.json`;
}

/** Idempotent: both files are reused while they exist and agree; otherwise both are regenerated. */
export function createDevTokens(file: string): DevTokens {
  const secretFile = devSecretFile(file);
  const existing = readExisting(file, secretFile);
  if (existing) {
    // An earlier run, or a copy, may have left them readable by others.
    chmodSync(file, 0o600);
    chmodSync(secretFile, 0o600);
    return existing;
  }
  const tokens: DevTokens = { admin: generateToken(), landing: generateToken(), reader: generateToken(), executor: generateToken() };
  const principals: PrincipalsFile = {
    principals: KINDS.map((kind): PrincipalEntry => ({
      id: devId(kind),
      kind,
      ...(kind === 'executor' ? { workerId: DEV_WORKER_ID } : {}),
      tokenSha256: hashToken(tokens[kind]),
    })),
  };
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
  // Secret first: a crash in between leaves a pair that does not agree, which the next run regenerates.
  writePrivate(secretFile, { note: SECRET_NOTE, tokens });
  writePrivate(file, principals);
  return tokens;
}

function readExisting(file: string, secretFile: string): DevTokens | null {
  if (!existsSync(file) || !existsSync(secretFile)) return null;
  try {
    const entries = parsePrincipals(readFileSync(file, 'utf8'), file);
    const secret = SecretFileSchema.parse(JSON.parse(readFileSync(secretFile, 'utf8')));
    if (entries.length !== KINDS.length) return null;
    for (const kind of KINDS) {
      const e = entries.find((x) => x.id === devId(kind));
      if (!e || e.kind !== kind || !hashesEqual(e.tokenSha256, hashToken(secret.tokens[kind]))) return null;
      if (kind === 'executor' && e.workerId !== DEV_WORKER_ID) return null;
    }
    return secret.tokens;
  } catch {
    return null;
  }
}

/** Atomic and private from the first byte: the file is created 0600 under a temporary name, then renamed. */
function writePrivate(target: string, value: unknown): void {
  const tmp = `${target}.${process.pid}.${generateToken().slice(0, 8)}.tmp`;
  try {
    writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    chmodSync(tmp, 0o600);
    renameSync(tmp, target);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // already renamed or never created
    }
    throw err;
  }
}
