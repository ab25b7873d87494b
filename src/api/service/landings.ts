import type { Pool } from '../../store/db';
import { signalAndAwait } from './signalled';
import { OwnershipError } from '../../contract/refusal';
import type { LandingReceipt } from '../../domain/events';
import type { Principal } from '../../domain/identity';
import { scanLandings, type ScanInput, type ScanReport } from '../../landings/scan';
import { getOwnership, landingCandidates } from '../../store/lookups';
import { storedLandingReceipt } from '../../store/ownership-rows';
import { pickLandingSource } from '../../domain/branch';
import type { OwnershipRecord } from '../../domain/projection';
import { GitSideError } from '../../git/errors';
import { REASONS, type ReasonCode } from '../../domain/reasons';
import type { LandedBody, LandingBody, LandingResponse } from '../../contract/http';
import { authorizeOp, ownershipRow, redact, type ServiceDeps } from './context';

/**
 * Landing receipts (docs/events.md). `landed` is a signal, idempotent on (ownershipId, landedHead); the
 * answer says whether the receipt is already durable, so a landing controller can rely on it.
 */

async function landOn(deps: ServiceDeps, principal: Principal, ownershipId: string, fields: LandedBody): Promise<LandingResponse> {
  const done = (receipt: LandingReceipt): LandingResponse => redact(principal, { status: 'recorded', ownershipId, receipt });
  const existing = await storedLandingReceipt(deps.pool, ownershipId, fields.landedHead);
  if (existing) return done(existing);
  const row = await ownershipRow(deps, ownershipId);
  if (row.state === 'closed') throw new OwnershipError('ownership_closed', undefined, { state: row.state });
  const receipt = await signalAndAwait(
    deps,
    ownershipId,
    (messageId) => deps.client.landed({ workflowId: row.workflowId, ownershipId }, { ...fields, principal }, { messageId }),
    () => storedLandingReceipt(deps.pool, ownershipId, fields.landedHead),
  );
  return receipt ? done(receipt) : { status: 'accepted', ownershipId, receipt: null };
}

/** POST /v1/ownerships/:id/landed */
export async function landed(deps: ServiceDeps, principal: Principal, ownershipId: string, body: LandedBody): Promise<LandingResponse> {
  authorizeOp(principal, 'landed');
  return landOn(deps, principal, ownershipId, body);
}

/** POST /v1/landings: the landing controller's form, by ownershipId or by (repoRoot, sourceBranch). */
export async function land(deps: ServiceDeps, principal: Principal, body: LandingBody): Promise<LandingResponse> {
  authorizeOp(principal, 'landed');
  const repoRoot = body.repoRoot === undefined ? undefined : await deps.client.normalize(body.repoRoot);
  const record =
    body.ownershipId !== undefined
      ? await getOwnership(deps.pool, { ownershipId: body.ownershipId })
      : await bySourceBranch(deps, repoRoot!, body.sourceBranch!);
  if (!record) throw new OwnershipError('not_found');
  // Whatever names the source must agree with the ownership it resolves to.
  if (body.sourceBranch !== undefined && !record.branchNames.includes(body.sourceBranch))
    throw new OwnershipError('worktree_mismatch', undefined, { branch: record.branch });
  if (repoRoot !== undefined && repoRoot !== record.repoRoot) throw new OwnershipError('worktree_mismatch');
  const { sourceHead, landedBranch, landedHead, landedAt } = body;
  return landOn(deps, principal, record.ownershipId, { sourceHead, landedBranch, landedHead, landedAt });
}

/**
 * The ownership a landing by (repository, source branch) lands on: one, or `ambiguous` naming the
 * candidates (src/domain/branch.ts pickLandingSource), never the latest of several holders.
 */
async function bySourceBranch(deps: ServiceDeps, repoRoot: string, branch: string): Promise<OwnershipRecord | null> {
  const picked = pickLandingSource(await landingCandidates(deps.pool, repoRoot, branch));
  if (picked && 'ambiguous' in picked) throw new OwnershipError('ambiguous', undefined, { candidates: picked.ambiguous.map((c) => c.ownershipId) });
  return picked?.one.record ?? null;
}

/** POST /v1/landings/scan: the repository is opened on this host, only under the allowed roots (normalize checks them). */
export async function scan(deps: { pool: Pool; normalize: (p: string) => Promise<string> }, principal: Principal, body: ScanInput): Promise<ScanReport> {
  authorizeOp(principal, 'landed');
  const repo = await deps.normalize(body.repo);
  try {
    return redact(principal, await scanLandings(deps.pool, { ...body, repo }));
  } catch (err) {
    // What git says of the path is the caller's to fix (not a repository, gone): a refusal, never a 500.
    if (err instanceof GitSideError) throw new OwnershipError(err.code in REASONS ? (err.code as ReasonCode) : 'invalid_input', undefined, { field: 'repo' });
    throw err;
  }
}
