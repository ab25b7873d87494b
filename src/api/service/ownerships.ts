import { authorizeForWorker, type Operation } from '../../auth/policy';
import { OwnershipError } from '../../client/errors';
import type { OwnershipView } from '../../client';
import type { Principal } from '../../domain/identity';
import { refusal, type Refusal } from '../../domain/reasons';
import { settleRefused } from '../../store/event-store';
import { getOwnership, heldOwnershipOf } from '../../store/lookups';
import { checkNamedBranch } from '../../domain/branch';
import { recordHeartbeat } from '../../store/heartbeats';
import { executorConversationsOf } from '../../store/bindings';
import { signalAndAwait } from './signalled';
import { vouchRemoved } from './presence';
import { isUnavailable } from '../errors';
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
import { authorizeOp, ownershipRow, redact, temporalDeadlineOf, throwRefusal, withTemporal, type OwnershipRow, type ServiceDeps } from './context';
import { ownershipView } from './live';
import { asMessage, type Message, type MessageContext, successorId } from './messages';
import { resolveWorker, runtimeFor } from './workers';
import { notHolding, withTenure } from './tenure';
import { withEnforcement, type HostAgentSeen } from './host-presence';

/** The worktree's host agent as seen now, when the service watches hosts (./host-presence.ts). */
const seenHost = (deps: ServiceDeps, hostId: string): Promise<HostAgentSeen | null> => deps.hostPresence?.of(hostId) ?? Promise.resolve(null);
/** An owner change waits for its enforcement only on a host whose agent is there: nothing would write it meanwhile. */
const waitFor = (seen: HostAgentSeen | null): { enforcementWaitMs?: number } => (seen?.agent === 'away' ? { enforcementWaitMs: 0 } : {});
/** The answer and whether its worktree's host enforces it. */
const enforced = <T extends OwnershipViewOut>(deps: ServiceDeps, v: T): Promise<T> => withEnforcement(deps.hostPresence, v);

/** Bind (docs/operations.md#bind): the worker from the principal, the conversation from the executor binding, never from the body. */
export async function bind(deps: ServiceDeps, principal: Principal, body: BindBody, ctx: MessageContext = {}): Promise<ClaimResponse> {
  authorizeOp(principal, 'bind');
  const worker = resolveWorker(principal, body);
  const runtime = await runtimeFor(deps, worker.workerId, body.runtime);
  const seen = await seenHost(deps, body.hostId ?? deps.client.hostId);
  // A worktree on another host is inspected there before its first claim: a host whose agent is
  // away is refused at once (by the client, after the request's own checks), not after the
  // workflow's host bound (45 s).
  const hostAway = async (hostId: string) => {
    const now = await seenHost(deps, hostId);
    return now?.agent === 'away' ? { hostId, hostAgent: 'away', hostAgentSeenAgoMs: now.seenAgoMs } : null;
  };
  // The proof goes with the answer, from the log too (a replayed bind answers the same secret).
  const answered = await asMessage(deps, principal, ctx, null, async (m) => {
    const view = await withTemporal(
      deps,
      () =>
        deps.client.bind(
          {
            ...(body.repoRoot !== undefined ? { repoRoot: body.repoRoot } : {}),
            worktreePath: body.worktreePath,
            ...(body.branch !== undefined ? { branch: body.branch } : {}),
            ...(body.hostId !== undefined ? { hostId: body.hostId } : {}),
            executionSessionId: body.executionSessionId,
            runtime,
            parentExecutionSessionId: body.parentExecutionSessionId ?? null,
            process: body.process ?? null,
            ...(body.leaseTtlMs !== undefined ? { leaseTtlMs: body.leaseTtlMs } : {}),
            worker,
            principal,
            lane: body.lane ?? null,
            planRef: body.planRef ?? null,
            requestId: body.requestId ?? null,
          },
          {
            messageId: m.id,
            heldOwnership: (where) => heldOwnershipOf(deps.pool, where),
            hostAway,
            conversationOf: executorConversationsOf(deps.pool),
            ...waitFor(seen),
          },
        ),
      // A bind naming another host waits for that host's agent to inspect the worktree (the workflow
      // bounds it and answers host_unavailable); the API's own deadline must not cut that answer off.
      body.hostId !== undefined ? temporalDeadlineOf(deps) * 2 : undefined,
    );
    return redact(principal, await answeredTenure(deps, view, body.executionSessionId));
  });
  return enforced(deps, await withTenure(deps, principal, answered, body.executionSessionId));
}

/**
 * The workflow of an ownership that is still running. A closed ownership is never messaged: its
 * workflow id may already carry the next lifecycle of the same worktree.
 */
