import { ulid } from 'ulidx';
import { authorizeForWorker } from '../../auth/policy';
import { OwnershipError } from '../../contract/refusal';
import type { EndHoldBody, GrantHoldBody, GrantHoldResponse, HoldHeartbeatBody, OwnershipViewOut, TenureOut } from '../../contract/http';
import type { Principal } from '../../domain/identity';
import { refusal } from '../../domain/reasons';
import type { HoldTenure } from '../../domain/tenure';
import { holdTenureSecret } from '../../keys/tenure';
import { getOwnership } from '../../store/lookups';
import { authorizeOp, redact, throwRefusal, withTemporal, type ServiceDeps } from './context';
import { proofOf } from './tenure';
import type { MessageContext } from './messages';
import { enforced, openRef, ownerRefRow, seenHost, sent, waitFor } from './ownerships';

/**
 * Child holds through the API (docs/ownership-record.md#child-holds). The workflow decides each
 * (grantHold, endHold); the service authorizes (an executor for the ownership's own worker, an
 * admin), names the hold, and hands the child its tenure proof with the grant's answer.
 */

/** The hold's id: the message's, so a retry under the same Idempotency-Key names the same hold (and is answered alike). */
const holdIdOf = (ctx: MessageContext): string => `hld_${(ctx.messageId ?? `msg_${ulid()}`).replace(/^msg_/, '')}`;

/** The child's proof (src/keys/tenure.ts holdTenureSecret): derived, never stored, sent to Temporal or logged. */
export function holdTenureProof(deps: ServiceDeps, t: HoldTenure): TenureOut {
  return proofOf(holdTenureSecret(deps.keyring().sealing.key, t), t);
}

export async function grantHold(
  deps: ServiceDeps,
  principal: Principal,
  ownershipId: string,
  body: GrantHoldBody,
  ctx: MessageContext = {},
): Promise<GrantHoldResponse> {
  const { ref, row } = await ownerRefRow(deps, principal, 'grantHold', ownershipId);
  const holdId = holdIdOf(ctx);
  const seen = await seenHost(deps, row.hostId);
  const granted = await deps.client.grantHold(
    ref,
    {
      executionSessionId: body.executionSessionId,
      epoch: body.epoch,
      childExecutionSessionId: body.childExecutionSessionId,
      ...(body.runtime !== undefined ? { runtime: body.runtime } : {}),
      ...(body.leaseTtlMs !== undefined ? { leaseTtlMs: body.leaseTtlMs } : {}),
      holdId,
      principal,
    },
    { ...sent(deps, ctx), ...waitFor(seen) },
  );
  const answered = await enforced(deps, redact(principal, granted));
  const hold = answered.holds?.find((h) => h.holdId === holdId && h.executionSessionId === body.childExecutionSessionId);
  return {
    ...answered,
    holdId,
    tenure: hold ? holdTenureProof(deps, { ownershipId, epoch: hold.epoch, holdId, executionSessionId: hold.executionSessionId }) : null,
  };
}

/**
 * A child's heartbeat: a signal (nothing to wait for). The record answers what the signal cannot:
 * a hold that has ended (`not_found`), another session's (`not_owner`), another epoch's.
 */
export async function holdHeartbeat(
  deps: ServiceDeps,
  principal: Principal,
  ownershipId: string,
  holdId: string,
  body: HoldHeartbeatBody,
): Promise<{ accepted: true }> {
  authorizeOp(principal, 'holdHeartbeat');
  const { ref } = await openRef(deps, ownershipId);
  const record = await getOwnership(deps.pool, { ownershipId });
  if (!record) throw new OwnershipError('not_found');
  if (principal.kind === 'executor') throwRefusal(authorizeForWorker(principal, record.worker?.workerId ?? null, record.worker?.runId ?? null));
  const hold = record.holds?.find((h) => h.holdId === holdId);
  if (!hold) throwRefusal(refusal('not_found', { holdId }));
  if (hold!.executionSessionId !== body.executionSessionId) throwRefusal(refusal('not_owner', { holdId }));
  if (hold!.epoch !== body.epoch) throwRefusal(refusal('stale_epoch', { currentEpoch: hold!.epoch }));
  await withTemporal(deps, () => deps.client.holdHeartbeat(ref, { holdId, executionSessionId: body.executionSessionId, epoch: body.epoch }));
  return { accepted: true };
}

export async function endHold(
  deps: ServiceDeps,
  principal: Principal,
  ownershipId: string,
  holdId: string,
  body: EndHoldBody,
  ctx: MessageContext = {},
): Promise<OwnershipViewOut> {
  authorizeOp(principal, 'endHold');
  if (body.force === true && principal.kind !== 'admin') throw new OwnershipError('force_requires_admin');
  if (body.force === true && !body.reason?.trim()) throw new OwnershipError('force_requires_reason');
  const { ref, row } = await openRef(deps, ownershipId);
  if (principal.kind === 'executor') throwRefusal(authorizeForWorker(principal, row.ownerWorkerId, row.ownerRunId));
  const seen = await seenHost(deps, row.hostId);
  const ended = await deps.client.endHold(ref, { ...body, holdId, principal }, { ...sent(deps, ctx), ...waitFor(seen) });
  return enforced(deps, redact(principal, ended));
}
