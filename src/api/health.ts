import type { Client } from '@temporalio/client';
import { queuePolled } from '../infra/queue-pollers';
import type { Pool } from 'pg';
import { z } from 'zod';
import { hostTaskQueue as hostQueueOf } from '../domain/queues';
import { BEACON_STALE_MS, beaconFresh } from '../infra/beacon';
import { checkNamespace, describeNamespaceProblem, namespaceReady, setupCommands, type NamespaceReport } from '../infra/namespace-check';
import { seenHosts, type SeenHost } from '../store/hosts';
import { VERSION_INFO } from '../version';

const UpDown = z.enum(['up', 'down']);
/** `version`: this build and its wire contract (src/version.ts), for clients to check compatibility. */
export const HealthVersionSchema = z.strictObject({ package: z.string(), wire: z.string().regex(/^\d+\.\d+$/) });

/**
 * What is wrong, each with a stable code (clients branch on `code`; `message` is for people).
 * Unknown codes from a newer service are "something else is wrong".
 */
export const HEALTH_PROBLEM_CODES = ['temporal_unreachable', 'postgres_unreachable', 'namespace_missing', 'search_attributes_missing', 'task_queue_unserved', 'host_agent_stale'] as const;
const message = z.string();
export const HealthProblemSchema = z.discriminatedUnion('code', [
  z.strictObject({ code: z.literal('temporal_unreachable'), message }),
  z.strictObject({ code: z.literal('postgres_unreachable'), message }),
  z.strictObject({ code: z.literal('namespace_missing'), message, namespace: z.string(), commands: z.array(z.string()) }),
  /** `names`: each attribute the namespace lacks or holds with another type; `commands`: the `temporal` commands that register them */
  z.strictObject({ code: z.literal('search_attributes_missing'), message, namespace: z.string(), names: z.array(z.string()).min(1), commands: z.array(z.string()) }),
  /** no live worker polls `queue`: the ownership workflows' queue, or this host's agent queue */
  z.strictObject({ code: z.literal('task_queue_unserved'), message, queue: z.string() }),
  /** another host seen recently (a live ownership, or a beacon within the hour) whose agent stopped beating; null: it never beat here */
  z.strictObject({ code: z.literal('host_agent_stale'), message, hostId: z.string(), lastBeatAgoMs: z.number().int().nonnegative().nullable() }),
]);
export type HealthProblem = z.infer<typeof HealthProblemSchema>;
// The list and the union name the same codes; the compiler refuses one without the other.
const sameCodes: [Exclude<HealthProblem['code'], (typeof HEALTH_PROBLEM_CODES)[number]>, Exclude<(typeof HEALTH_PROBLEM_CODES)[number], HealthProblem['code']>] extends [never, never] ? true : never = true;
void sameCodes;

/** A host seen recently and whether its agent (its git activities' task queue) is served. */
export const HealthHostSchema = z.strictObject({ hostId: z.string(), agent: UpDown, lastBeatAgoMs: z.number().int().nonnegative().nullable() });

