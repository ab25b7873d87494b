import type { ReasonCode } from '../../../src/domain/reasons';

/**
 * A reference model of one worktree's ownership, written from the rules of the ownership state
 * machine (docs/ownership-record.md#states), not from decide.ts: it is the specification the real
 * decisions are checked against. Commands here are concrete (already resolved); the model only
 * says what the outcome must be and what the worktree looks like afterwards.
 */

export type ModelState = 'none' | 'active' | 'handoff_pending' | 'stale' | 'released' | 'submitted' | 'landed' | 'closed';
export interface Party {
  session: string;
  worker: string;
}
export type Actor = { kind: 'executor'; worker: string } | { kind: 'admin' } | { kind: 'landing' } | { kind: 'system' };
export type Verdict = 'alive' | 'dead' | 'unknown' | null;

export interface ModelWorktree {
  readonly ownershipId: string;
  state: ModelState;
  /** The latest tenure's owner; kept after release and landing (it is who released or landed). */
  owner: Party | null;
  epoch: number;
  handoff: { id: string; to: Party } | null;
  removed: boolean;
  /** How the current tenure began: only a tenure begun by accepting a handoff can see an accept replayed. */
  tenureVia: 'bind' | 'handoff' | 'reclaim' | null;
  /** the handoff the current tenure accepted: a replayed accept must name it */
  tenureHandoffId?: string | null;
  landedHeads: string[];
  /** Every handoff id ever offered here (the generator picks stale ones from it). */
  issuedHandoffs: string[];
}

type OwnerOnly = { session: string; epoch: number; actor: Actor; ownershipId?: string };
export type ModelCommand =
  | { op: 'bind'; session: string; worker: string; actor: Actor; ownershipId?: string }
  | ({ op: 'handoff'; to: Party; handoffId: string } & OwnerOnly)
  | { op: 'accept'; handoffId: string; session: string; worker: string; actor: Actor; ownershipId?: string }
  | ({ op: 'cancel' } & OwnerOnly)
  | { op: 'timeout' }
  | ({ op: 'release' } & OwnerOnly)
  | ({ op: 'submit' } & OwnerOnly)
  | { op: 'reclaim'; session: string; worker: string; actor: Actor; force: boolean; reason: boolean; verdict: Verdict; ownershipId?: string }
  | { op: 'liveness'; session: string; epoch: number; verdict: 'alive' | 'dead' | 'unknown' }
  | { op: 'heartbeat'; session: string; epoch: number; ownershipId?: string }
  | { op: 'landed'; head: string; actor: Actor; ownershipId?: string }
  | { op: 'removed'; actor: Actor; ownershipId?: string };

/** `code` is set where the rules name the reason; otherwise any refusal agrees. */
export type Outcome = { kind: 'changed' } | { kind: 'noop' } | { kind: 'refused'; code?: ReasonCode };

export function initialWorktree(ownershipId: string): ModelWorktree {
  return { ownershipId, state: 'none', owner: null, epoch: 0, handoff: null, removed: false, tenureVia: null, landedHeads: [], issuedHandoffs: [] };
}

const refused = (code?: ReasonCode): Outcome => (code ? { kind: 'refused', code } : { kind: 'refused' });
const CHANGED: Outcome = { kind: 'changed' };
const NOOP: Outcome = { kind: 'noop' };
const ENDED: ModelState[] = ['landed', 'closed'];

/** Executors act only for their own worker; admins (and the system) for any. */
function actorFor(actor: Actor, worker: string | undefined): Outcome | null {
  if (actor.kind === 'admin' || actor.kind === 'system') return null;
  if (actor.kind !== 'executor') return refused();
  return actor.worker === worker ? null : refused('worker_mismatch');
}

const misaddressed = (m: ModelWorktree, ownershipId: string | undefined) => ownershipId !== undefined && ownershipId !== m.ownershipId;

/** Owner-only messages, refusals in the specified order: lifecycle, closed, owner, epoch, worker. */
function ownerOnly(m: ModelWorktree, c: OwnerOnly): Outcome | null {
  if (m.state === 'none') return refused('not_found');
  if (misaddressed(m, c.ownershipId)) return refused('ownership_mismatch');
  if (ENDED.includes(m.state)) return refused('ownership_closed');
  if (m.owner?.session !== c.session) return refused('not_owner');
  if (m.epoch !== c.epoch) return refused('stale_epoch');
  return actorFor(c.actor, m.owner.worker);
}

function newTenure(m: ModelWorktree, owner: Party, via: ModelWorktree['tenureVia'], handoffId: string | null = null): Outcome {
  m.owner = owner;
  m.epoch += 1;
  m.state = 'active';
  m.handoff = null;
  m.tenureVia = via;
  m.tenureHandoffId = handoffId;
  return CHANGED;
}

