import { randomUUID } from 'node:crypto';
import { OwnershipError } from '../../contract/refusal';
import { REASONS, type ReasonCode } from '../../domain/reasons';
import { refusalOf } from '../../store/refused-messages';
import { withTemporal, type ServiceDeps } from './context';

/**
 * A signal answers nobody (landed, worktree-removed): it is sent under a message id of its own, and
 * the answer waits, up to landingWaitMs, for what the log makes of it: `recorded()` once it holds
 * the effect, or the refusal the workflow recorded under that id (thrown with its code). null: not
 * yet durable when the wait ran out (the caller answers `accepted`).
 */
export async function signalAndAwait<T>(
  deps: ServiceDeps,
  ownershipId: string,
  send: (messageId: string) => Promise<void>,
  recorded: () => Promise<T | null>,
): Promise<T | null> {
  const messageId = `sig_${randomUUID()}`;
  await withTemporal(deps, () => send(messageId));
  const deadline = Date.now() + (deps.landingWaitMs ?? 10_000);
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    const done = await recorded();
    if (done !== null) return done;
    const code = await refusalOf(deps.pool, ownershipId, messageId);
    if (code !== null) throw new OwnershipError(code in REASONS ? (code as ReasonCode) : 'invalid_state');
  }
  return null;
}
