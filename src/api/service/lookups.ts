import { OwnershipError } from '../../contract/refusal';
import { attemptsOf, disputesOf } from '../../store/attributions';
import type { BranchStatus } from '../../domain/branch';
import type { Principal } from '../../domain/identity';
import type { OwnershipRecord } from '../../domain/projection';
import { isHeldState } from '../../domain/states';
import { ownershipWorkflowId } from '../../ids/workflow-id';
import { getHistory, getOwnership, listOwnerships } from '../../store/lookups';
import type { GetOwnershipInput, HistoryInput } from '../../contract/lookups';
import { provenance as resolveProvenance, type Provenance } from '../../provenance/provenance';
import { refusedMessagesOf } from '../../store/refused-messages';
import { overridesOf } from '../../store/overrides';
import { lateAttemptsOf } from '../../store/late-work-lookup';
import { workflowIdsOf } from '../../store/ownership-rows';
import type { Enforcement, GetQuery, HistoryQuery, ListQuery, ListResponse, Liveness, WireRecord, HistoryResponse } from '../../contract/http';
import { projectionOf } from '../../workflows/messages';
import { enforcementOf } from './host-presence';
import { livenessOfView } from './live';
import { livenessOfRecord } from '../../domain/liveness';
import { authorizeOp, redact, withTemporal, type ServiceDeps } from './context';
import { headsOf, newerBranch } from '../../store/worktree-heads';
import { heardOf, withHeard } from '../../store/heartbeats';

/** Read-only lookups (docs/operations.md, Lookups), served from PostgreSQL. Paths get the spelling bind gave them. */

const LIVENESS_QUERY_MS = 3_000;
const LIVENESS_CONCURRENCY = 8;

async function norm(deps: ServiceDeps, p: string | undefined): Promise<string | undefined> {
  return p === undefined ? undefined : deps.client.normalize(p);
}

export async function get(deps: ServiceDeps, principal: Principal, q: GetQuery): Promise<WireRecord> {
  authorizeOp(principal, 'get');
  let by: GetOwnershipInput;
  if (q.ownershipId !== undefined) by = { ownershipId: q.ownershipId };
  else if (q.worktreePath !== undefined) by = { worktreePath: (await norm(deps, q.worktreePath))! };
  else {
    const repoRoot = await norm(deps, q.repoRoot);
    by = { branch: q.branch!, ...(repoRoot !== undefined ? { repoRoot } : {}) };
  }
  const record = await getOwnership(deps.pool, by);
  if (!record) throw new OwnershipError('not_found');
  return redact(principal, record);
}

export async function list(deps: ServiceDeps, principal: Principal, q: ListQuery): Promise<ListResponse> {
  authorizeOp(principal, 'list');
  const repoRoot = await norm(deps, q.repoRoot);
  const page = await listOwnerships(deps.pool, {
    ...(repoRoot !== undefined ? { repoRoot } : {}),
    ...(q.state !== undefined ? { state: q.state } : {}),
    ...(q.limit !== undefined ? { limit: q.limit } : {}),
    ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
  });
  const items = q.liveness ? await withLiveness(deps, page.items) : page.items.map((r) => ({ ...r, liveness: null, branchStatus: null }));
  return redact(principal, { items, nextCursor: page.nextCursor });
}

/**
 * Each live ownership's liveness (and the host agent's branch status) from its workflow, bounded
 * in time and concurrency; null when it cannot answer. The workflow is the one the ownerships
 * table names: a lifecycle started by an earlier version has another id than today's derivation.
 */
