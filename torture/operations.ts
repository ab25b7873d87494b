import { commitWork, headOf, readdWorktree, removeWorktree, type Slot } from './fixtures';
import type { OpName } from '../chaos/ops';
import type { Caller, CallRecord } from './record';
import type { Belief, World } from './world';

/** One HTTP call as an operation wants it sent. */
export interface CallSpec {
  op: OpName;
  variant: string;
  mustRefuse?: boolean;
  caller: Caller;
  token: string;
  slot: number;
  method: 'GET' | 'POST';
  path: string;
  body?: Record<string, unknown>;
  target?: string;
}

export interface OpContext {
  world: World;
  /** the intent's index: labels commits and plan values, so they differ per intent */
  intent: number;
  /** random numbers drawn for this intent up front, so the draw sequence never depends on timing */
  r: readonly number[];
  call(spec: CallSpec): Promise<CallRecord>;
}

export const OP_WEIGHTS = {
  bind: 14,
  bindRace: 5,
  bindSpoofedRoot: 3,
  heartbeat: 16,
  handoff: 8,
  accept: 10,
  cancel: 3,
  release: 4,
  reclaim: 5,
  submit: 4,
  landed: 4,
  recycle: 3,
  plan: 5,
  look: 4,
} as const;
export type OpKind = keyof typeof OP_WEIGHTS;
/** how many random numbers every intent draws */
export const DRAWS = 10;

const pick = <T>(xs: readonly T[], x: number): T => xs[Math.min(xs.length - 1, Math.floor(x * xs.length))]!;

function slotOf(ctx: OpContext): { slot: Slot; b: Belief } {
  const k = Math.min(ctx.world.slots.length - 1, Math.floor(ctx.r[0]! * ctx.world.slots.length));
  return { slot: ctx.world.slots[k]!, b: ctx.world.beliefs[k]! };
}

const own = (id: string, action: string) => `/v1/ownerships/${id}/${action}`;

function executorCall(ctx: OpContext, w: number, spec: Omit<CallSpec, 'caller' | 'token'>): Promise<CallRecord> {
  return ctx.call({ ...spec, caller: ctx.world.caller(w), token: ctx.world.executor(w).token });
}

function bindBody(ctx: OpContext, slot: Slot, session: string, x: { path: number; root: number }): Record<string, unknown> {
  const f = ctx.world.features;
  const worktreePath = x.path < 0.5 ? slot.path : pick(slot.spellings, (x.path - 0.5) * 2);
  const body: Record<string, unknown> = {
    worktreePath,
    branch: slot.branch,
    executionSessionId: session,
    runtime: 'codex-cli',
    lane: `lane-${slot.k}`,
    planRef: `docs/plans/${slot.name}.md`,
  };
  if (!(f.repoRootOptional && x.root < 0.15)) body.repoRoot = x.root < 0.6 ? slot.repoRoot : pick(slot.repoRootSpellings, (x.root - 0.6) / 0.4);
  return body;
}

/** Bind by a random session, or a replay by the believed owner, through any spelling of the worktree. */
async function bind(ctx: OpContext): Promise<void> {
  const { slot, b } = slotOf(ctx);
  const w = ctx.world;
  const replay = ctx.r[1]! < 0.3 && b.ownerSession !== null && w.homeOf(b.ownerSession) !== undefined;
  const worker = replay ? w.homeOf(b.ownerSession!)! : Math.floor(ctx.r[2]! * w.workers);
  const session = replay ? b.ownerSession! : w.sessionOf(worker, Math.floor(ctx.r[3]! * w.sessionsPerWorker));
  await executorCall(ctx, worker, {
    op: 'bind',
    variant: replay ? 'replay' : 'bind',
    slot: slot.k,
    method: 'POST',
    path: '/v1/bind',
    body: bindBody(ctx, slot, session, { path: ctx.r[4]!, root: ctx.r[5]! }),
  });
}

