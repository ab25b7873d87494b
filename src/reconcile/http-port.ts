import { ApiError, ApiUnreachableError, type ApiClient } from '../api/client';
import type { BindBody } from '../contract/http';
import type { Caller } from '../contract/reconcile';
import type { OwnershipRecord } from '../domain/projection';
import { type BindOutcome, type ProvisionalSubmission, type ReconcilePort, type ReconciliationEntry, ReconcileRefused, ReconcileUnavailable } from './port';

/**
 * A ReconcilePort over the authenticated HTTP API: what `od-worktree reconcile` uses, so that the
 * CLI writes nothing the API did not authorise. The durable record is GET /v1/ownership, a
 * provisional claim is bound by POST /v1/bind as the token's principal, and the reconciliation is
 * logged by POST /v1/reconciliations.
 *
 * The worker a provisional claim is bound for is the token's, never the claim's: the bind names
 * no worker, so the service takes the executor's own. A claim naming another worker (claim
 * --offline --worker, or a local projection someone edited) is refused as `worker_mismatch`
 * before anything is sent. Only an executor token submits a claim: an admin has no worker of its
 * own, and binding as the worker a local file names is exactly what must not happen.
 */

export interface HttpPortOptions {
  client: ApiClient;
  /** the token's principal (openHttpPort asks GET /v1/principal) */
  caller: Caller;
  /** told about every reconciliation the service recorded */
  onReconciled?: (entry: ReconciliationEntry) => void | Promise<void>;
}

/** Principals that can use the port: reconcile records what it did, which reader and landing may not. */
const RECONCILERS: ReadonlySet<Caller['kind']> = new Set(['executor', 'admin']);
const AUTH_CODES: ReadonlySet<string> = new Set(['unauthenticated', 'forbidden']);

/** Transport and auth failures as the reconcile library's errors; other answers are left to the caller. */
function lift(err: unknown): never {
  if (err instanceof ApiUnreachableError) throw new ReconcileUnavailable(err.message);
  if (err instanceof ApiError && err.status === 503) throw new ReconcileUnavailable(`${err.code}: ${err.body.message}`);
  if (err instanceof ApiError && (err.status === 401 || AUTH_CODES.has(err.code))) throw new ReconcileRefused(err.code, `${err.code}: ${err.body.message}`);
  throw err;
}

async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    return lift(err);
  }
}

/** Asks who the token is, and refuses a principal that cannot reconcile before anything is read or written. */
export async function openHttpPort(client: ApiClient, opts: Omit<HttpPortOptions, 'client' | 'caller'> = {}): Promise<{ port: ReconcilePort; caller: Caller }> {
  const caller = await call(() => client.principal());
  if (!RECONCILERS.has(caller.kind))
    throw new ReconcileRefused('forbidden', `forbidden: reconcile needs an executor (or admin) token; this one is a ${caller.kind} principal`);
  return { port: createHttpPort({ client, caller, ...opts }), caller };
}

export function createHttpPort(opts: HttpPortOptions): ReconcilePort {
  const { client, caller } = opts;
  return {
    async durable(worktreePath): Promise<OwnershipRecord | null> {
      try {
        // The wire record is the durable record plus nothing the library reads; conversations may be redacted (see redacted.ts).
        return (await client.get({ worktreePath })) as OwnershipRecord;
      } catch (err) {
        if (err instanceof ApiError && err.status === 404 && err.code === 'not_found') return null;
        // A refused lookup (e.g. path_outside_allowed_roots) is the service's answer, not its absence.
        if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 401)
          throw new ReconcileRefused(err.code, `${err.code}: ${err.body.message}`);
        return lift(err);
      }
    },

    async bind(req: ProvisionalSubmission): Promise<BindOutcome> {
      if (caller.kind !== 'executor' || !caller.workerId) {
        throw new ReconcileRefused('forbidden', 'forbidden: a provisional claim is submitted with the executor token of its worker; this token has no worker');
      }
      if (req.worker !== null && req.worker.workerId !== caller.workerId) {
        return { ok: false, code: 'worker_mismatch', details: { claimWorkerId: req.worker.workerId, tokenWorkerId: caller.workerId } };
      }
      const body: BindBody = {
        repoRoot: req.repoRoot,
        worktreePath: req.worktreePath,
        branch: req.branch,
        executionSessionId: req.executionSessionId,
        runtime: req.runtime,
        // The run the claim names, checked by the service against the token's own run; never a worker.
        ...(req.worker?.runId ? { runId: req.worker.runId } : {}),
        lane: req.lane,
        planRef: req.planRef,
      };
      try {
        // The tenure proof is the session's, not the record's: reconcile writes hashes from the key, never a secret.
        const { liveness: _l, projectionSync: _p, projection: _pr, tenure: _t, ...record } = await client.bind(body);
        return { ok: true, record: record as OwnershipRecord };
      } catch (err) {
        if (err instanceof ApiError && err.status !== 503 && err.status !== 401 && !AUTH_CODES.has(err.code)) {
          return { ok: false, code: err.code, ...(err.body.details ? { details: err.body.details } : {}) };
        }
        return lift(err);
      }
    },

    async recordReconciliation(entry: ReconciliationEntry): Promise<void> {
      const { kind } = entry;
      // reconcile logs only kinds that found a difference; the route accepts exactly those.
      if (kind === 'in_sync' || kind === 'unowned') return;
      try {
        await client.recordReconciliation({ ...entry, kind });
      } catch (err) {
        // Kept by reconcile as recordError: the reason code first, as every other refusal is shown.
        if (err instanceof ApiError) throw new Error(`${err.code}: ${err.body.message}`, { cause: err });
        throw err;
      }
      await opts.onReconciled?.(entry);
    },
  };
}
