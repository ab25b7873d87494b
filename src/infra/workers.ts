import { existsSync } from 'node:fs';
import path from 'node:path';
import { NativeConnection, Runtime, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import type { Pool } from '../store/db';
import type { Logger } from 'pino';
import { createHostActivities, createLocalProjector, createStoreActivities } from '../activities';
import { authorityFromConfig, type LivenessAuthority } from '../activities/liveness';
import { ownershipSettingsOf, type Config } from '../config';
import type { OwnershipSettings } from '../domain/settings';
import { hostTaskQueue } from '../domain/queues';
import { LandingScanJob } from '../landings/periodic';
import { JournalShipper, type ShipperLog } from '../provenance/attributions-shipper';
import type { HostActivities } from '../activities/types';
import { useGitSpawner } from '../git/spawner';
import { startBeacon } from './beacon';
import { auditSinks } from './audit-sink';
import { dataConverterOf, EncryptionCodec, keyringOf, readPayloadKey } from './payload-codec';
import type { DataConverter } from '@temporalio/common';
import { temporalLogger } from './logger';
import { assertNamespaceReady } from './namespace-check';
import { cachedWorkflowBundle } from './workflow-bundle-cache';

/** The workflows' entry beside this module: index.ts in the sources (tsx, jest), index.js once compiled (dist/). */
export const WORKFLOWS_PATH = path.resolve(__dirname, `../workflows/index${path.extname(__filename)}`);

/**
 * dist/workflow-bundle.js: `npm run build` (scripts/build.js) bundles the compiled workflows once,
 * with WORKFLOW_PRELOAD_MODULES, so a compiled worker starts without running webpack. Never used
 * from the sources: it holds the workflows of the last build, not of the sources.
 */
export function prebuiltWorkflowBundle(): WorkflowBundleOption | undefined {
  if (path.extname(__filename) !== '.js') return undefined;
  const codePath = path.resolve(__dirname, '../../workflow-bundle.js');
  return existsSync(codePath) ? { codePath } : undefined;
}

/**
 * Modules evaluated once per workflow thread and shared by every cached workflow, instead of once
 * per workflow (the SDK's reusable V8 context). zod and the pure domain modules are most of the
 * bundle and hold no state, so sharing them takes a cached ownership from ~1.3 MiB to ~0.1 MiB.
 * Only stateless modules belong here: test/unit/workflow-preload.test.ts checks for module-level
 * mutable state.
 */
export const WORKFLOW_PRELOAD_MODULES: readonly string[] = [
  'zod',
  '@temporalio/common',
  ...['reasons', 'states', 'identity', 'commands', 'events', 'projection', 'decide', 'queues', 'search-attributes', 'settings', 'liveness', 'seal'].map((m) =>
    path.resolve(__dirname, `../domain/${m}`),
  ),
];

export interface WorkerDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  hostId: string;
  allowedRoots: string[];
  authority: LivenessAuthority;
  /** Absent for a host agent: it runs only the git activities of its own host. */
  pool?: Pool;
  /**
   * The deployment's data converter (src/infra/payload-codec.ts dataConverterOf): it proves each
   * message's seal (src/keys/message-seal.ts), and encrypts when configured. Required: a worker
   * without it would believe whatever a message's `seal` says.
   */
  dataConverter: DataConverter;
  /** Where a host agent without `pool` beats its beacon (src/infra/beacon.ts); none: /healthz goes by Temporal's pollers. */
  beaconPool?: Pool;
  /** A prebuilt bundle (tests build one per run); else the workflows are bundled at start. */
  workflowBundle?: WorkflowBundleOption;
  identity?: string;
  /** Cap on cached workflows (0 or absent: the SDK's memory-based default). */
  maxCachedWorkflows?: number;
  /** The configured ownership settings, taken by each ownership at its next continue-as-new (absent: each keeps its own). */
  settings?: Partial<OwnershipSettings>;
  /**
   * Ships the worktrees' commit journals after each projection write (docs/git-projection.md#the-journal).
   * Default: one on `pool` when there is a pool, none otherwise.
   */
  shipper?: JournalShipper | null;
}