export const HealthReportSchema = z.strictObject({
  ok: z.boolean(),
  temporal: UpDown,
  postgres: UpDown,
  worker: UpDown,
  hostAgent: UpDown,
  version: HealthVersionSchema,
  /** empty when nothing is wrong; a host agent down elsewhere is listed but does not make `ok` false */
  problems: z.array(HealthProblemSchema),
  /** every host with a live ownership or a beacon within the last hour (at most 100, stalest first) */
  hosts: z.array(HealthHostSchema),
});
export type HealthReport = z.infer<typeof HealthReportSchema>;

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
  const pg = withTimeout(deps.pool.query('SELECT 1')).then(
    () => 'up' as const,
    () => 'down' as const,
  );
  const namespace = (deps.namespaceCheck ?? (() => withTimeout(checkNamespace(deps.temporal.connection, deps.namespace)).catch(() => null)))();
  const pollers = async (name: string, type: 'workflow' | 'activity', ms = PROBE_TIMEOUT_MS): Promise<'up' | 'down'> =>
    (await withTimeout(queuePolled(deps.temporal, deps.namespace, name, type), ms)) ? 'up' : 'down';
  // A poller stays listed long after its process died: a beacon that went quiet says it did.
  const beaconsSay = withTimeout(beacons(deps)).catch(() => null);
  const others = withTimeout(seenHosts(deps.pool))
    .catch((): SeenHost[] => [])
    .then((hosts) =>
      Promise.all(
        hosts.map(async (h): Promise<SeenHost & { agent: 'up' | 'down' | null }> => {
          if (h.hostId === deps.hostId) return { ...h, agent: null }; // this host's: `hostAgent`, below
          if (h.lastBeatAgoMs !== null) return { ...h, agent: beaconFresh(h.lastBeatAgoMs) ? 'up' : 'down' };
          // No beacon at all (an agent without DATABASE_URL beats none): Temporal's pollers are all there is.
          const agent = await pollers(hostQueueOf(h.hostId), 'activity', Math.max(0, deadline - Date.now())).catch(() => 'down' as const);
          return { ...h, agent };
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
  if (ns && !ns.exists) problems.push({ code: 'namespace_missing', message: describeNamespaceProblem(ns), namespace: ns.namespace, commands: setupCommands(ns) });
  if (ns && ns.exists && ns.missing.length > 0) {
    problems.push({ code: 'search_attributes_missing', message: describeNamespaceProblem(ns), namespace: ns.namespace, names: ns.missing.map((a) => a.name), commands: setupCommands(ns) });
  }
  if (temporalUp === 'up' && worker === 'down') problems.push({ code: 'task_queue_unserved', message: `no live worker polls the ownership workflows' task queue "${deps.taskQueue}"`, queue: deps.taskQueue });
  if (temporalUp === 'up' && hostAgent === 'down') {
    problems.push({ code: 'task_queue_unserved', message: `no live host agent polls this host's ("${deps.hostId}") task queue "${deps.hostTaskQueue}"`, queue: deps.hostTaskQueue });
  }
  for (const h of hosts) {
    if (h.hostId === deps.hostId || h.agent === 'up') continue;
    const when = h.lastBeatAgoMs === null ? 'has no beacon and no live poller' : `last beat ${Math.round(h.lastBeatAgoMs / 1000)} s ago`;
    problems.push({ code: 'host_agent_stale', message: `the agent of host "${h.hostId}" ${when}: its worktrees' projections wait for it`, hostId: h.hostId, lastBeatAgoMs: h.lastBeatAgoMs });
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

/** What the worker processes' beacons (src/infra/beacon.ts) say of this task queue and this host. */
async function beacons(deps: HealthDeps): Promise<{ workerKnown: boolean; workerFresh: boolean; hostKnown: boolean; hostFresh: boolean }> {
  const res = await deps.pool.query<{ worker_known: boolean | null; worker_fresh: boolean | null; host_known: boolean | null; host_fresh: boolean | null }>(
    `SELECT bool_or(task_queue = $1 AND serves_workflows) AS worker_known,
            bool_or(task_queue = $1 AND serves_workflows AND beat_at > now() - make_interval(secs => $3)) AS worker_fresh,
            bool_or(host_id = $2) AS host_known,
            bool_or(host_id = $2 AND beat_at > now() - make_interval(secs => $3)) AS host_fresh
       FROM worker_beacons
      WHERE (task_queue = $1 OR host_id = $2) AND beat_at > now() - interval '1 hour'`,
    [deps.taskQueue, deps.hostId, BEACON_STALE_MS / 1000],
  );
  const r = res.rows[0];
  return { workerKnown: r?.worker_known === true, workerFresh: r?.worker_fresh === true, hostKnown: r?.host_known === true, hostFresh: r?.host_fresh === true };
}
