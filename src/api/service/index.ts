import type { Principal } from '../../domain/identity';
import type { Observation } from '../../domain/binding';
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
import type {
  AcceptHandoffBody,
  BindBody,
  CancelHandoffBody,
  EndHoldBody,
  GrantHoldBody,
  HoldHeartbeatBody,
  GetQuery,
  HandoffBody,
  HeartbeatBody,
  HistoryQuery,
  LandedBody,
  LandingBody,
  ListQuery,
  OverrideBody,
  PlanBody,
  ReclaimBody,
  ReleaseBody,
  RenameBranchBody,
  SubmitBody,
  TenureBody,
  WorktreeRemovedBody,
} from '../../contract/http';

export type { ServiceDeps } from './context';

/**
 * The operations of the HTTP API and the MCP tools, bound to their dependencies. Every one takes
 * the authenticated principal and a validated input, authorizes, and returns redacted output; it
 * throws OwnershipError with a reason code (or a backing-service error, mapped to 503).
 */
export function createService(deps: ServiceDeps) {
  return {
    bind: (p: Principal, b: BindBody, c?: MessageContext) => own.bind(deps, p, b, c),
    heartbeat: (p: Principal, id: string, b: HeartbeatBody) => own.heartbeat(deps, p, id, b),
    handoff: (p: Principal, id: string, b: HandoffBody, c?: MessageContext) => own.handoff(deps, p, id, b, c),
    acceptHandoff: (p: Principal, id: string, b: AcceptHandoffBody, c?: MessageContext) => own.acceptHandoff(deps, p, id, b, c),
    cancelHandoff: (p: Principal, id: string, b: CancelHandoffBody, c?: MessageContext) => own.cancelHandoff(deps, p, id, b, c),
    release: (p: Principal, id: string, b: ReleaseBody, c?: MessageContext) => own.release(deps, p, id, b, c),
    reclaim: (p: Principal, id: string, b: ReclaimBody, c?: MessageContext) => own.reclaim(deps, p, id, b, c),
    submit: (p: Principal, id: string, b: SubmitBody, c?: MessageContext) => own.submit(deps, p, id, b, c),
    bindPlan: (p: Principal, id: string, b: PlanBody, c?: MessageContext) => own.bindPlan(deps, p, id, b, c),
    renameBranch: (p: Principal, id: string, b: RenameBranchBody, c?: MessageContext) => own.renameBranch(deps, p, id, b, c),
    grantHold: (p: Principal, id: string, b: GrantHoldBody, c?: MessageContext) => grantHold(deps, p, id, b, c),
    holdHeartbeat: (p: Principal, id: string, holdId: string, b: HoldHeartbeatBody) => holdHeartbeat(deps, p, id, holdId, b),
    endHold: (p: Principal, id: string, holdId: string, b: EndHoldBody, c?: MessageContext) => endHold(deps, p, id, holdId, b, c),
    landed: (p: Principal, id: string, b: LandedBody) => landed(deps, p, id, b),
    worktreeRemoved: (p: Principal, id: string, b: WorktreeRemovedBody) => own.worktreeRemoved(deps, p, id, b),
    tenure: (p: Principal, id: string, b: TenureBody) => tenure(deps, p, id, b),
    override: (p: Principal, id: string, b: OverrideBody) => override(deps, p, id, b),
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