/** Applies one command to the model (mutating it) and returns what the outcome must be. */
export function step(m: ModelWorktree, c: ModelCommand): Outcome {
  switch (c.op) {
    case 'bind': {
      const denied = actorFor(c.actor, c.worker);
      if (denied) return denied;
      // No lifecycle yet: the first bind creates it, so there is none it could misname.
      if (m.state === 'none') return newTenure(m, { session: c.session, worker: c.worker }, 'bind');
      if (misaddressed(m, c.ownershipId)) return refused('ownership_mismatch');
      if (ENDED.includes(m.state)) return refused('ownership_closed');
      if (m.state === 'released') return newTenure(m, { session: c.session, worker: c.worker }, 'bind');
      const replay = m.owner?.session === c.session && m.owner.worker === c.worker && ['active', 'handoff_pending', 'submitted'].includes(m.state);
      return replay ? NOOP : refused('worktree_owned');
    }
    case 'handoff': {
      const denied = ownerOnly(m, c);
      if (denied) return denied;
      // A retry of the pending handoff (same successor) is a replay: its first answer may have been lost.
      if (m.state === 'handoff_pending' && m.handoff && m.handoff.to.session === c.to.session && m.handoff.to.worker === c.to.worker) return NOOP;
      if (m.state !== 'active') return refused('invalid_state');
      if (c.to.session === c.session) return refused();
      m.state = 'handoff_pending';
      m.handoff = { id: c.handoffId, to: c.to };
      m.issuedHandoffs.push(c.handoffId);
      return CHANGED;
    }
    case 'accept': {
      const denied = actorFor(c.actor, c.worker);
      if (denied) return denied;
      if (m.state === 'none') return refused('not_found');
      if (misaddressed(m, c.ownershipId)) return refused('ownership_mismatch');
      if (
        m.state === 'active' &&
        m.tenureVia === 'handoff' &&
        m.owner?.session === c.session &&
        m.owner.worker === c.worker &&
        m.tenureHandoffId === c.handoffId
      )
        return NOOP;
      if (m.state !== 'handoff_pending' || !m.handoff) return refused('no_pending_handoff');
      const h = m.handoff;
      if (h.id !== c.handoffId || h.to.session !== c.session || h.to.worker !== c.worker) return refused('handoff_mismatch');
      return newTenure(m, h.to, 'handoff', h.id);
    }
    case 'cancel': {
      const denied = ownerOnly(m, c);
      if (denied) return denied;
      if (m.state !== 'handoff_pending') return refused('no_pending_handoff');
      m.state = 'active';
      m.handoff = null;
      return CHANGED;
    }
    case 'timeout':
      if (m.state !== 'handoff_pending') return NOOP;
      m.state = 'active';
      m.handoff = null;
      return CHANGED;
    case 'release': {
      if (
        m.state === 'released' &&
        m.owner?.session === c.session &&
        m.epoch === c.epoch &&
        !misaddressed(m, c.ownershipId) &&
        !actorFor(c.actor, m.owner.worker)
      ) {
        return NOOP;
      }
      const denied = ownerOnly(m, c);
      if (denied) return denied;
      if (!['active', 'handoff_pending', 'stale'].includes(m.state)) return refused('invalid_state');
      // A worktree that is gone has nothing left to claim: releasing it ends the lifecycle.
      m.state = m.removed ? 'closed' : 'released';
      m.handoff = null;
      return CHANGED;
    }
    case 'submit': {
      // Idempotent like every owner message: the owner repeating its submit changes nothing.
      if (
        m.state === 'submitted' &&
        m.owner?.session === c.session &&
        m.epoch === c.epoch &&
        !misaddressed(m, c.ownershipId) &&
        !actorFor(c.actor, m.owner.worker)
      ) {
        return NOOP;
      }
      const denied = ownerOnly(m, c);
      if (denied) return denied;
      if (m.state !== 'active') return refused('invalid_state');
      m.state = 'submitted';
      m.handoff = null;
      return CHANGED;
    }
    case 'reclaim': {
      const denied = actorFor(c.actor, c.worker);
      if (denied) return denied;
      if (m.state === 'none') return refused('not_found');
      if (misaddressed(m, c.ownershipId)) return refused('ownership_mismatch');
      if (ENDED.includes(m.state)) return refused('ownership_closed');
      // A forced reclaim is an admin's with a reason, whatever the state: a request without them is no replay of anything.
      if (c.force && c.actor.kind !== 'admin') return refused('force_requires_admin');
      if (c.force && !c.reason) return refused('force_requires_reason');
      // A retry of the reclaim that made this tenure is a replay.
      if (m.state === 'active' && m.tenureVia === 'reclaim' && m.owner?.session === c.session && m.owner.worker === c.worker) return NOOP;
      if (m.owner?.session === c.session) return refused();
      const next = { session: c.session, worker: c.worker };
      if (c.force) {
        if (c.actor.kind !== 'admin') return refused('force_requires_admin');
        if (!c.reason) return refused('force_requires_reason');
        return newTenure(m, next, 'reclaim');
      }
      if (m.state === 'stale') return newTenure(m, next, 'reclaim');
      if (m.state === 'released') return refused('invalid_state');
      return refused(c.verdict === 'unknown' ? 'liveness_unknown' : 'owner_alive');
    }
    case 'liveness':
      // A verdict is about one session at one epoch: about anyone else it proves nothing.
      if (c.verdict === 'dead' && m.state === 'active' && m.owner?.session === c.session && m.epoch === c.epoch) {
        m.state = 'stale';
        return CHANGED;
      }
      return NOOP;
    case 'heartbeat':
      if (m.state === 'none' || misaddressed(m, c.ownershipId)) return NOOP;
      if (m.state === 'stale' && m.owner?.session === c.session && m.epoch === c.epoch) {
        m.state = 'active';
        return CHANGED;
      }
      return NOOP;
    case 'landed': {
      if (m.state === 'none') return refused('not_found');
      if (c.actor.kind !== 'landing' && c.actor.kind !== 'admin') return refused();
      if (misaddressed(m, c.ownershipId)) return refused('ownership_mismatch');
      if (m.landedHeads.includes(c.head)) return NOOP;
      if (m.state === 'closed') return refused('ownership_closed');
      m.state = m.removed ? 'closed' : 'landed';
      m.handoff = null;
      m.landedHeads.push(c.head);
      return CHANGED;
    }
    case 'removed':
      if (m.state === 'none') return refused('not_found');
      if (misaddressed(m, c.ownershipId)) return refused('ownership_mismatch');
      if (m.removed) return NOOP;
      m.removed = true;
      if (m.state === 'landed' || m.state === 'released') m.state = 'closed';
      return CHANGED;
  }
}