/** Two or three workers bind one worktree at the same moment: at most one may win. */
async function bindRace(ctx: OpContext): Promise<void> {
  const { slot } = slotOf(ctx);
  const w = ctx.world;
  const n = Math.min(w.workers, 2 + Math.floor(ctx.r[1]! * 2));
  const first = Math.floor(ctx.r[2]! * w.workers);
  const calls = Array.from({ length: n }, (_, i) => {
    const worker = (first + i) % w.workers;
    const session = w.sessionOf(worker, Math.floor(ctx.r[3 + i]! * w.sessionsPerWorker));
    return executorCall(ctx, worker, {
      op: 'bind',
      variant: 'race',
      slot: slot.k,
      method: 'POST',
      path: '/v1/bind',
      body: bindBody(ctx, slot, session, { path: ctx.r[6 + i]!, root: 0 }),
    });
  });
  await Promise.all(calls);
}

/** A bind naming a parent dir of the real repository root: must never become a second ownership. */
async function bindSpoofedRoot(ctx: OpContext): Promise<void> {
  const { slot } = slotOf(ctx);
  const w = ctx.world;
  const worker = Math.floor(ctx.r[1]! * w.workers);
  const session = w.sessionOf(worker, Math.floor(ctx.r[2]! * w.sessionsPerWorker));
  const body = { ...bindBody(ctx, slot, session, { path: ctx.r[3]!, root: 0 }), repoRoot: slot.spoofedRepoRoot };
  await executorCall(ctx, worker, { op: 'bind', variant: 'spoofed_root', mustRefuse: true, slot: slot.k, method: 'POST', path: '/v1/bind', body });
}

/** The believed owner and its worker, or null when the worktree is believed free. */
function ownerOf(ctx: OpContext, b: Belief): { id: string; session: string; worker: number } | null {
  if (!b.ownershipId || !b.ownerSession) return null;
  const worker = ctx.world.homeOf(b.ownerSession);
  return worker === undefined ? null : { id: b.ownershipId, session: b.ownerSession, worker };
}

/** An epoch below one already seen is stale for ever: refusing it does not depend on timing. */
function epochFor(ctx: OpContext, b: Belief, x: number, staleShare: number): { epoch: number; variant: string; mustRefuse: boolean } {
  const max = ctx.world.maxEpochOf(b.ownershipId);
  if (x < staleShare && max >= 2) return { epoch: max - 1, variant: 'stale_epoch', mustRefuse: true };
  if (x < staleShare) return { epoch: max + 1, variant: 'future_epoch', mustRefuse: false };
  return { epoch: Math.max(1, b.epoch), variant: 'owner', mustRefuse: false };
}

async function heartbeat(ctx: OpContext): Promise<void> {
  const { slot, b } = slotOf(ctx);
  const o = ownerOf(ctx, b);
  if (!o) return look(ctx);
  const w = ctx.world;
  const x = ctx.r[1]!;
  const path = own(o.id, 'heartbeat');
  if (x < 0.55) {
    await executorCall(ctx, o.worker, {
      op: 'heartbeat',
      variant: 'owner',
      slot: slot.k,
      target: o.id,
      method: 'POST',
      path,
      body: { executionSessionId: o.session, epoch: Math.max(1, b.epoch) },
    });
  } else if (x < 0.75) {
    const e = epochFor(ctx, b, 0, 1);
    await executorCall(ctx, o.worker, {
      op: 'heartbeat',
      variant: e.variant,
      mustRefuse: e.mustRefuse,
      slot: slot.k,
      target: o.id,
      method: 'POST',
      path,
      body: { executionSessionId: o.session, epoch: e.epoch },
    });
  } else if (x < 0.88) {
    // Another session of the owner's own worker: not the owner (unless the belief is behind).
    const other = w.sessionOf(o.worker, Math.floor(ctx.r[2]! * w.sessionsPerWorker));
    await executorCall(ctx, o.worker, {
      op: 'heartbeat',
      variant: 'non_owner',
      slot: slot.k,
      target: o.id,
      method: 'POST',
      path,
      body: { executionSessionId: other, epoch: Math.max(1, b.epoch) },
    });
  } else if (w.workers > 1) {
    // Another worker's executor naming the owner's session: an impersonation.
    const intruder = (o.worker + 1 + Math.floor(ctx.r[2]! * (w.workers - 1))) % w.workers;
    await executorCall(ctx, intruder, {
      op: 'heartbeat',
      variant: 'other_worker',
      mustRefuse: true,
      slot: slot.k,
      target: o.id,
      method: 'POST',
      path,
      body: { executionSessionId: o.session, epoch: Math.max(1, b.epoch) },
    });
  }
}

