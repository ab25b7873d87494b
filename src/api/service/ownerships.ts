import { authorizeForWorker, type Operation } from '../../auth/policy';
import { OwnershipError } from '../../contract/refusal';
import type { MessageOptions, OwnershipView } from '../../client';
import type { Conversation } from '../../domain/identity';
import { ownerSummary } from '../../domain/projection';
import type { Principal } from '../../domain/identity';
import { refusal, type Refusal } from '../../domain/reasons';
import { getOwnership, heldOwnershipOf } from '../../store/lookups';
import { checkNamedBranch } from '../../domain/branch';
import { recordHeartbeat } from '../../store/heartbeats';
import { readBinding } from '../../store/bindings';
import { signalAndAwait } from './signalled';
import { vouchRemoved } from './presence';
import type {
  AcceptHandoffBody,
  BindBody,
  ClaimResponse,
  CancelHandoffBody,
  HandoffBody,
  HeartbeatBody,
  OwnershipViewOut,
  PlanBody,
  ReclaimBody,
  ReleaseBody,
  RenameBranchBody,
  SubmitBody,
  WorktreeRemovedBody,
  RemovalResponse,
} from '../../contract/http';
import { authorizeOp, ownershipRow, redact, throwRefusal, withTemporal, type OwnershipRow, type ServiceDeps } from './context';
import { ownershipView } from './live';
import type { MessageContext } from './messages';
import { resolveWorker } from './workers';
import { notHolding, withTenure } from './tenure';
import { withEnforcement, type HostAgentSeen } from './host-presence';

/** The worktree's host agent as seen now, when the service watches hosts (./host-presence.ts). */
export const seenHost = (deps: ServiceDeps, hostId: string): Promise<HostAgentSeen | null> => deps.hostPresence?.of(hostId) ?? Promise.resolve(null);
/** An owner change waits for its enforcement only on a host whose agent is there: nothing would write it meanwhile. */
export const waitFor = (seen: HostAgentSeen | null): { enforcementWaitMs?: number } => (seen?.agent === 'away' ? { enforcementWaitMs: 0 } : {});
/** The answer and whether its worktree's host enforces it. */
export const enforced = <T extends OwnershipViewOut>(deps: ServiceDeps, v: T): Promise<T> => withEnforcement(deps.hostPresence, v);

/** A message as the API sends it: its id, and the deployment's deadline when it sets one (else src/domain/deadlines.ts). */
export const sent = (deps: ServiceDeps, ctx: MessageContext): MessageOptions => ({
  ...(ctx.messageId !== undefined ? { messageId: ctx.messageId } : {}),
  ...(deps.temporalTimeoutMs !== undefined ? { deadlineMs: deps.temporalTimeoutMs } : {}),
});

/**
 * What a new owner's message carries from the store (one read of the executor binding): its
 * runtime when the body names none (the binding's executor, else honestly `unknown`), and the
 * conversation the binding holds, so the workflow reads nothing.
 */
async function newOwnerFacts(deps: ServiceDeps, workerId: string, given: string | undefined): Promise<{ runtime: string; conversation: Conversation | null }> {
  const binding = await readBinding(deps.pool, workerId);
  return { runtime: given ?? binding?.executor ?? 'unknown', conversation: binding?.firstConversation ?? null };
}

/**
 * Bind (docs/operations.md#bind): the worker from the principal, the conversation from the executor
 * binding, never from the body. The service reads what the store knows (who holds the worktree,
 * the binding) and hands it to the client as data; the workflow's claim decides.
 */
