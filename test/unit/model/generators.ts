import fc from 'fast-check';
import type { Actor, ModelCommand, ModelWorktree, Party } from './reference';

/**
 * Random command sequences over a few workers, sessions and worktrees. Commands are symbolic
 * ("the owner's session", "the current epoch minus one", "a stale handoff id") and resolved
 * against the model just before they run, so shrinking keeps them meaningful: a shrunk sequence
 * still aims at the owner it aimed at before.
 */

export const WORKERS = ['w1', 'w2', 'w3'] as const;
export const SESSIONS = ['s1', 's2', 's3', 's4', 's5'] as const;
export const HEADS = ['a'.repeat(40), 'b'.repeat(40), 'c'.repeat(40)] as const;

/** A session: the current owner's, the pending handoff's successor, or a fixed one. */
export type SessionRef = 'owner' | 'target' | number;
export type WorkerRef = 'owner' | 'target' | number;
export type EpochRef = 'current' | 'previous' | 'next';
/** Who sends it: the executor of the worker the message names ('self'), another worker's executor, or an admin. */
export type PrincipalRef = 'self' | 'admin' | { executorOf: number };
export type AddressRef = 'none' | 'right' | 'wrong';

type Base = { wt: number };
type OwnerOnlySym = { session: SessionRef; epoch: EpochRef; principal: PrincipalRef; addr: AddressRef };
export type SymCommand = Base &
  (
    | { op: 'bind'; session: SessionRef; worker: WorkerRef; principal: PrincipalRef; addr: AddressRef }
    | ({ op: 'handoff'; toSession: SessionRef; toWorker: number } & OwnerOnlySym)
    | { op: 'accept'; handoff: 'current' | 'stale' | 'bogus'; session: SessionRef; worker: WorkerRef; principal: PrincipalRef; addr: AddressRef }
    | ({ op: 'cancel' } & OwnerOnlySym)
    | { op: 'timeout' }
    | ({ op: 'release' } & OwnerOnlySym)
    | ({ op: 'submit' } & OwnerOnlySym)
    | {
        op: 'reclaim';
        session: SessionRef;
        worker: WorkerRef;
        principal: PrincipalRef;
        force: boolean;
        reason: boolean;
        verdict: 'alive' | 'dead' | 'unknown' | null;
        addr: AddressRef;
      }
    | { op: 'liveness'; verdict: 'alive' | 'dead' | 'unknown'; about: 'current' | 'previous_epoch' | 'other_session' }
    | { op: 'heartbeat'; session: SessionRef; epoch: EpochRef; addr: AddressRef }
    | { op: 'landed'; head: number; principal: 'landing' | 'admin' | 'executor'; addr: AddressRef }
    | { op: 'removed'; addr: AddressRef }
  );

export interface Scenario {
  worktrees: number;
  commands: SymCommand[];
}

const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });
const fixedSession = fc.integer({ min: 0, max: SESSIONS.length - 1 });
const fixedWorker = fc.integer({ min: 0, max: WORKERS.length - 1 });

const sessionRef = (owner: number, target: number, fixed: number): fc.Arbitrary<SessionRef> =>
  fc.oneof(w(owner, fc.constant('owner' as const)), w(target, fc.constant('target' as const)), w(fixed, fixedSession));
const workerRef = (owner: number, target: number, fixed: number): fc.Arbitrary<WorkerRef> =>
  fc.oneof(w(owner, fc.constant('owner' as const)), w(target, fc.constant('target' as const)), w(fixed, fixedWorker));
const epochRef: fc.Arbitrary<EpochRef> = fc.oneof(
  w(8, fc.constant('current' as const)),
  w(1, fc.constant('previous' as const)),
  w(1, fc.constant('next' as const)),
);
const principalRef: fc.Arbitrary<PrincipalRef> = fc.oneof(
  w(8, fc.constant('self' as const)),
  w(1, fc.constant('admin' as const)),
  w(
    1,
    fixedWorker.map((i) => ({ executorOf: i })),
  ),
);
const addrRef: fc.Arbitrary<AddressRef> = fc.oneof(
  w(7, fc.constant('none' as const)),
  w(2, fc.constant('right' as const)),
  w(1, fc.constant('wrong' as const)),
);
const ownerOnly = { session: sessionRef(8, 1, 1), epoch: epochRef, principal: principalRef, addr: addrRef };

