import type { Principal } from '../../domain/identity';
import type { Observation } from '../../domain/binding';
import type { AddressOf, BodyOf, OperationName, OutputOf } from '../../contract/operations';
import type { ServiceDeps } from './context';
import { reportConversation } from './executor';
import { land, landed } from './landings';
import { get, history, list, provenance } from './lookups';
import type { MessageContext } from './messages';
import * as own from './ownerships';
import { override, tenure } from './tenure';
import { leaveObserver, observersOf, registerObserver } from './observers';
import type { LeaveObserveBody, ObserveBody } from '../../contract/observers';
import type { RemoveWorktreeBody } from '../../contract/removal';
import { removeWorktree } from './removal';
import { endHold, grantHold, holdHeartbeat } from './holds';
import type { GetQuery, HistoryQuery, LandingBody, ListQuery } from '../../contract/http';

export type { ServiceDeps } from './context';

/** The handler of one operation of the table (src/contract/operations.ts): its address and body as the table types them. */
export type Handler<K extends OperationName> = (
  deps: ServiceDeps,
  p: Principal,
  at: AddressOf<K>,
  body: BodyOf<K>,
  ctx: MessageContext,
) => Promise<OutputOf<K>>;

/**
 * Each operation of the table, to the service function that decides it. Typed as the table says:
 * an operation added to the table without its handler here fails to compile.
 */
export const HANDLERS: { [K in OperationName]: Handler<K> } = {
  bind: (d, p, _at, b, c) => own.bind(d, p, b, c),
  heartbeat: (d, p, at, b) => own.heartbeat(d, p, at.id, b),
  handoff: (d, p, at, b, c) => own.handoff(d, p, at.id, b, c),
  acceptHandoff: (d, p, at, b, c) => own.acceptHandoff(d, p, at.id, b, c),
  cancelHandoff: (d, p, at, b, c) => own.cancelHandoff(d, p, at.id, b, c),
  release: (d, p, at, b, c) => own.release(d, p, at.id, b, c),
  reclaim: (d, p, at, b, c) => own.reclaim(d, p, at.id, b, c),
  submit: (d, p, at, b, c) => own.submit(d, p, at.id, b, c),
  bindPlan: (d, p, at, b, c) => own.bindPlan(d, p, at.id, b, c),
  renameBranch: (d, p, at, b, c) => own.renameBranch(d, p, at.id, b, c),
  landed: (d, p, at, b) => landed(d, p, at.id, b),
  worktreeRemoved: (d, p, at, b) => own.worktreeRemoved(d, p, at.id, b),
  grantHold: (d, p, at, b, c) => grantHold(d, p, at.id, b, c),
  holdHeartbeat: (d, p, at, b) => holdHeartbeat(d, p, at.id, at.holdId, b),
  endHold: (d, p, at, b, c) => endHold(d, p, at.id, at.holdId, b, c),
  tenure: (d, p, at, b) => tenure(d, p, at.id, b),
  override: (d, p, at, b) => override(d, p, at.id, b),
};

/**
 * An operation's handler as a surface holds it once the table's own schemas have validated its
 * input (the route's Fastify validation, the MCP tool's parseInput): the types widened to what
 * those schemas give. A method, so each operation's handler, typed against its schemas in
 * HANDLERS, is one of these without a cast.
 */
export interface ValidatedCall {
  call(p: Principal, at: Record<string, unknown>, body: Record<string, unknown>, ctx?: MessageContext): Promise<unknown>;
}

/**
 * The operations of the HTTP API and the MCP tools, bound to their dependencies. Every one takes
 * the authenticated principal and a validated input, authorizes, and returns redacted output; it
 * throws OwnershipError with a reason code (or a backing-service error, mapped to 503). The table's
 * operations go through `run`; the rest (lookups, observers, removal, landings by branch) are named.
 */
export function createService(deps: ServiceDeps) {
  const run = <K extends OperationName>(name: K, p: Principal, at: AddressOf<K>, body: BodyOf<K>, c: MessageContext = {}): Promise<OutputOf<K>> =>
    HANDLERS[name](deps, p, at, body, c);
  const handler =
    <K extends OperationName>(name: K) =>
    (p: Principal, at: AddressOf<K>, body: BodyOf<K>, c: MessageContext = {}): Promise<OutputOf<K>> =>
      run(name, p, at, body, c);
  return {
    run,
    /** One operation's handler with its dependencies bound, for the surfaces made from the table (routes, MCP tools). */
    validated: (name: OperationName): ValidatedCall => ({ call: handler(name) }),
    getById: (p: Principal, id: string) => own.getById(deps, p, id),
    land: (p: Principal, b: LandingBody) => land(deps, p, b),
    reportConversation: (p: Principal, o: Observation) => reportConversation(deps, p, o),
    get: (p: Principal, q: GetQuery) => get(deps, p, q),
    list: (p: Principal, q: ListQuery) => list(deps, p, q),
    history: (p: Principal, q: HistoryQuery) => history(deps, p, q),
    provenance: (p: Principal, sha: string, repo: string) => provenance(deps, p, sha, repo),
    observe: (p: Principal, b: ObserveBody) => registerObserver(deps, p, b),
    leaveObserve: (p: Principal, b: LeaveObserveBody) => leaveObserver(deps, p, b),
    removeWorktree: (p: Principal, b: RemoveWorktreeBody) => removeWorktree(deps, p, b),
    observersOf: (p: Principal, where: { hostId: string; worktreePath: string }) => observersOf(deps, p, where),
  };
}

export type OwnershipService = ReturnType<typeof createService>;