async function handoff(ctx: OpContext): Promise<void> {
  const { slot, b } = slotOf(ctx);
  const o = ownerOf(ctx, b);
  if (!o) return bind(ctx);
  const w = ctx.world;
  const crossWorker = w.features.handoffToWorker && w.workers > 1 && ctx.r[2]! < 0.5;
  const toWorker = crossWorker ? (o.worker + 1 + Math.floor(ctx.r[3]! * (w.workers - 1))) % w.workers : o.worker;
  let to = w.sessionOf(toWorker, Math.floor(ctx.r[4]! * w.sessionsPerWorker));
  if (to === o.session) to = w.sessionOf(toWorker, Math.floor(ctx.r[4]! * w.sessionsPerWorker) + 1);
  const e = epochFor(ctx, b, ctx.r[1]!, 0.15);
  const body: Record<string, unknown> = { executionSessionId: o.session, epoch: e.epoch, toExecutionSessionId: to, reason: 'torture handoff' };
  if (w.features.handoffToWorker && (crossWorker || ctx.r[5]! < 0.5)) body.toWorkerId = w.executor(toWorker).workerId;
  await executorCall(ctx, o.worker, {
    op: 'handoff',
    variant: `${crossWorker ? 'other_worker' : 'same_worker'}${e.variant === 'owner' ? '' : `:${e.variant}`}`,
    mustRefuse: e.mustRefuse,
    slot: slot.k,
    target: o.id,
    method: 'POST',
    path: own(o.id, 'handoff'),
    body,
  });
}

/** By the successor's own worker; or the hijack: another worker's executor naming the successor's session. */
async function accept(ctx: OpContext): Promise<void> {
  const { slot, b } = slotOf(ctx);
  const h = b.handoff ?? (ctx.r[5]! < 0.3 ? b.lastHandoff : null);
  if (!h || !b.ownershipId) return handoff(ctx);
  const w = ctx.world;
  const home = w.homeOf(h.toSession);
  if (home === undefined) return look(ctx);
  const x = ctx.r[1]!;
  const path = own(b.ownershipId, 'handoff/accept');
  const body = { executionSessionId: h.toSession, handoffId: h.handoffId, runtime: 'claude-code' };
  if (x < 0.65 || w.workers < 2) {
    await executorCall(ctx, home, {
      op: 'accept',
      variant: b.handoff ? 'successor' : 'late_successor',
      slot: slot.k,
      target: b.ownershipId,
      method: 'POST',
      path,
      body,
    });
  } else if (x < 0.9) {
    const intruder = (home + 1 + Math.floor(ctx.r[2]! * (w.workers - 1))) % w.workers;
    await executorCall(ctx, intruder, { op: 'accept', variant: 'hijack', mustRefuse: true, slot: slot.k, target: b.ownershipId, method: 'POST', path, body });
  } else {
    await executorCall(ctx, home, {
      op: 'accept',
      variant: 'wrong_handoff_id',
      mustRefuse: true,
      slot: slot.k,
      target: b.ownershipId,
      method: 'POST',
      path,
      body: { ...body, handoffId: `hof_bogus_${ctx.intent}` },
    });
  }
}

