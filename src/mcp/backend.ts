import { ApiError, type ApiClient } from '../api/client';
import type { ErrorBody } from '../contract/errors';
import { toFailure } from '../api/errors';
import type { OwnershipService } from '../api/service';
import type { Principal } from '../domain/identity';
import type { ToolBackend } from './tools';

/** The tools on the service itself, for one authenticated principal. */
export function directBackend(svc: OwnershipService, principal: Principal): ToolBackend {
  return {
    bind: (input) => svc.bind(principal, input),
    get: (input) => svc.get(principal, input),
    list: (input) => svc.list(principal, input),
    history: (input) => svc.history(principal, input),
    provenance: (commit, repo) => svc.provenance(principal, commit, repo),
    heartbeat: (id, input) => svc.heartbeat(principal, id, input),
    release: (id, input) => svc.release(principal, id, input),
    handoff: (id, input) => svc.handoff(principal, id, input),
    acceptHandoff: (id, input) => svc.acceptHandoff(principal, id, input),
    cancelHandoff: (id, input) => svc.cancelHandoff(principal, id, input),
    submit: (id, input) => svc.submit(principal, id, input),
    reclaim: (id, input) => svc.reclaim(principal, id, input),
    tenure: (id, input) => svc.tenure(principal, id, input),
    grantHold: (id, input) => svc.grantHold(principal, id, input),
    holdHeartbeat: (id, holdId, input) => svc.holdHeartbeat(principal, id, holdId, input),
    endHold: (id, holdId, input) => svc.endHold(principal, id, holdId, input),
    observe: (input) => svc.observe(principal, input),
    leaveObserve: (input) => svc.leaveObserve(principal, input),
    removeWorktree: (input) => svc.removeWorktree(principal, input),
  };
}

/** The tools through the HTTP API (which runs the same handlers): the principal is the token's. */
export function remoteBackend(api: ApiClient): ToolBackend {
  return {
    bind: (input) => api.bind(input),
    get: (input) => api.get(input),
    list: (input) => api.list(input),
    history: (input) => api.history(input),
    provenance: (commit, repo) => api.provenance(commit, repo),
    heartbeat: (id, input) => api.heartbeat(id, input),
    release: (id, input) => api.release(id, input),
    handoff: (id, input) => api.handoff(id, input),
    acceptHandoff: (id, input) => api.acceptHandoff(id, input),
    cancelHandoff: (id, input) => api.cancelHandoff(id, input),
    submit: (id, input) => api.submit(id, input),
    reclaim: (id, input) => api.reclaim(id, input),
    tenure: (id, input) => api.tenure(id, input),
    grantHold: (id, input) => api.grantHold(id, input),
    holdHeartbeat: (id, holdId, input) => api.holdHeartbeat(id, holdId, input),
    endHold: (id, holdId, input) => api.endHold(id, holdId, input),
    observe: (input) => api.observe(input),
    leaveObserve: (input) => api.leaveObserve(input),
    removeWorktree: (input) => api.removeWorktree(input),
  };
}

/** An API refusal passes through as it came; anything else is mapped like the API maps it. */
export function remoteErrorBody(err: unknown): ErrorBody {
  if (err instanceof ApiError) return err.body;
  if (err instanceof Error && err.name === 'ApiUnreachableError') return { code: 'unavailable', message: err.message };
  return toFailure(err).body;
}
