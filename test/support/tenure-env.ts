import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { tenureSecret } from '../../src/keys/tenure';
import { readKeyringIfPresent } from '../../src/keys/message-seal';

/**
 * The tenure secret `session` runs git with in `worktree` now (docs/operations.md#the-tenure-proof),
 * for tests whose sessions bound through OwnershipClient and so hold no API answer to take it from:
 * derived from the run's service key and the tenure the worktree's projection names, as the API
 * derives it. For a session that does not hold the worktree it is no tenure's secret there and
 * matches no hash, as such an agent's own would not. Undefined without a projection or a key.
 */
export function tenureSecretFor(worktree: string, session: string): string | undefined {
  const key = (name: string): string | null => {
    try {
      return execFileSync('git', ['config', '--worktree', '--includes', '--get', name], {
        cwd: worktree,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    } catch {
      return null;
    }
  };
  const ownershipId = key('overdeck.owner.ownership-id');
  const epoch = key('overdeck.owner.epoch');
  const keyring = readKeyringIfPresent({ serviceKeyFile: process.env.OD_SERVICE_KEY_FILE ?? '', dataDir: process.env.OD_TEST_TMP ?? os.tmpdir() });
  if (!ownershipId || !epoch || !/^\d+$/.test(epoch) || !keyring) return undefined;
  return tenureSecret(keyring.sealing.key, { ownershipId, epoch: Number(epoch), executionSessionId: session });
}

/**
 * `env` with the session's tenure secret beside its id (any inherited secret dropped): what an owner
 * agent runs git with. Without a session id, `env` is a person's and keeps the secret it was given.
 */
export function withTenureSecret<E extends Record<string, string | undefined>>(worktree: string, env: E): E {
  const session = env.OVERDECK_EXECUTION_SESSION_ID;
  if (!session) return env;
  const out: Record<string, string | undefined> = { ...env };
  delete out.OVERDECK_TENURE_SECRET;
  const secret = tenureSecretFor(worktree, session);
  if (secret !== undefined) out.OVERDECK_TENURE_SECRET = secret;
  return out as E;
}