export async function bind(deps: ServiceDeps, principal: Principal, body: BindBody, ctx: MessageContext = {}): Promise<ClaimResponse> {
  authorizeOp(principal, 'bind');
  const worker = resolveWorker(principal, body);
  const request = {
    ...(body.repoRoot !== undefined ? { repoRoot: body.repoRoot } : {}),
    worktreePath: body.worktreePath,
    ...(body.branch !== undefined ? { branch: body.branch } : {}),
    ...(body.hostId !== undefined ? { hostId: body.hostId } : {}),
    executionSessionId: body.executionSessionId,
    runtime: body.runtime ?? 'unknown',
    parentExecutionSessionId: body.parentExecutionSessionId ?? null,
    process: body.process ?? null,
    ...(body.leaseTtlMs !== undefined ? { leaseTtlMs: body.leaseTtlMs } : {}),
    worker,
    principal,
    lane: body.lane ?? null,
    planRef: body.planRef ?? null,
    requestId: body.requestId ?? null,
  };
  // The request's own checks first (bad input is refused as such), then where the worktree is.
  const located = await deps.client.locate(request);
  const [facts, held, seen] = await Promise.all([
    newOwnerFacts(deps, worker.workerId, body.runtime),
    heldOwnershipOf(deps.pool, located),
    seenHost(deps, located.hostId),
  ]);
  // Moved while owned (git worktree move keeps the private git dir, and its projection, while the
  // ownership stays recorded at the old path): refused, never a second live owner.
  if (held && held.record.worktreePath !== located.worktreePath)
    throw new OwnershipError('worktree_owned', undefined, { owner: ownerSummary(held.record), worktreePath: held.record.worktreePath });
  // A worktree on another host is inspected there before its first claim: a host whose agent is
  // away is refused at once, not after the workflow's host bound.
  if (!located.local && !held && seen?.agent === 'away')
    throw new OwnershipError('host_unavailable', undefined, { hostId: located.hostId, hostAgent: 'away', hostAgentSeenAgoMs: seen.seenAgoMs });
  let view: OwnershipView;
  try {
    view = await deps.client.bind(
      { ...request, runtime: facts.runtime },
      {
        ...sent(deps, ctx),
        located,
        // A live lifecycle started under an earlier workflow id formula governs the worktree: the claim goes to it.
        ...(held ? { workflowId: held.workflowId } : {}),
        conversation: facts.conversation,
        ...waitFor(seen),
      },
    );
  } catch (err) {
    throw await namingTheOwner(deps, err, located);
  }
  // The proof goes with the answer.
  const answered = redact(principal, view);
  return enforced(deps, withTenure(deps, principal, answered, body.executionSessionId));
}

/** A claim the log refused for the live owner of another workflow (the one-live-owner index) names no owner: it is looked up. */
async function namingTheOwner(deps: ServiceDeps, err: unknown, where: { hostId: string; worktreePath: string }): Promise<unknown> {
  if (!(err instanceof OwnershipError) || err.code !== 'worktree_owned' || err.details !== undefined) return err;
  const held = await heldOwnershipOf(deps.pool, where).catch(() => null);
  return held ? new OwnershipError('worktree_owned', err.message, { owner: ownerSummary(held.record) }) : err;
}

/**
 * The workflow of an ownership that is still running. A closed ownership is never messaged: its
 * workflow id may already carry the next lifecycle of the same worktree.
 */
export async function openRef(deps: ServiceDeps, ownershipId: string) {
  const row = await ownershipRow(deps, ownershipId);
  if (row.state === 'closed') throw new OwnershipError('ownership_closed', undefined, { state: row.state });
  // The ownership id travels with the message: the workflow refuses it if the id now runs another lifecycle.
  return { ref: { workflowId: row.workflowId, ownershipId }, row };
}

/** Owner-only messages: an executor only for the worker that owns it (the heartbeat signal carries no principal for the workflow to check). */
export async function ownerRefRow(deps: ServiceDeps, principal: Principal, op: Operation, ownershipId: string) {
  authorizeOp(principal, op);
  const opened = await openRef(deps, ownershipId);
  if (principal.kind === 'executor') throwRefusal(authorizeForWorker(principal, opened.row.ownerWorkerId, opened.row.ownerRunId));
  return opened;
}

const view = (principal: Principal, v: OwnershipView): OwnershipViewOut => redact(principal, v);

/**
 * Heartbeats are signals (cheap, nothing to wait for), so the workflow cannot answer a stale one.
 * The durable row can: it is written before any owner change is acknowledged, so a session that
 * lost the worktree (handoff, reclaim, release) learns it on its next heartbeat.
 */
export async function heartbeat(deps: ServiceDeps, principal: Principal, ownershipId: string, body: HeartbeatBody): Promise<{ accepted: true }> {
  authorizeOp(principal, 'heartbeat');
  const row = await ownershipRow(deps, ownershipId);
  // Staleness first: a session that lost the worktree to another worker is told it lost it.
  throwRefusal(staleHeartbeat(row, body));
  if (principal.kind === 'executor') throwRefusal(authorizeForWorker(principal, row.ownerWorkerId, row.ownerRunId));
  // An active owner's heartbeat is a row in PostgreSQL, read by the workflow when the lease runs
  // out (store/heartbeats.ts): no signal, no history. A stale owner's is signalled as well: its
  // revival is an event, due now.
  await recordHeartbeat(deps.pool, ownershipId, body.executionSessionId, body.epoch);
  if (row.state === 'active') return { accepted: true };
  // The client coalesces identical heartbeats in flight (OwnershipClient.heartbeat).
  await withTemporal(deps, () =>
    deps.client.heartbeat({ workflowId: row.workflowId, ownershipId }, { executionSessionId: body.executionSessionId, epoch: body.epoch }),
  );
  return { accepted: true };
}