async function openRef(deps: ServiceDeps, ownershipId: string) {
  const row = await ownershipRow(deps, ownershipId);
  if (row.state === 'closed') throw new OwnershipError('ownership_closed', undefined, { state: row.state });
  // The ownership id travels with the message: the workflow refuses it if the id now runs another lifecycle.
  return { ref: { workflowId: row.workflowId, ownershipId }, row };
}

/** Owner-only messages: an executor only for the worker that owns it (the heartbeat signal carries no principal for the workflow to check). */
async function ownerRefRow(deps: ServiceDeps, principal: Principal, op: Operation, ownershipId: string) {
  authorizeOp(principal, op);
  const opened = await openRef(deps, ownershipId);
  if (principal.kind === 'executor') throwRefusal(authorizeForWorker(principal, opened.row.ownerWorkerId));
  return opened;
}

const view = (principal: Principal, v: OwnershipView): OwnershipViewOut => redact(principal, v);

type Ref = { workflowId: string; ownershipId: string };

/**
 * The log can be ahead of the workflow: a workflow task that wrote its events to PostgreSQL and
 * was never recorded by Temporal (a server crash mid-task) leaves the workflow one step behind
 * until a message makes it look. A refusal by a workflow behind the durable row is not an answer
 * about the log: the workflow catches up (OwnershipClient.catchUp) and the message is sent once
 * more. A refusal changed nothing, so sending it again is safe.
 */
async function againstTheLog<T>(deps: ServiceDeps, ref: Ref, row: OwnershipRow, message: Message, call: (messageId: string) => Promise<T>): Promise<T> {
  try {
    return await call(message.id);
  } catch (err) {
    if (!(err instanceof OwnershipError) || isUnavailable(err) || row.seq <= 0) throw err;
    const live = await deps.client.liveState(ref).catch(() => null);
    if (!live || live.seq >= row.seq) throw err;
    const caught = await deps.client.catchUp(ref, row.seq).catch(() => null);
    if (!caught) throw err;
    // The first message stays refused for ever (settled so); the request goes on as a new message.
    // Applied after all (its events reached the log first): asMessage answers from the log.
    const first = await settleRefused(deps.pool, message.id, ref.ownershipId, err.code);
    if (first.outcome === 'applied') throw err;
    message.id = successorId(message.id);
    return call(message.id);
  }
}

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
  if (principal.kind === 'executor') throwRefusal(authorizeForWorker(principal, row.ownerWorkerId));
  // An active owner's heartbeat is a row in PostgreSQL, read by the workflow when the lease runs
  // out (store/heartbeats.ts): no signal, no history. Signalled as well: a tenure's first that the
  // store has not seen (the workflow may never have heard of the tenure: the log ahead of it, when
  // the answer to its claim was lost), and a stale owner's (its revival is an event, due now).
  const first = await recordHeartbeat(deps.pool, ownershipId, body.executionSessionId, body.epoch);
  if (row.state === 'active' && !first) return { accepted: true };
  // The client coalesces identical heartbeats in flight (OwnershipClient.heartbeat).
  await withTemporal(deps, () =>
    deps.client.heartbeat({ workflowId: row.workflowId, ownershipId }, { executionSessionId: body.executionSessionId, epoch: body.epoch }),
  );
  return { accepted: true };
}

/**
 * A tenure the workflow itself just answered for (a bind, an accepted handoff, a reclaim) is known
 * to it: recorded as heard now, so its owner's first heartbeat is no tenure's first and needs no
 * signal (no history). A tenure whose answer was lost is not recorded here: its first heartbeat is
 * signalled, and the workflow learns of it (the log ahead of it).
 */
async function answeredTenure(deps: ServiceDeps, v: OwnershipView, executionSessionId: string): Promise<OwnershipView> {
  if (v.state === 'active' && v.owner?.executionSessionId === executionSessionId) {
    // Observability of the lease only: a failure here never fails the answer already given.
    await recordHeartbeat(deps.pool, v.ownershipId, executionSessionId, v.epoch).catch(() => undefined);
  }
  return v;
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
  return asMessage(deps, principal, ctx, ownershipId, async (m) =>
    view(
      principal,
      await withTemporal(deps, () =>
        againstTheLog(deps, ref, row, m, (messageId) => deps.client.handoff(ref, { ...body, toWorkerId, principal }, { messageId })),
      ),
    ),
  );
}

export async function cancelHandoff(
  deps: ServiceDeps,
  principal: Principal,
  ownershipId: string,
  body: CancelHandoffBody,
  ctx: MessageContext = {},
): Promise<OwnershipViewOut> {
  const { ref, row } = await ownerRefRow(deps, principal, 'cancelHandoff', ownershipId);
  return asMessage(deps, principal, ctx, ownershipId, async (m) =>
    view(
      principal,
      await withTemporal(deps, () => againstTheLog(deps, ref, row, m, (messageId) => deps.client.cancelHandoff(ref, { ...body, principal }, { messageId }))),
    ),
  );
}

