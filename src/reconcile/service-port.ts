import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Pool } from '../store/db';
import { OwnershipClient, OwnershipError } from '../client';
import { gitWorktreeResolver } from '../adapters/worktree-resolver';
import type { AgentWorkerRef, Principal } from '../domain/identity';
import { ownerSummary } from '../domain/projection';
import { GitSideError } from '../git/errors';
import { createPool } from '../store/db';
import { getOwnership, heldOwnershipOf } from '../store/lookups';
import { readExecutorConversation } from '../store/bindings';
import { logReconciliation } from '../store/reconciliations';
import type { BindOutcome, ProvisionalSubmission, ReconcilePort, ReconciliationEntry } from './port';
import { TEMPORAL_CHANNEL_ARGS } from '../client/channel';
import { dataConverterOf } from '../infra/payload-codec';
import { temporalConnectionFromEnv } from '../infra/temporal-connection';

export interface ServicePortOptions {
  /** The typed client: binds go to the ownership workflow through Temporal. */
  client: OwnershipClient;
  /** The service's PostgreSQL: the durable record is read from the `ownerships` read projection. */
  pool: Pool;
  /** Agent worker for provisional claims made without --worker (the caller's own authenticated worker). */
  defaultWorker?: AgentWorkerRef | null;
  /** Id of the executor principal the binds are made as; default `od-worktree`. */
  principalId?: string;
  /** Also told about every reconciliation, after it is logged in PostgreSQL. */
  onReconciled?: (entry: ReconciliationEntry) => void | Promise<void>;
}

/**
 * A ReconcilePort directly on the service's own backends: OwnershipClient (Temporal) for binds, the
 * `ownerships` table for the durable record. It trusts its caller completely: a bind is made as an
 * executor of whatever worker the claim (or defaultWorker) names, so that worker's conversation
 * goes onto the ownership. For the service itself, tests and admin tooling on the service host
 * only; no od-worktree command that writes may use it (they go through http-port.ts, as their
 * token's principal).
 */
export function createServicePort(opts: ServicePortOptions): ReconcilePort {
  const port: ReconcilePort = {
    async durable(worktreePath) {
      // The latest lifecycle of the worktree, from the read projection (rebuilt from the log on demand).
      return getOwnership(opts.pool, { worktreePath: await opts.client.normalize(worktreePath) });
    },
    async bind(req: ProvisionalSubmission): Promise<BindOutcome> {
      const worker = req.worker ?? opts.defaultWorker ?? null;
      // A caller problem, not a refusal: the claim stays provisional for a retry with a worker.
      if (worker === null) throw new GitSideError('invalid_argument', 'the provisional claim names no worker: pass --worker (the agent worker to bind as)');
      const principal: Principal = { kind: 'executor', id: opts.principalId ?? 'od-worktree', workerId: worker.workerId };
      try {
        // PostgreSQL's word on who holds the worktree, as the API's bind asks it: a lifecycle under an
        // older workflow id gets the claim, one recorded at another path (a moved worktree) refuses it.
        const located = await opts.client.locate(req);
        const [held, conversation] = await Promise.all([heldOwnershipOf(opts.pool, located), readExecutorConversation(opts.pool, worker.workerId)]);
        if (held && held.record.worktreePath !== located.worktreePath)
          return { ok: false, code: 'worktree_owned', details: { owner: ownerSummary(held.record), worktreePath: held.record.worktreePath } };
        const view = await opts.client.bind(
          {
            repoRoot: req.repoRoot,
            worktreePath: req.worktreePath,
            branch: req.branch,
            executionSessionId: req.executionSessionId,
            runtime: req.runtime,
            worker: { workerId: worker.workerId, runId: worker.runId },
            principal,
            lane: req.lane,
            planRef: req.planRef,
          },
          { located, ...(held ? { workflowId: held.workflowId } : {}), conversation },
        );
        const { liveness: _l, projectionSync: _p, projection: _pr, ...record } = view;
        return { ok: true, record };
      } catch (err) {
        if (err instanceof OwnershipError && err.code !== 'unavailable') return { ok: false, code: err.code, ...(err.details ? { details: err.details } : {}) };
        throw err;
      }
    },
  };
  port.recordReconciliation = async (entry) => {
    await logReconciliation(opts.pool, entry);
    await opts.onReconciled?.(entry);
  };
  return port;
}

export interface ServiceEndpoints {
  /** Temporal frontend host:port */
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  hostId: string;
  databaseUrl: string;
  allowedRoots: string[];
  /** OD_PAYLOAD_KEY_FILE: the workflows' payloads are encrypted with it */
  payloadKeyFile?: string;
  /** OD_SERVICE_KEY_FILE: seals the messages (default: dataDir/service.key) */
  serviceKeyFile?: string;
  /** OD_DATA_DIR (default .data) */
  dataDir?: string;
}

/**
 * Opens a ServicePort on real connections, for admin tooling on the service host (see
 * createServicePort: it is trusted, not authenticated). The caller closes it. Fails fast (5 s)
 * when Temporal cannot be reached.
 */
export async function openServicePort(
  endpoints: ServiceEndpoints,
  opts: Omit<ServicePortOptions, 'client' | 'pool'> = {},
): Promise<{ port: ReconcilePort; close(): Promise<void> }> {
  const connection = await Connection.connect({
    address: endpoints.temporalAddress,
    ...temporalConnectionFromEnv(),
    connectTimeout: '5s',
    channelArgs: { ...TEMPORAL_CHANNEL_ARGS },
  });
  const pool = createPool(endpoints.databaseUrl, { max: 2 });
  const client = new OwnershipClient({
    client: new Client({
      connection,
      namespace: endpoints.namespace,
      dataConverter: dataConverterOf({
        payloadKeyFile: endpoints.payloadKeyFile ?? '',
        serviceKeyFile: endpoints.serviceKeyFile ?? '',
        dataDir: path.resolve(endpoints.dataDir ?? '.data'),
      }),
    }),
    taskQueue: endpoints.taskQueue,
    hostId: endpoints.hostId,
    resolver: gitWorktreeResolver,
    allowedRoots: endpoints.allowedRoots,
  });
  return {
    port: createServicePort({ ...opts, client, pool }),
    async close() {
      await Promise.allSettled([pool.end(), connection.close()]);
    },
  };
}