function staleHeartbeat(row: OwnershipRow, body: HeartbeatBody): Refusal | null {
  const lost = notHolding(row, body.executionSessionId);
  if (lost) return lost;
  if (row.epoch !== body.epoch) return refusal('stale_epoch', { currentEpoch: row.epoch });
  return null;
}

export async function handoff(
  deps: ServiceDeps,
  principal: Principal,
  ownershipId: string,
  body: HandoffBody,
  ctx: MessageContext = {},
): Promise<OwnershipViewOut> {
  const { ref, row } = await ownerRefRow(deps, principal, 'handoff', ownershipId);
  // The successor's worker: named, or the owner's own (a restart or resume of the same worker).
  const toWorkerId = body.toWorkerId ?? row.ownerWorkerId;
  if (!toWorkerId) throw new OwnershipError('invalid_input', undefined, { fields: ['toWorkerId'] });
  return view(principal, await deps.client.handoff(ref, { ...body, toWorkerId, principal }, sent(deps, ctx)));
}

/**
 * An owner's update answered with the view: authorized for the owner's worker, addressed to the
 * open run, sent under the message's id. One that changes who may write (release, submit) waits
 * for the worktree's hooks to enforce it, where the host's agent is there to write them.
 */
async function ownerUpdate(
  deps: ServiceDeps,
  principal: Principal,
  op: Operation,
  ownershipId: string,
  ctx: MessageContext,
  enforce: boolean,
  send: (ref: { workflowId: string; ownershipId: string }, opts: MessageOptions) => Promise<OwnershipView>,
): Promise<OwnershipViewOut> {
  const { ref, row } = await ownerRefRow(deps, principal, op, ownershipId);
  if (!enforce) return view(principal, await send(ref, sent(deps, ctx)));
  const seen = await seenHost(deps, row.hostId);
  return enforced(deps, view(principal, await send(ref, { ...sent(deps, ctx), ...waitFor(seen) })));
}

export const cancelHandoff = (deps: ServiceDeps, principal: Principal, ownershipId: string, body: CancelHandoffBody, ctx: MessageContext = {}) =>
  ownerUpdate(deps, principal, 'cancelHandoff', ownershipId, ctx, false, (ref, o) => deps.client.cancelHandoff(ref, { ...body, principal }, o));

export const release = (deps: ServiceDeps, principal: Principal, ownershipId: string, body: ReleaseBody, ctx: MessageContext = {}) =>
  ownerUpdate(deps, principal, 'release', ownershipId, ctx, true, (ref, o) => deps.client.release(ref, { ...body, principal }, o));

export const submit = (deps: ServiceDeps, principal: Principal, ownershipId: string, body: SubmitBody, ctx: MessageContext = {}) =>
  ownerUpdate(deps, principal, 'submit', ownershipId, ctx, true, (ref, o) => deps.client.submit(ref, { ...body, principal }, o));

export const bindPlan = (deps: ServiceDeps, principal: Principal, ownershipId: string, body: PlanBody, ctx: MessageContext = {}) =>
  ownerUpdate(deps, principal, 'bindPlan', ownershipId, ctx, false, (ref, o) => deps.client.bindPlan(ref, { ...body, principal }, o));

export async function renameBranch(
  deps: ServiceDeps,
  principal: Principal,
  ownershipId: string,
  body: RenameBranchBody,
  ctx: MessageContext = {},
): Promise<OwnershipViewOut> {
  const { ref } = await ownerRefRow(deps, principal, 'renameBranch', ownershipId);
  await renamedInGit(deps, ownershipId, body.to);
  return view(principal, await deps.client.renameBranch(ref, { ...body, principal }, sent(deps, ctx)));
}

/**
 * A rename records what git already did: the new name must be the branch checked out in the
 * worktree now (branch_mismatch, detached_head), so no owner can take another worktree's branch
 * name by renaming. Only the worktree's host can tell: one on another host is recorded as named
 * (docs/guarantees.md).
 */
async function renamedInGit(deps: ServiceDeps, ownershipId: string, to: string): Promise<void> {
  const record = await getOwnership(deps.pool, { ownershipId });
  if (!record) throw new OwnershipError('not_found');
  const actual = await deps.client.checkedOutBranch({ hostId: record.hostId, worktreePath: record.worktreePath });
  if (actual !== undefined) throwRefusal(checkNamedBranch(to, actual));
}

/** A new owner (accept, reclaim) acts for its own worker, whoever owned the worktree before. */
function newOwnerFields(principal: Principal, body: AcceptHandoffBody | ReclaimBody) {
  const worker = resolveWorker(principal, body);
  return {
    worker,
    fields: {
      executionSessionId: body.executionSessionId,
      parentExecutionSessionId: body.parentExecutionSessionId ?? null,
      process: body.process ?? null,
      ...(body.leaseTtlMs !== undefined ? { leaseTtlMs: body.leaseTtlMs } : {}),
      worker,
      principal,
    },
  };
}