/** The host activities, with each projection write followed by shipping that worktree's journal (never waited for). */
function withShipping(host: HostActivities, shipper: JournalShipper | null): HostActivities {
  if (!shipper) return host;
  return {
    ...host,
    async applyLocalProjection(record) {
      const out = await host.applyLocalProjection(record);
      void shipper.afterProjection(record);
      return out;
    },
  };
}

/**
 * The Temporal SDK logs through one process-wide runtime, created by the first worker or native
 * connection with the SDK's own console logger unless installed before: every process that runs
 * workers (worker.ts, npm start, the test harness) installs it first, so the SDK's lines come out
 * in our format at our LOG_LEVEL, and the host agent's by-design "No workflows registered"
 * (it runs activities only) is debug, not a warning on every normal start.
 * `shutdownSignals: []` when the caller runs its own ordered stop. Throws if a runtime exists.
 */
export function installTemporalLogging(log: Logger, opts: { shutdownSignals?: NodeJS.Signals[] } = {}): void {
  Runtime.install({
    logger: temporalLogger(log.child({ component: 'temporal-sdk' })),
    ...(opts.shutdownSignals ? { shutdownSignals: opts.shutdownSignals } : {}),
  });
}

/** How often a host agent ships the journals of its worktrees besides after each projection write. */
export const JOURNAL_SHIP_INTERVAL_MS = 5_000;

/** The workflow worker (workflows + the durable-store activities, on its task queue) and this host's git agent. */
export async function createWorkers(deps: WorkerDeps): Promise<Worker[]> {
  const keyring = keyringOf(deps.dataConverter);
  // A host agent alone may run keyless (OD_HOST_AGENT_KEYLESS): the control plane carries the tenure hashes it writes.
  // Before anything polls: on a namespace without the search attributes every workflow task would
  // fail (BadSearchAttributes, a WARN line each) while binds wait out their bound. Refused here
  // with the commands that fix it; a host agent runs no workflows, so only its namespace must exist.
  await assertNamespaceReady(deps.connection, deps.namespace, { searchAttributes: deps.pool !== undefined });
  const workers: Worker[] = [];
  // A worker's heap makes every process it starts slow to create: git goes through a small helper.
  useGitSpawner();
  // This host's git activities, on the host agent's queue only: the workflows reach them there, whichever host runs the workflow.
  const shipper =
    deps.shipper !== undefined
      ? deps.shipper
      : deps.pool
        ? new JournalShipper({ pool: deps.pool, hostId: deps.hostId, allowedRoots: deps.allowedRoots })
        : null;
  // The keys that prove this process's seals are the deployment's: the tenure hashes come from them too.
  const host = withShipping(createHostActivities({ allowedRoots: deps.allowedRoots, authority: deps.authority, keyring }), shipper);
  if (deps.pool) {
    if (!keyring) throw new Error('createWorkers: the data converter must prove message seals (dataConverterOf)');
    // From the sources, the bundle of these very sources made by an earlier start, else made now (workflow-bundle-cache.ts).
    const workflowBundle =
      deps.workflowBundle ??
      prebuiltWorkflowBundle() ??
      (await cachedWorkflowBundle({ workflowsPath: WORKFLOWS_PATH, preloadModules: WORKFLOW_PRELOAD_MODULES, log: (l) => Runtime.instance().logger.warn(l) }));
    workers.push(
      await Worker.create({
        connection: deps.connection,
        namespace: deps.namespace,
        taskQueue: deps.taskQueue,
        dataConverter: deps.dataConverter,
        workflowBundle,
        // Messages refused for want of a seal are recorded for people (refused_messages), never in history.
        sinks: auditSinks(deps.pool, (msg, meta) => Runtime.instance().logger.warn(msg, meta)),
        activities: createStoreActivities({
          pool: deps.pool,
          // The tenure hash of each record it makes durable goes to the host agent with the record.
          keyring,
          settings: deps.settings ?? null,
          // This process is also this host's agent: the log write projects its own host's worktrees.
          local: createLocalProjector({
            hostId: deps.hostId,
            allowedRoots: deps.allowedRoots,
            keyring,
            ...(shipper ? { afterWrite: (r) => void shipper.afterProjection(r) } : {}),
          }),
        }),
        ...(deps.maxCachedWorkflows ? { maxCachedWorkflows: deps.maxCachedWorkflows } : {}),
        ...(deps.identity ? { identity: deps.identity } : {}),
        // A worker that died holds its cached ownerships' next tasks on its sticky queue until this
        // passes (Temporal's default is 10 s): every update to them waits that long. 3 s is many
        // times a busy worker's poll interval, so a live one rarely loses its cache to it.
        stickyQueueScheduleToStartTimeout: '3s',
      }),
    );
  }
  workers.push(
    await Worker.create({
      connection: deps.connection,
      namespace: deps.namespace,
      taskQueue: hostTaskQueue(deps.hostId),
      dataConverter: deps.dataConverter,
      activities: host,
      ...(deps.identity ? { identity: `${deps.identity}/host-agent` } : {}),
    }),
  );
  // One beacon per process for /healthz: the workflows and this host's agent, or the agent alone.
  const beaconPool = deps.pool ?? deps.beaconPool;
  // The first beat is written before any worker polls (startBeacon).
  if (beaconPool)
    await startBeacon({ pool: beaconPool, taskQueue: deps.taskQueue, hostId: deps.hostId, servesWorkflows: deps.pool !== undefined, workers }).first;
  return workers;
}

