import http from 'node:http';
import https from 'node:https';
import type { Observation } from '../domain/binding';
import { DEFAULT_API_PORT } from '../contract/defaults';
import type { Provenance } from '../contract/provenance';
import type { ErrorBody } from '../contract/errors';
import type { Caller, ReconciliationBody } from '../contract/reconcile';
import type { LeaveObserveBody, LeaveObserveResponse, ObserveBody, ObserveResponse } from '../contract/observers';
import type { RemoveWorktreeBody, RemoveWorktreeResponse } from '../contract/removal';
import type {
  AcceptHandoffBody,
  BindBody,
  CancelHandoffBody,
  ClaimResponse,
  ConversationReportResponse,
  EndHoldBody,
  GrantHoldBody,
  GrantHoldResponse,
  HoldHeartbeatBody,
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
  OverrideBody,
  OverrideResponse,
  OwnershipItem,
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

/** Where `npm start` serves the API by default (OD_API_HOST:OD_API_PORT). */
export const DEFAULT_API_URL = `http://127.0.0.1:${DEFAULT_API_PORT}`;

/** An API URL that is not one (OD_API_URL=`::`, `ftp://…`): the caller's mistake, said as such. */
export class ApiUrlError extends Error {
  constructor(readonly value: string) {
    super(`OD_API_URL is not an http(s) URL of the ownership service: ${JSON.stringify(value.slice(0, 200))} (e.g. http://127.0.0.1:8787)`);
    this.name = 'ApiUrlError';
  }
}

/**
 * The service's base URL from what a person typed: `127.0.0.1:8787` or `localhost:8787/` mean
 * http://; a trailing slash goes. Anything that is still not an http(s) URL throws ApiUrlError.
 */
export function normalizeApiUrl(raw: string): string {
  const given = raw.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(given) ? given : `http://${given}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new ApiUrlError(raw);
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.hostname === '' || u.search || u.hash) throw new ApiUrlError(raw);
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
}

/** The service answered with a refusal or failure: its status and `{code, message}` body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(body.message);
    this.name = 'ApiError';
  }
  get code(): string {
    return this.body.code;
  }
}

/** Nothing answered at the URL (refused, timed out, DNS), as opposed to an answer that refuses. */
export class ApiUnreachableError extends Error {
  constructor(readonly baseUrl: string) {
    super(`the ownership service is unreachable at ${baseUrl}`);
    this.name = 'ApiUnreachableError';
  }
}

export interface ApiClientOptions {
  baseUrl: string;
  token?: string;
  timeoutMs?: number;
}

type Query = Record<string, string | number | boolean | readonly string[] | undefined>;

/**
 * A typed client of the HTTP API, for the od-worktree CLI, the MCP stdio proxy and the demo.
 * Bodies are sent as given (the server validates them); answers are typed by the API's schemas.
 */
export class ApiClient {
  private readonly baseUrl: string;
  constructor(private readonly opts: ApiClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
  }

  async request<T>(method: 'GET' | 'POST' | 'DELETE', path: string, opts: { query?: Query; body?: unknown } = {}): Promise<{ status: number; body: T }> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v === undefined) continue;
      if (Array.isArray(v)) for (const x of v) url.searchParams.append(k, String(x));
      else url.searchParams.set(k, String(v));
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.opts.token) headers.authorization = `Bearer ${this.opts.token}`;
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    if (payload !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    const res = await send(url, method, headers, payload, this.opts.timeoutMs ?? 60_000).catch(() => {
      throw new ApiUnreachableError(this.baseUrl);
    });
    let parsed: unknown;
    try {
      parsed = res.text ? JSON.parse(res.text) : null;
    } catch {
      parsed = null;
    }
    if (res.status < 200 || res.status > 299) {
      const body = isErrorBody(parsed) ? parsed : { code: res.status === 503 ? 'unavailable' : 'internal', message: `HTTP ${res.status}` };
      throw new ApiError(res.status, body);
    }
    return { status: res.status, body: parsed as T };
  }

  private async call<T>(method: 'GET' | 'POST' | 'DELETE', path: string, opts: { query?: Query; body?: unknown } = {}): Promise<T> {
    return (await this.request<T>(method, path, opts)).body;
  }

  private own(id: string, action: string) {
    return `/v1/ownerships/${encodeURIComponent(id)}/${action}`;
  }

  /** The view, with `tenure`: the proof the worktree's hooks ask the new owner for (null when the answer is about another owner). */
  bind(body: BindBody) {
    return this.call<ClaimResponse>('POST', '/v1/bind', { body });
  }
  heartbeat(id: string, body: HeartbeatBody) {
    return this.call<{ accepted: true }>('POST', this.own(id, 'heartbeat'), { body });
  }
  handoff(id: string, body: HandoffBody) {
    return this.call<OwnershipViewOut>('POST', this.own(id, 'handoff'), { body });
  }
  acceptHandoff(id: string, body: AcceptHandoffBody) {
    return this.call<ClaimResponse>('POST', this.own(id, 'handoff/accept'), { body });
  }
  cancelHandoff(id: string, body: CancelHandoffBody) {
    return this.call<OwnershipViewOut>('POST', this.own(id, 'handoff/cancel'), { body });
  }
  release(id: string, body: ReleaseBody) {
    return this.call<OwnershipViewOut>('POST', this.own(id, 'release'), { body });
  }
  reclaim(id: string, body: ReclaimBody) {
    return this.call<ClaimResponse>('POST', this.own(id, 'reclaim'), { body });
  }
  /** The current tenure's proof again, for the session that holds it. */
  tenure(id: string, body: TenureBody) {
    return this.call<TenureOut>('POST', this.own(id, 'tenure'), { body });
  }
  /** Admin: records the override, then answers the current owner's proof. */
  override(id: string, body: OverrideBody) {
    return this.call<OverrideResponse>('POST', this.own(id, 'override'), { body });
  }
  submit(id: string, body: SubmitBody) {
    return this.call<OwnershipViewOut>('POST', this.own(id, 'submit'), { body });
  }
  bindPlan(id: string, body: PlanBody) {
    return this.call<OwnershipViewOut>('POST', this.own(id, 'plan'), { body });
  }
  renameBranch(id: string, body: RenameBranchBody) {
    return this.call<OwnershipViewOut>('POST', this.own(id, 'rename-branch'), { body });
  }
  /** Child holds (docs/ownership-record.md#child-holds): the owner grants; the answer carries the hold id and the child's tenure proof. */
  grantHold(id: string, body: GrantHoldBody) {
    return this.call<GrantHoldResponse>('POST', this.own(id, 'holds'), { body });
  }
  holdHeartbeat(id: string, holdId: string, body: HoldHeartbeatBody) {
    return this.call<{ accepted: true }>('POST', this.own(id, `holds/${encodeURIComponent(holdId)}/heartbeat`), { body });
  }
  endHold(id: string, holdId: string, body: EndHoldBody) {
    return this.call<OwnershipViewOut>('POST', this.own(id, `holds/${encodeURIComponent(holdId)}/end`), { body });
  }
  landed(id: string, body: LandedBody) {
    return this.call<LandingResponse>('POST', this.own(id, 'landed'), { body });
  }
  worktreeRemoved(id: string, body: WorktreeRemovedBody = {}) {
    return this.call<{ accepted: true }>('POST', this.own(id, 'worktree-removed'), { body });
  }
  ownership(id: string) {
    return this.call<OwnershipViewOut>('GET', `/v1/ownerships/${encodeURIComponent(id)}`);
  }
  land(body: LandingBody) {
    return this.call<LandingResponse>('POST', '/v1/landings', { body });
  }
  reportConversation(obs: Observation) {
    return this.call<ConversationReportResponse>('POST', '/v1/executor/conversation', { body: obs });
  }
  get(q: GetQuery) {
    return this.call<WireRecord>('GET', '/v1/ownership', { query: { ...q } });
  }
  /** The record with its liveness and the host agent's branch status, in one request (what `od-worktree who` shows). */
  getLive(q: GetQuery) {
    return this.call<OwnershipItem>('GET', '/v1/ownership/live', { query: { ...q } });
  }
  /** Remove a worktree without losing work, on its host (docs/cleanup.md#through-the-api). */
  removeWorktree(b: RemoveWorktreeBody) {
    return this.call<RemoveWorktreeResponse>('POST', '/v1/worktrees/remove', { body: b });
  }
  /** Register or heartbeat a read-only observer of a worktree. */
  observe(b: ObserveBody) {
    return this.call<ObserveResponse>('POST', '/v1/worktrees/observers', { body: b });
  }
  /** End an observer's registration. */
  leaveObserve(b: LeaveObserveBody) {
    return this.call<LeaveObserveResponse>('DELETE', '/v1/worktrees/observers', { body: b });
  }
  list(q: ListQuery = {}) {
    return this.call<ListResponse>('GET', '/v1/ownerships', { query: { ...q } });
  }
  history(q: HistoryQuery) {
    return this.call<HistoryResponse>('GET', '/v1/history', { query: { ...q } });
  }
  provenance(sha: string, repo: string) {
    return this.call<Provenance>('GET', `/v1/provenance/${encodeURIComponent(sha)}`, { query: { repo } });
  }
  /** Who the token is (kind, id, agent worker). */
  principal() {
    return this.call<Caller>('GET', '/v1/principal');
  }
  recordReconciliation(body: ReconciliationBody) {
    return this.call<{ recorded: true }>('POST', '/v1/reconciliations', { body });
  }
}

/**
 * One request on node:http(s) rather than fetch: a CLI process makes one or two requests and
 * exits, and fetch's first use (undici) costs it more than the round trip. The default agent
 * keeps sockets alive between requests of a long-lived caller; an idle one does not hold the
 * process open (Node unrefs free sockets).
 */
function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  payload: string | undefined,
  timeoutMs: number,
): Promise<{ status: number; text: string }> {
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.once('error', fail);
    });
    function fail(err: Error) {
      clearTimeout(timer);
      reject(err);
    }
    // The whole exchange, not only the socket's idle time: a service that trickles does not hold a caller forever.
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
    req.once('error', fail);
    req.end(payload);
  });
}

function isErrorBody(x: unknown): x is ErrorBody {
  return typeof x === 'object' && x !== null && typeof (x as ErrorBody).code === 'string' && typeof (x as ErrorBody).message === 'string';
}