export async function acceptHandoff(
  deps: ServiceDeps,
  principal: Principal,
  ownershipId: string,
  body: AcceptHandoffBody,
  ctx: MessageContext = {},
): Promise<ClaimResponse> {
  authorizeOp(principal, 'acceptHandoff');
  const { worker, fields } = newOwnerFields(principal, body);
  const { ref, row } = await openRef(deps, ownershipId);
  const [facts, seen] = await Promise.all([newOwnerFacts(deps, worker.workerId, body.runtime), seenHost(deps, row.hostId)]);
  const accepted = await deps.client.acceptHandoff(
    ref,
    { ...fields, runtime: facts.runtime, handoffId: body.handoffId },
    { ...sent(deps, ctx), conversation: facts.conversation, ...waitFor(seen) },
  );
  const answered = view(principal, accepted);
  return enforced(deps, withTenure(deps, principal, answered, fields.executionSessionId));
}

export async function reclaim(
  deps: ServiceDeps,
  principal: Principal,
  ownershipId: string,
  body: ReclaimBody,
  ctx: MessageContext = {},
): Promise<ClaimResponse> {
  authorizeOp(principal, 'reclaim');
  if (body.force === true && principal.kind !== 'admin') throw new OwnershipError('force_requires_admin');
  const { worker, fields } = newOwnerFields(principal, body);
  const { ref, row } = await openRef(deps, ownershipId);
  const [facts, seen] = await Promise.all([newOwnerFacts(deps, worker.workerId, body.runtime), seenHost(deps, row.hostId)]);
  // A host agent that is away cannot preserve the dead owner's WIP: the workflow is told so and
  // answers at once (refused host_unavailable, or an admin's forced reclaim recorded without it).
  const input = {
    ...fields,
    runtime: facts.runtime,
    ...(body.force !== undefined ? { force: body.force } : {}),
    reason: body.reason ?? null,
    ...(seen?.agent === 'away' ? { hostAway: true } : {}),
  };
  const reclaimed = await deps.client.reclaim(ref, input, { ...sent(deps, ctx), conversation: facts.conversation, ...waitFor(seen) });
  const answered = view(principal, reclaimed);
  return enforced(deps, withTenure(deps, principal, answered, fields.executionSessionId));
}

/**
 * The removal is a signal: the answer waits (as a landing's does, landingWaitMs) until the log
 * records it (`recorded`) or the workflow records its refusal (answered with its code); past the
 * wait it is `accepted`, signalled but not yet durable (docs/operations.md#landing-and-provenance).
 */
export async function worktreeRemoved(deps: ServiceDeps, principal: Principal, ownershipId: string, body: WorktreeRemovedBody): Promise<RemovalResponse> {
  authorizeOp(principal, 'worktreeRemoved');
  const forced = body.force === true;
  if (forced && principal.kind !== 'admin') throw new OwnershipError('force_requires_admin');
  if (forced && !body.reason?.trim()) throw new OwnershipError('force_requires_reason');
  const row = await ownershipRow(deps, ownershipId);
  const recorded = async () => ((await getOwnership(deps.pool, { ownershipId }))?.worktreeRemoved === true ? true : null);
  // Removed already: a replay is answered as recorded and nothing is sent.
  if (row.state === 'closed' || (await recorded())) return { accepted: true, status: 'recorded' };
  // The caller's word is not the record's: git on the host must agree the worktree is gone.
  const record = await getOwnership(deps.pool, { ownershipId });
  if (!forced && record !== null) await vouchRemoved(deps, { ownershipId, hostId: record.hostId, worktreePath: record.worktreePath });
  const removed = await signalAndAwait(
    deps,
    ownershipId,
    (messageId) =>
      deps.client.worktreeRemoved(
        { workflowId: row.workflowId, ownershipId },
        {
          reason: body.reason ?? null,
          ...(body.receipt !== undefined ? { receipt: body.receipt } : {}),
          ...(forced ? { forced: true as const } : {}),
          principal,
        },
        { messageId },
      ),
    recorded,
  );
  return { accepted: true, status: removed ? 'recorded' : 'accepted' };
}

/** GET /v1/ownerships/{id}: the ownership as the service shows it (live.ts ownershipView), redacted for the caller. */
export async function getById(deps: ServiceDeps, principal: Principal, ownershipId: string): Promise<OwnershipViewOut> {
  authorizeOp(principal, 'get');
  const found = await ownershipView(deps, ownershipId);
  if (!found) throw new OwnershipError('not_found');
  return redact(principal, found);
}