function commandArb(): fc.Arbitrary<SymCommand> {
  const wt = fc.nat({ max: 2 });
  const op = <T extends object>(weight: number, fields: { [K in keyof T]: fc.Arbitrary<T[K]> }) =>
    w(weight, fc.record({ wt, ...fields } as never) as fc.Arbitrary<SymCommand>);
  return fc.oneof(
    // bind: a fresh session, the owner replaying (same session and worker), or the owner's session named by another worker
    op(5, { op: fc.constant('bind'), session: sessionRef(3, 1, 5), worker: workerRef(3, 0, 3), principal: principalRef, addr: addrRef }),
    op(3, { op: fc.constant('handoff'), ...ownerOnly, toSession: sessionRef(1, 0, 8), toWorker: fixedWorker }),
    op(5, {
      op: fc.constant('accept'),
      handoff: fc.oneof(w(6, fc.constant('current' as const)), w(1, fc.constant('stale' as const)), w(1, fc.constant('bogus' as const))),
      session: sessionRef(1, 6, 1),
      worker: workerRef(1, 6, 2),
      principal: principalRef,
      addr: addrRef,
    }),
    op(1, { op: fc.constant('cancel'), ...ownerOnly }),
    op(1, { op: fc.constant('timeout') }),
    op(2, { op: fc.constant('release'), ...ownerOnly }),
    op(1, { op: fc.constant('submit'), ...ownerOnly }),
    op(3, {
      op: fc.constant('reclaim'),
      session: sessionRef(1, 0, 6),
      worker: workerRef(1, 0, 3),
      principal: fc.oneof(
        w(5, fc.constant('self' as const)),
        w(3, fc.constant('admin' as const)),
        w(
          1,
          fixedWorker.map((i) => ({ executorOf: i })),
        ),
      ),
      force: fc.boolean(),
      reason: fc.boolean(),
      verdict: fc.constantFrom('alive' as const, 'dead' as const, 'unknown' as const, null),
      addr: addrRef,
    }),
    op(3, {
      op: fc.constant('liveness'),
      verdict: fc.oneof(w(4, fc.constant('dead' as const)), w(1, fc.constant('alive' as const)), w(1, fc.constant('unknown' as const))),
      about: fc.oneof(w(4, fc.constant('current' as const)), w(1, fc.constant('previous_epoch' as const)), w(1, fc.constant('other_session' as const))),
    }),
    op(3, { op: fc.constant('heartbeat'), session: sessionRef(6, 0, 2), epoch: epochRef, addr: addrRef }),
    op(1, {
      op: fc.constant('landed'),
      head: fc.nat({ max: HEADS.length - 1 }),
      principal: fc.oneof(w(6, fc.constant('landing' as const)), w(1, fc.constant('admin' as const)), w(1, fc.constant('executor' as const))),
      addr: addrRef,
    }),
    op(1, { op: fc.constant('removed'), addr: addrRef }),
  );
}

/** Most sequences start by binding their worktrees, so that the rest of the sequence has an ownership to work on. */
const openingBinds = fc.array(
  fc
    .record({ wt: fc.nat({ max: 2 }), session: fixedSession, worker: fixedWorker })
    .map(({ wt, session, worker }): SymCommand => ({ wt, op: 'bind', session, worker, principal: 'self', addr: 'none' })),
  { maxLength: 3 },
);

export function scenarioArb(maxLength = 30): fc.Arbitrary<Scenario> {
  return fc
    .record({ worktrees: fc.integer({ min: 2, max: 3 }), opening: openingBinds, rest: fc.array(commandArb(), { maxLength, size: 'max' }) })
    .map(({ worktrees, opening, rest }) => ({ worktrees, commands: [...opening, ...rest].slice(0, maxLength) }));
}

/** What resolution may read besides the model: the environment's choices (the workflow's handoff id). */
export interface ResolveEnv {
  wrongOwnershipId: string;
  nextHandoffId: string;
}

/**
 * Turns a symbolic command into a concrete one, reading only the model. With no owner (or no
 * handoff), 'owner' and 'target' fall back to the first session and worker.
 */
