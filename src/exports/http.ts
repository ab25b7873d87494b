/**
 * `worktree-ownership/http`: the typed client of the HTTP API (the one od-worktree uses), for an
 * orchestrator that talks to the service with a bearer token. Loads no zod, Temporal, PostgreSQL
 * or fastify: answers are typed, not re-validated (the schemas are in `worktree-ownership/schemas`).
 */
import { WIRE_MAJOR, type VersionInfo } from '../version';

export { ApiClient, ApiError, ApiUnreachableError, DEFAULT_API_URL, type ApiClientOptions } from '../api/client';
export { PACKAGE_VERSION, WIRE_MAJOR, WIRE_VERSION, VERSION_INFO, type VersionInfo } from '../version';
export type {
  AcceptHandoffBody,
  BindBody,
  BranchStatusWire,
  CancelHandoffBody,
  ClaimResponse,
  ConversationReportResponse,
  GetQuery,
  HandoffBody,
  HeartbeatBody,
  HistoryQuery,
  HistoryResponse,
  LandedBody,
  LandingBody,
  LandingResponse,
  ListQuery,
  ListResponse,
  Liveness,
  OverrideBody,
  OverrideResponse,
  OwnershipViewOut,
  PlanBody,
  ReclaimBody,
  ReleaseBody,
  RenameBranchBody,
  SubmitBody,
  TenureBody,
  TenureOut,
  WireRecord,
  WorktreeRemovedBody,
} from '../contract/http';
export type { Caller, ReconciliationBody } from '../contract/reconcile';
export type { ErrorBody } from '../contract/errors';
export type { HealthReport } from '../contract/health';
export type { Provenance } from '../contract/provenance';
export type { ReasonCode } from '../domain/reasons';

export interface ServiceVersion extends VersionInfo {
  /** the service's wire MAJOR equals this client's (WIRE_MAJOR): every route and body of this client means the same there */
  compatible: boolean;
}

/**
 * The version a service advertises in GET /healthz (public, no token), whether it is healthy or
 * not (503 carries the same body). null: nothing answered, or a service too old to say.
 */
export async function fetchServiceVersion(baseUrl: string, opts: { timeoutMs?: number } = {}): Promise<ServiceVersion | null> {
  let body: unknown;
  try {
    const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/healthz`, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
    });
    body = await res.json();
  } catch {
    return null;
  }
  const v = (body as { version?: unknown } | null)?.version as Partial<VersionInfo> | undefined;
  if (typeof v?.package !== 'string' || typeof v.wire !== 'string' || !/^\d+\.\d+$/.test(v.wire)) return null;
  return { package: v.package, wire: v.wire, compatible: Number(v.wire.split('.')[0]) === WIRE_MAJOR };
}
