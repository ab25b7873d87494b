import type { Observation } from '../domain/binding';
import type { Provenance } from '../store/provenance';
import type { ErrorBody } from './errors';
import type {
  AcceptHandoffBody,
  BindBody,
  CancelHandoffBody,
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
  OwnershipViewOut,
  PlanBody,
  ReclaimBody,
  ReleaseBody,
  RenameBranchBody,
  SubmitBody,
  WireRecord,
  WorktreeRemovedBody,
} from './schemas';

/** Where `npm start` serves the API by default (OD_API_HOST:OD_API_PORT). */
export const DEFAULT_API_URL = 'http://127.0.0.1:8787';

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

  async request<T>(method: 'GET' | 'POST', path: string, opts: { query?: Query; body?: unknown } = {}): Promise<{ status: number; body: T }> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v === undefined) continue;
      if (Array.isArray(v)) for (const x of v) url.searchParams.append(k, String(x));
      else url.searchParams.set(k, String(v));
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.opts.token) headers.authorization = `Bearer ${this.opts.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 60_000),
      });
    } catch {
      throw new ApiUnreachableError(this.baseUrl);
    }
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    if (!res.ok) {
      const body = isErrorBody(parsed) ? parsed : { code: res.status === 503 ? 'unavailable' : 'internal', message: `HTTP ${res.status}` };
      throw new ApiError(res.status, body);
    }
    return { status: res.status, body: parsed as T };
  }

  private async call<T>(method: 'GET' | 'POST', path: string, opts: { query?: Query; body?: unknown } = {}): Promise<T> {
    return (await this.request<T>(method, path, opts)).body;
  }

  private own(id: string, action: string) {
    return `/v1/ownerships/${encodeURIComponent(id)}/${action}`;
  }

  bind(body: BindBody) {
    return this.call<OwnershipViewOut>('POST', '/v1/bind', { body });
  }
  heartbeat(id: string, body: HeartbeatBody) {
    return this.call<{ accepted: true }>('POST', this.own(id, 'heartbeat'), { body });
  }
  handoff(id: string, body: HandoffBody) {
    return this.call<OwnershipViewOut>('POST', this.own(id, 'handoff'), { body });
  }
  acceptHandoff(id: string, body: AcceptHandoffBody) {
    return this.call<OwnershipViewOut>('POST', this.own(id, 'handoff/accept'), { body });
  }
  cancelHandoff(id: string, body: CancelHandoffBody) {
    return this.call<OwnershipViewOut>('POST', this.own(id, 'handoff/cancel'), { body });
  }
  release(id: string, body: ReleaseBody) {
    return this.call<OwnershipViewOut>('POST', this.own(id, 'release'), { body });
  }
  reclaim(id: string, body: ReclaimBody) {
    return this.call<OwnershipViewOut>('POST', this.own(id, 'reclaim'), { body });
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
  list(q: ListQuery = {}) {
    return this.call<ListResponse>('GET', '/v1/ownerships', { query: { ...q } });
  }
  history(q: HistoryQuery) {
    return this.call<HistoryResponse>('GET', '/v1/history', { query: { ...q } });
  }
  provenance(sha: string, repo: string) {
    return this.call<Provenance>('GET', `/v1/provenance/${encodeURIComponent(sha)}`, { query: { repo } });
  }
}

function isErrorBody(x: unknown): x is ErrorBody {
  return typeof x === 'object' && x !== null && typeof (x as ErrorBody).code === 'string' && typeof (x as ErrorBody).message === 'string';
}
