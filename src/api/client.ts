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
  ConversationReportResponse,
  GetQuery,
  HistoryQuery,
  HistoryResponse,
  LandingBody,
  LandingResponse,
  ListQuery,
  ListResponse,
  OwnershipItem,
  OwnershipViewOut,
  WireRecord,
} from '../contract/http';
// Values from the zod-free half of the table only: the CLI loads this client without zod (OPERATION_PATHS).
import { OPERATION_NAMES, OPERATION_PATHS, urlOf, type OperationName } from '../contract/operation-paths';
import type { BodyOf, OutputOf } from '../contract/operations';

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

/** The typed method of an operation: its address first (`id`, then `holdId`), then its body (optional when it may be empty). */
type OperationArgs<K extends OperationName> = [
  ...((typeof OPERATION_PATHS)[K]['address'] extends 'hold'
    ? [id: string, holdId: string]
    : (typeof OPERATION_PATHS)[K]['address'] extends 'ownership'
      ? [id: string]
      : []),
  ...(Record<never, never> extends BodyOf<K> ? [body?: BodyOf<K>] : [body: BodyOf<K>]),
];
export type OperationMethods = { [K in OperationName]: (...args: OperationArgs<K>) => Promise<OutputOf<K>> };

// The methods of the operation table are installed on the prototype below, from the table.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface ApiClient extends OperationMethods {}

/**
 * A typed client of the HTTP API, for the od-worktree CLI, the MCP stdio proxy and the demo.
 * Bodies are sent as given (the server validates them); answers are typed by the API's schemas.
 * The operation table's calls (bind, heartbeat, handoff, …) are made from the table.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
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

  /**
   * One operation of the table (src/contract/operations.ts) on the wire: its body to its URL.
   * Untyped, for a caller that validated the body with the table's schema (the MCP stdio proxy);
   * the typed methods (bind, heartbeat, …) are this with the table's types.
   */
  send(name: OperationName, at: { id?: string; holdId?: string }, body: unknown): Promise<unknown> {
    return this.call('POST', urlOf(name, at), { body });
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

for (const name of OPERATION_NAMES) {
  const { address } = OPERATION_PATHS[name];
  const arity = address === 'hold' ? 2 : address === 'ownership' ? 1 : 0;
  Object.defineProperty(ApiClient.prototype, name, {
    configurable: true,
    writable: true,
    value(this: ApiClient, ...args: unknown[]) {
      const [id, holdId] = args.slice(0, arity).map(String);
      return this.send(name, { ...(id !== undefined ? { id } : {}), ...(holdId !== undefined ? { holdId } : {}) }, args[arity] ?? {});
    },
  });
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