export async function release(
  deps: ServiceDeps,
  principal: Principal,
  ownershipId: string,
  body: ReleaseBody,
  ctx: MessageContext = {},
): Promise<OwnershipViewOut> {
  const { ref, row } = await ownerRefRow(deps, principal, 'release', ownershipId);
  const seen = await seenHost(deps, row.hostId);
  const answered = await asMessage(deps, principal, ctx, ownershipId, async (m) =>
    view(
      principal,
      await withTemporal(deps, () =>
        againstTheLog(deps, ref, row, m, (messageId) => deps.client.release(ref, { ...body, principal }, { messageId, ...waitFor(seen) })),
      ),
    ),
  );
  return enforced(deps, answered);
}

export async function submit(
  deps: ServiceDeps,
  principal: Principal,
  ownershipId: string,
  body: SubmitBody,
  ctx: MessageContext = {},
): Promise<OwnershipViewOut> {
  const { ref, row } = await ownerRefRow(deps, principal, 'submit', ownershipId);
  const seen = await seenHost(deps, row.hostId);
  const answered = await asMessage(deps, principal, ctx, ownershipId, async (m) =>
    view(
      principal,
      await withTemporal(deps, () =>
        againstTheLog(deps, ref, row, m, (messageId) => deps.client.submit(ref, { ...body, principal }, { messageId, ...waitFor(seen) })),
      ),
    ),
  );
  return enforced(deps, answered);
}

export async function bindPlan(
  deps: ServiceDeps,
  principal: Principal,
  ownershipId: string,
  body: PlanBody,
  ctx: MessageContext = {},
): Promise<OwnershipViewOut> {
  const { ref, row } = await ownerRefRow(deps, principal, 'bindPlan', ownershipId);
  return asMessage(deps, principal, ctx, ownershipId, async (m) =>
    view(
      principal,
      await withTemporal(deps, () => againstTheLog(deps, ref, row, m, (messageId) => deps.client.bindPlan(ref, { ...body, principal }, { messageId }))),
    ),
  );
}

export async function renameBranch(
  deps: ServiceDeps,
  principal: Principal,
  ownershipId: string,
  body: RenameBranchBody,
  ctx: MessageContext = {},
): Promise<OwnershipViewOut> {
  const { ref, row } = await ownerRefRow(deps, principal, 'renameBranch', ownershipId);
  await renamedInGit(deps, ownershipId, body.to);
  return asMessage(deps, principal, ctx, ownershipId, async (m) =>
    view(
      principal,
      await withTemporal(deps, () => againstTheLog(deps, ref, row, m, (messageId) => deps.client.renameBranch(ref, { ...body, principal }, { messageId }))),
    ),
  );
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
  const runtime = await runtimeFor(deps, worker.workerId, body.runtime);
  const seen = await seenHost(deps, row.hostId);
  const answered = await asMessage(deps, principal, ctx, ownershipId, async (m) => {
    const accepted = await withTemporal(deps, () =>
      againstTheLog(deps, ref, row, m, (messageId) =>
        deps.client.acceptHandoff(
          ref,
          { ...fields, runtime, handoffId: body.handoffId },
          { messageId, conversationOf: executorConversationsOf(deps.pool), ...waitFor(seen) },
        ),
      ),
    );
    return view(principal, await answeredTenure(deps, accepted, fields.executionSessionId));
  });
  return enforced(deps, await withTenure(deps, principal, answered, fields.executionSessionId));
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
  const runtime = await runtimeFor(deps, worker.workerId, body.runtime);
  // A host agent that is away cannot preserve the dead owner's WIP: the workflow is told so and
  // answers at once (refused host_unavailable, or an admin's forced reclaim recorded without it).
  const seen = await seenHost(deps, row.hostId);
  const away = seen?.agent === 'away';
  const input = {
    ...fields,
    runtime,
    ...(body.force !== undefined ? { force: body.force } : {}),
    reason: body.reason ?? null,
    ...(away ? { hostAway: true } : {}),
  };
  // Reclaim preserves WIP on the worktree's host before answering: allow it more time.
  const answered = await asMessage(deps, principal, ctx, ownershipId, async (m) => {
    const reclaimed = await withTemporal(
      deps,
      () =>
        againstTheLog(deps, ref, row, m, (messageId) =>
          deps.client.reclaim(ref, input, { messageId, conversationOf: executorConversationsOf(deps.pool), ...waitFor(seen) }),
        ),
      temporalDeadlineOf(deps) * 2,
    );
    return view(principal, await answeredTenure(deps, reclaimed, fields.executionSessionId));
  });
  return enforced(deps, await withTenure(deps, principal, answered, fields.executionSessionId));
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