export function resolve(c: SymCommand, m: ModelWorktree, env: ResolveEnv): ModelCommand {
  // After an accepted handoff the successor is the owner: 'target' then replays its accept.
  const lastTarget: Party | undefined = m.handoff?.to ?? (m.tenureVia === 'handoff' && m.owner ? m.owner : undefined);
  const session = (r: SessionRef): string =>
    r === 'owner' ? (m.owner?.session ?? SESSIONS[0]) : r === 'target' ? (lastTarget?.session ?? SESSIONS[1]) : SESSIONS[r]!;
  const worker = (r: WorkerRef): string =>
    r === 'owner' ? (m.owner?.worker ?? WORKERS[0]) : r === 'target' ? (lastTarget?.worker ?? WORKERS[1]) : WORKERS[r]!;
  const current = Math.max(1, m.epoch);
  const epoch = (r: EpochRef): number => (r === 'current' ? current : r === 'next' ? current + 1 : current > 1 ? current - 1 : current + 2);
  const actor = (p: PrincipalRef, forWorker: string): Actor =>
    p === 'self' ? { kind: 'executor', worker: forWorker } : p === 'admin' ? { kind: 'admin' } : { kind: 'executor', worker: WORKERS[p.executorOf]! };
  const address = (a: AddressRef) => (a === 'none' ? {} : { ownershipId: a === 'right' ? m.ownershipId : env.wrongOwnershipId });
  const ownerWorker = m.owner?.worker ?? WORKERS[0];
  switch (c.op) {
    case 'bind': {
      const wk = worker(c.worker);
      return { op: 'bind', session: session(c.session), worker: wk, actor: actor(c.principal, wk), ...address(c.addr) };
    }
    case 'handoff':
      return {
        op: 'handoff',
        session: session(c.session),
        epoch: epoch(c.epoch),
        actor: actor(c.principal, ownerWorker),
        to: { session: session(c.toSession), worker: WORKERS[c.toWorker]! },
        handoffId: env.nextHandoffId,
        ...address(c.addr),
      };
    case 'accept': {
      const wk = worker(c.worker);
      const stale = m.issuedHandoffs.filter((id) => id !== m.handoff?.id).at(-1) ?? 'hof_never_offered';
      const handoffId = c.handoff === 'current' ? (m.handoff?.id ?? m.issuedHandoffs.at(-1) ?? 'hof_none') : c.handoff === 'stale' ? stale : 'hof_bogus';
      return { op: 'accept', handoffId, session: session(c.session), worker: wk, actor: actor(c.principal, wk), ...address(c.addr) };
    }
    case 'cancel':
    case 'release':
    case 'submit':
      return { op: c.op, session: session(c.session), epoch: epoch(c.epoch), actor: actor(c.principal, ownerWorker), ...address(c.addr) };
    case 'timeout':
      return { op: 'timeout' };
    case 'reclaim': {
      const wk = worker(c.worker);
      return {
        op: 'reclaim',
        session: session(c.session),
        worker: wk,
        actor: actor(c.principal, wk),
        force: c.force,
        reason: c.reason,
        verdict: c.verdict,
        ...address(c.addr),
      };
    }
    case 'liveness': {
      const owner = m.owner?.session ?? SESSIONS[0];
      if (c.about === 'current') return { op: 'liveness', verdict: c.verdict, session: owner, epoch: m.epoch };
      if (c.about === 'previous_epoch') return { op: 'liveness', verdict: c.verdict, session: owner, epoch: m.epoch - 1 };
      return { op: 'liveness', verdict: c.verdict, session: SESSIONS.find((s) => s !== owner)!, epoch: m.epoch };
    }
    case 'heartbeat':
      return { op: 'heartbeat', session: session(c.session), epoch: epoch(c.epoch), ...address(c.addr) };
    case 'landed': {
      const a: Actor =
        c.principal === 'landing' ? { kind: 'landing' } : c.principal === 'admin' ? { kind: 'admin' } : { kind: 'executor', worker: ownerWorker };
      return { op: 'landed', head: HEADS[c.head]!, actor: a, ...address(c.addr) };
    }
    case 'removed':
      return { op: 'removed', actor: { kind: 'system' }, ...address(c.addr) };
  }
}
