import { ApiError, type ApiClient } from '../api/client';
import type { ErrorBody } from '../contract/errors';
import { toFailure } from '../api/errors';
import type { OwnershipService } from '../api/service';
import type { Principal } from '../domain/identity';
import type { ToolBackend } from './tools';

/** The tools on the service itself, for one authenticated principal. */
export function directBackend(svc: OwnershipService, principal: Principal): ToolBackend {
  return {
    run: (name, at, body) => svc.validated(name).call(principal, at, body),
    get: (input) => svc.get(principal, input),
    list: (input) => svc.list(principal, input),
    history: (input) => svc.history(principal, input),
    provenance: (commit, repo) => svc.provenance(principal, commit, repo),
    observe: (input) => svc.observe(principal, input),
    leaveObserve: (input) => svc.leaveObserve(principal, input),
    removeWorktree: (input) => svc.removeWorktree(principal, input),
  };
}

/** The tools through the HTTP API (which runs the same handlers): the principal is the token's. */
export function remoteBackend(api: ApiClient): ToolBackend {
  return {
    run: (name, at, body) => api.send(name, at, body),
    get: (input) => api.get(input),
    list: (input) => api.list(input),
    history: (input) => api.history(input),
    provenance: (commit, repo) => api.provenance(commit, repo),
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