async function cancel(ctx: OpContext): Promise<void> {
  const { slot, b } = slotOf(ctx);
  const o = ownerOf(ctx, b);
  if (!o) return look(ctx);
  await executorCall(ctx, o.worker, {
    op: 'cancel',
    variant: b.handoff ? 'pending' : 'none_known',
    slot: slot.k,
    target: o.id,
    method: 'POST',
    path: own(o.id, 'handoff/cancel'),
    body: { executionSessionId: o.session, epoch: Math.max(1, b.epoch) },
  });
}

async function release(ctx: OpContext): Promise<void> {
  const { slot, b } = slotOf(ctx);
  const o = ownerOf(ctx, b);
  if (!o) return bind(ctx);
  const e = epochFor(ctx, b, ctx.r[1]!, 0.2);
  await executorCall(ctx, o.worker, {
    op: 'release',
    variant: e.variant,
    mustRefuse: e.mustRefuse,
    slot: slot.k,
    target: o.id,
    method: 'POST',
    path: own(o.id, 'release'),
    body: { executionSessionId: o.session, epoch: e.epoch, reason: 'torture release' },
  });
}

async function reclaim(ctx: OpContext): Promise<void> {
  const { slot, b } = slotOf(ctx);
  if (!b.ownershipId) return bind(ctx);
  const w = ctx.world;
  const worker = Math.floor(ctx.r[2]! * w.workers);
  const session = w.sessionOf(worker, Math.floor(ctx.r[3]! * w.sessionsPerWorker));
  const path = own(b.ownershipId, 'reclaim');
  const x = ctx.r[1]!;
  const base = { slot: slot.k, target: b.ownershipId, method: 'POST' as const, path, op: 'reclaim' as const };
  const admin = (variant: string, body: Record<string, unknown>, mustRefuse = false) =>
    ctx.call({ ...base, variant, mustRefuse, caller: { kind: 'admin' }, token: w.target.admin, body });
  if (x < 0.6) {
    await admin('forced', {
      executionSessionId: session,
      worker: { workerId: w.executor(worker).workerId },
      runtime: 'codex-cli',
      force: true,
      reason: 'torture: forced reclaim',
    });
  } else if (x < 0.75) {
    await executorCall(ctx, worker, { ...base, variant: 'unforced', body: { executionSessionId: session, runtime: 'codex-cli' } });
  } else if (x < 0.88) {
    await executorCall(ctx, worker, {
      ...base,
      variant: 'executor_force',
      mustRefuse: true,
      body: { executionSessionId: session, force: true, reason: 'not an admin' },
    });
  } else {
    await admin('force_without_reason', { executionSessionId: session, worker: { workerId: w.executor(worker).workerId }, force: true }, true);
  }
}

/** The owner commits real work in the worktree, then submits its head. */
async function submit(ctx: OpContext): Promise<void> {
  const { slot, b } = slotOf(ctx);
  const o = ownerOf(ctx, b);
  if (!o) return bind(ctx);
  const e = epochFor(ctx, b, ctx.r[1]!, 0.15);
  let head: string;
  try {
    head = e.mustRefuse ? await headOf(slot) : await commitWork(slot, `${ctx.intent}`);
  } catch {
    return; // the worktree is being recycled
  }
  await executorCall(ctx, o.worker, {
    op: 'submit',
    variant: e.variant,
    mustRefuse: e.mustRefuse,
    slot: slot.k,
    target: o.id,
    method: 'POST',
    path: own(o.id, 'submit'),
    body: { executionSessionId: o.session, epoch: e.epoch, head },
  });
}