type LiveItem = OwnershipRecord & { liveness: Liveness | null; branchStatus: BranchStatus | null; enforcement?: Enforcement | null };
async function withLiveness(deps: ServiceDeps, items: OwnershipRecord[]): Promise<LiveItem[]> {
  const out: LiveItem[] = items.map((r) => ({ ...r, liveness: null, branchStatus: null, ...(deps.hostPresence ? { enforcement: null } : {}) }));
  const live = out.filter((r) => isHeldState(r.state));
  const ids = await workflowIdsOf(
    deps.pool,
    live.map((r) => r.ownershipId),
  );
  let next = 0;
  const worker = async () => {
    while (next < live.length) {
      const item = live[next++]!;
      try {
        const workflowId = ids.get(item.ownershipId) ?? ownershipWorkflowId(item.hostId, item.worktreePath);
        const v = await withTemporal(deps, () => deps.client.liveState({ workflowId, ownershipId: item.ownershipId }), LIVENESS_QUERY_MS);
        item.liveness = await livenessOfView(deps, v, item);
        if (v) {
          item.branchStatus = v.projectionSync.branch ?? null;
          // Whether the worktree's host enforces this record yet, and whether its agent is there to.
          if (deps.hostPresence) item.enforcement = enforcementOf(projectionOf(v.projectionSync, item.seq), await deps.hostPresence.of(item.hostId));
        }
      } catch {
        // unknown stays null: rendered `unknown`, never guessed (a stale record says its verdict itself)
        item.liveness = livenessOfRecord(null, [], item);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(LIVENESS_CONCURRENCY, live.length) }, worker));
  // A commit made since the last projection write: the journal's head is newer.
  const heads = await headsOf(
    deps.pool,
    live.map((r) => r.ownershipId),
  );
  const heard = await heardOf(
    deps.pool,
    live.map((r) => r.ownershipId),
  );
  for (const item of live) {
    item.branchStatus = newerBranch(item.branchStatus, heads.get(item.ownershipId));
    if (item.liveness) item.liveness = withHeard(item.liveness, item, heard.get(item.ownershipId));
  }
  return out;
}

export async function history(deps: ServiceDeps, principal: Principal, q: HistoryQuery): Promise<HistoryResponse> {
  authorizeOp(principal, 'history');
  let by: HistoryInput;
  if (q.ownershipId !== undefined) by = { ownershipId: q.ownershipId };
  else if (q.worktreePath !== undefined) by = { worktreePath: (await norm(deps, q.worktreePath))! };
  else if (q.landedCommit !== undefined) by = { landedCommit: q.landedCommit };
  else {
    const repoRoot = await norm(deps, q.repoRoot);
    by = { branch: q.branch!, ...(repoRoot !== undefined ? { repoRoot } : {}) };
  }
  const found = await getHistory(deps.pool, by);
  // Refused attempts (hooks, agent git wrapper) beside each ownership's events.
  // Messages refused for want of a seal, too: someone tried to act on the ownership outside the service.
  const ownerships = [];
  const ids = found.ownerships.map((o) => o.ownershipId);
  const refused = await refusedMessagesOf(deps.pool, ids);
  // And the overrides: people who stepped into an owner's worktree, with why.
  const overrides = await overridesOf(deps.pool, ids);
  // And an older tenure's late work, which the host agent preserved before the newer projection.
  const late = await lateAttemptsOf(deps.pool, ids);
  for (const o of found.ownerships) {
    ownerships.push({
      ...o,
      attempts: await attemptsOf(deps.pool, { ownershipIds: [o.ownershipId] }),
      lateAttempts: late.get(o.ownershipId) ?? [],
      disputes: await disputesOf(deps.pool, [o.ownershipId]),
      refusedMessages: refused.get(o.ownershipId) ?? [],
      overrides: overrides.get(o.ownershipId) ?? [],
    });
  }
  return redact(principal, { ...found, ownerships });
}

export async function provenance(deps: ServiceDeps, principal: Principal, sha: string, repo: string): Promise<Provenance> {
  authorizeOp(principal, 'provenance');
  // The repository is opened on this host: only under the allowed roots, like any other path.
  const repoPath = (await norm(deps, repo))!;
  const found = await resolveProvenance(deps.pool, repoPath, sha);
  if (!found) throw new OwnershipError('not_found');
  return redact(principal, found);
}