/**
 * The workers a deployment runs, from its configuration (worker.ts, npm start). No pool: host agent
 * only. `journalPool` (default: `pool`) ships the commit journals, every OD_JOURNAL_SHIP_INTERVAL_MS
 * and after each projection write; without one the journals stay local and the log says so once.
 * OD_LANDINGS_SCAN_INTERVAL_MS > 0 also runs the periodic `landings scan` (src/landings/periodic.ts).
 */
export async function createWorkersFromConfig(
  cfg: Config,
  connection: NativeConnection,
  pool?: Pool,
  opts: { journalPool?: Pool; log?: ShipperLog } = {},
): Promise<Worker[]> {
  const journalPool = opts.journalPool ?? pool ?? null;
  const shipper = new JournalShipper({
    pool: journalPool,
    hostId: cfg.hostId,
    allowedRoots: cfg.allowedRoots,
    provenanceNotes: cfg.provenanceNotes,
    ...(opts.log ? { log: opts.log } : {}),
  });
  const workers = await createWorkers({
    shipper,
    connection,
    namespace: cfg.temporalNamespace,
    taskQueue: cfg.taskQueue,
    hostId: cfg.hostId,
    allowedRoots: cfg.allowedRoots,
    authority: authorityFromConfig(cfg),
    pool,
    ...(journalPool ? { beaconPool: journalPool } : {}),
    // A keyless host agent runs no workflows and seals nothing: only the payload encryption, if any.
    dataConverter: !pool && cfg.hostAgentKeyless ? keylessConverter(cfg) : dataConverterOf(cfg),
    maxCachedWorkflows: cfg.maxCachedWorkflows,
    settings: ownershipSettingsOf(cfg),
  });
  // Only once the workers exist (their start check passed): a refused start leaves no timer behind.
  shipper.start(JOURNAL_SHIP_INTERVAL_MS);
  if (journalPool && cfg.landingsScanIntervalMs > 0)
    new LandingScanJob({ pool: journalPool, hostId: cfg.hostId, ...(opts.log ? { log: opts.log } : {}) }).start(cfg.landingsScanIntervalMs);
  return workers;
}

/** The data converter of a host agent that holds no service key: payload encryption when the deployment uses it, nothing else. */
function keylessConverter(cfg: Config): DataConverter {
  return cfg.payloadKeyFile ? { payloadCodecs: [new EncryptionCodec(readPayloadKey(cfg.payloadKeyFile))] } : {};
}