/** The landing controller records a landing of the worktree's real head (fast-forward onto main). */
async function landed(ctx: OpContext): Promise<void> {
  const { slot, b } = slotOf(ctx);
  if (!b.ownershipId) return bind(ctx);
  let head: string;
  try {
    head = await headOf(slot);
  } catch {
    return;
  }
  const rec = await ctx.call({
    op: 'landed',
    variant: b.state === 'submitted' ? 'submitted' : `from_${b.state ?? 'unknown'}`,
    caller: { kind: 'landing' },
    token: ctx.world.target.landing,
    slot: slot.k,
    target: b.ownershipId,
    method: 'POST',
    path: own(b.ownershipId, 'landed'),
    body: { sourceHead: head, landedBranch: 'main', landedHead: head, landedAt: new Date().toISOString() },
  });
  if (rec.status === 200 && rec.answer?.landingStatus === 'recorded' && b.ownershipId === rec.target) b.state = 'landed';
}

async function plan(ctx: OpContext): Promise<void> {
  const { slot, b } = slotOf(ctx);
  const o = ownerOf(ctx, b);
  if (!o) return look(ctx);
  const e = epochFor(ctx, b, ctx.r[1]!, 0.15);
  const body = {
    executionSessionId: o.session,
    epoch: e.epoch,
    lane: `lane-${slot.k}-${ctx.intent % 7}`,
    planRef: `docs/plans/${slot.name}-${ctx.intent % 5}.md`,
  };
  await executorCall(ctx, o.worker, {
    op: 'plan',
    variant: e.variant,
    mustRefuse: e.mustRefuse,
    slot: slot.k,
    target: o.id,
    method: 'POST',
    path: own(o.id, 'plan'),
    body,
  });
}

/** Refreshes the belief from the durable record (most recent ownership of the worktree path). */
async function look(ctx: OpContext): Promise<void> {
  const { slot } = slotOf(ctx);
  await ctx.call({
    op: 'get',
    variant: 'by_path',
    caller: { kind: 'reader' },
    token: ctx.world.target.reader,
    slot: slot.k,
    method: 'GET',
    path: `/v1/ownership?worktreePath=${encodeURIComponent(slot.path)}`,
  });
}

/**
 * A landed worktree is removed and the service told; it comes back at the same path on a fresh
 * branch, so the next bind starts a new lifecycle of the same worktree (same workflow id, new run).
 */
async function recycle(ctx: OpContext): Promise<void> {
  const { slot, b } = slotOf(ctx);
  if (!b.ownershipId || b.recycling) return look(ctx);
  // Claimed before the first await: two intents never remove the same worktree (or its next generation).
  b.recycling = true;
  const w = ctx.world;
  const id = b.ownershipId;
  const get = () =>
    ctx.call({
      op: 'get',
      variant: 'recycle',
      caller: { kind: 'reader' },
      token: w.target.reader,
      slot: slot.k,
      target: id,
      method: 'GET',
      path: `/v1/ownerships/${id}`,
    });
  try {
    const now = await get();
    if (now.answer?.state === 'closed') return w.forget(slot.k); // recycled already
    if (now.answer?.state !== 'landed') return;
    await removeWorktree(slot);
    await ctx.call({
      op: 'worktreeRemoved',
      variant: 'after_landing',
      caller: { kind: 'landing' },
      token: w.target.landing,
      slot: slot.k,
      target: id,
      method: 'POST',
      path: own(id, 'worktree-removed'),
      body: { reason: 'torture: landed and removed' },
    });
    for (let i = 0; i < 50; i++) {
      const r = await get();
      if (r.answer?.state === 'closed') break;
      await new Promise((res) => setTimeout(res, 100));
    }
    await readdWorktree(slot);
    w.forget(slot.k);
  } finally {
    w.beliefs[slot.k]!.recycling = false;
  }
}

export const OPERATIONS: Readonly<Record<OpKind, (ctx: OpContext) => Promise<void>>> = {
  bind,
  bindRace,
  bindSpoofedRoot,
  heartbeat,
  handoff,
  accept,
  cancel,
  release,
  reclaim,
  submit,
  landed,
  recycle,
  plan,
  look,
};
