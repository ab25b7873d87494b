import { writeFileSync } from 'node:fs';
import { generateToken, hashToken } from '../src/auth/tokens';

export interface ExecutorPrincipal {
  workerId: string;
  token: string;
}

export interface Tokens {
  admin: string;
  landing: string;
  reader: string;
  executors: ExecutorPrincipal[];
}

/**
 * A run's principals: an admin, a landing controller, a reader and `executors` executors (worker
 * ids `<prefix>-<tag>-w<i>`), written as hashes to `file`; the clear tokens stay in this process.
 */
export function writePrincipals(file: string, tag: string, executors: number, prefix: string): Tokens {
  const execs = Array.from({ length: executors }, (_, i) => ({ workerId: `${prefix}-${tag}-w${i}`, token: generateToken() }));
  const tokens = { admin: generateToken(), landing: generateToken(), reader: generateToken(), executors: execs };
  const principals = [
    { id: `admin-${tag}`, kind: 'admin', tokenSha256: hashToken(tokens.admin) },
    { id: `landing-${tag}`, kind: 'landing', tokenSha256: hashToken(tokens.landing) },
    { id: `reader-${tag}`, kind: 'reader', tokenSha256: hashToken(tokens.reader) },
    ...execs.map((e, i) => ({ id: `exec-${tag}-${i}`, kind: 'executor', workerId: e.workerId, tokenSha256: hashToken(e.token) })),
  ];
  writeFileSync(file, JSON.stringify({ principals }), { mode: 0o600 });
  return tokens;
}
