import type { Client } from '@temporalio/client';
import { queuePolled } from '../../infra/queue-pollers';
import { beaconVerdict, pingDatabase } from '../../store/beacons';
import type { Pool } from '../../store/db';
import { type HealthProblem, type HealthReport } from '../../contract/health';
import { hostTaskQueue as hostQueueOf } from '../../domain/queues';
import { agentPresent, BEACON_STALE_MS } from '../../infra/beacon';
import { checkNamespace, describeNamespaceProblem, namespaceReady, setupCommands, type NamespaceReport } from '../../infra/namespace-check';
import { seenHosts, type SeenHost } from '../../store/hosts';
import { VERSION_INFO } from '../../version';

export {
  HealthVersionSchema,
  HEALTH_PROBLEM_CODES,
  HealthProblemSchema,
  HealthHostSchema,
  HealthReportSchema,
  type HealthProblem,
  type HealthReport,
} from '../../contract/health';

export interface HealthDeps {
  temporal: Client;
  pool: Pool;
  namespace: string;
  taskQueue: string;
  hostTaskQueue: string;
  /** this host's id: whose agent `hostAgent` is about */
  hostId: string;
  /**
   * The namespace check, cached (src/infra/namespace-check.ts cachedNamespaceCheck; the API's
   * /healthz keeps one). Absent: asked on every call. `null`: Temporal did not answer.
   */
  namespaceCheck?: () => Promise<NamespaceReport | null>;
}

const PROBE_TIMEOUT_MS = 3_000;

function withTimeout<T>(p: Promise<T>, ms = PROBE_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, rej) => {
    timer = setTimeout(() => rej(new Error('timeout')), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** gRPC NOT_FOUND: Temporal answered (the namespace is missing), it is not away. */
const isNotFound = (err: unknown): boolean => typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 5;

/**
 * Healthy only when Temporal answers, PostgreSQL answers, the namespace holds the search attributes
 * the workflows set, and a worker is polling the ownership task queue: the same check works with the
 * worker in this process or anywhere else. `problems` names each thing that is wrong.
 * Every probe starts at once and each is bounded (PROBE_TIMEOUT_MS), so an answer never waits for
 * two slow ones in a row.
 */
export async function checkHealth(deps: HealthDeps): Promise<HealthReport> {
  const deadline = Date.now() + PROBE_TIMEOUT_MS;
  const pg = withTimeout(pingDatabase(deps.pool)).then(
    () => 'up' as const,
    () => 'down' as const,
  );
  const namespace = (deps.namespaceCheck ?? (() => withTimeout(checkNamespace(deps.temporal.connection, deps.namespace)).catch(() => null)))();
  const pollers = async (name: string, type: 'workflow' | 'activity', ms = PROBE_TIMEOUT_MS): Promise<'up' | 'down'> =>
    (await withTimeout(queuePolled(deps.temporal, deps.namespace, name, type), ms)) ? 'up' : 'down';
  // A poller stays listed long after its process died: a beacon that went quiet says it did.
  const beaconsSay = withTimeout(beaconVerdict(deps.pool, deps.taskQueue, deps.hostId, BEACON_STALE_MS)).catch(() => null);
  const others = withTimeout(seenHosts(deps.pool))
    .catch((): SeenHost[] => [])
    .then((hosts) =>
      Promise.all(
        hosts.map(async (h): Promise<SeenHost & { agent: 'up' | 'down' | null }> => {
          if (h.hostId === deps.hostId) return { ...h, agent: null }; // this host's: `hostAgent`, below
          const present = await agentPresent(
            h.lastBeatAgoMs,
            async () => (await pollers(hostQueueOf(h.hostId), 'activity', Math.max(0, deadline - Date.now()))) === 'up',
          ).catch(() => false);
          return { ...h, agent: present ? ('up' as const) : ('down' as const) };
        }),
      ),
    );
  const [workerPolled, hostPolled] = await Promise.allSettled([pollers(deps.taskQueue, 'workflow'), pollers(deps.hostTaskQueue, 'activity')]);
  // A namespace Temporal does not have is Temporal answering.
  const temporalUp = workerPolled.status === 'fulfilled' || isNotFound(workerPolled.reason) ? 'up' : 'down';
  let worker = workerPolled.status === 'fulfilled' ? workerPolled.value : 'down';
  let hostAgent = temporalUp === 'up' && hostPolled.status === 'fulfilled' ? hostPolled.value : 'down';
  const postgres = await pg;
  const b = postgres === 'up' ? await beaconsSay : null;
  if (b?.workerKnown && !b.workerFresh) worker = 'down';
  if (b?.hostKnown && !b.hostFresh) hostAgent = 'down';
  const hosts = postgres === 'up' ? (await others).map((h) => ({ hostId: h.hostId, agent: h.agent ?? hostAgent, lastBeatAgoMs: h.lastBeatAgoMs })) : [];
  const ns = temporalUp === 'up' ? await namespace : null;
  const problems: HealthProblem[] = [];
  if (temporalUp === 'down') problems.push({ code: 'temporal_unreachable', message: `Temporal did not answer within ${PROBE_TIMEOUT_MS / 1000} s` });
  if (postgres === 'down') problems.push({ code: 'postgres_unreachable', message: `PostgreSQL did not answer within ${PROBE_TIMEOUT_MS / 1000} s` });
  if (ns && !ns.exists)
    problems.push({ code: 'namespace_missing', message: describeNamespaceProblem(ns), namespace: ns.namespace, commands: setupCommands(ns) });
  if (ns && ns.exists && ns.missing.length > 0) {
    problems.push({
      code: 'search_attributes_missing',
      message: describeNamespaceProblem(ns),
      namespace: ns.namespace,
      names: ns.missing.map((a) => a.name),
      commands: setupCommands(ns),
    });
  }
  if (temporalUp === 'up' && worker === 'down')
    problems.push({
      code: 'task_queue_unserved',
      message: `no live worker polls the ownership workflows' task queue "${deps.taskQueue}"`,
      queue: deps.taskQueue,
    });
  if (temporalUp === 'up' && hostAgent === 'down') {
    problems.push({
      code: 'task_queue_unserved',
      message: `no live host agent polls this host's ("${deps.hostId}") task queue "${deps.hostTaskQueue}"`,
      queue: deps.hostTaskQueue,
    });
  }
  for (const h of hosts) {
    if (h.hostId === deps.hostId || h.agent === 'up') continue;
    const when = h.lastBeatAgoMs === null ? 'has no beacon and no live poller' : `last beat ${Math.round(h.lastBeatAgoMs / 1000)} s ago`;
    problems.push({
      code: 'host_agent_stale',
      message: `the agent of host "${h.hostId}" ${when}: its worktrees' projections wait for it`,
      hostId: h.hostId,
      lastBeatAgoMs: h.lastBeatAgoMs,
    });
  }
  return {
    ok: temporalUp === 'up' && postgres === 'up' && worker === 'up' && (ns === null || namespaceReady(ns)),
    temporal: temporalUp,
    postgres,
    worker,
    hostAgent,
    version: { ...VERSION_INFO },
    problems,
    hosts,
  };
}
