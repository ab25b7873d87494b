import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { Pool } from 'pg';
import type { LivenessAuthority } from '../../src/activities/liveness';
import { noAuthority } from '../../src/activities/liveness';
import { OwnershipClient, type OwnershipRef, type OwnershipView } from '../../src/client';
import { gitWorktreeResolver } from '../../src/adapters/worktree-resolver';
import type { Principal } from '../../src/domain/identity';
import { createLogger } from '../../src/infra/logger';
import { createWorkers, installTemporalLogging } from '../../src/infra/workers';
import { stopGitSpawner } from '../../src/git/spawner';
import { dropDatabase, ensureDatabase } from '../../src/infra/postgres';
import { createPool, migrate } from '../../src/store/db';
import type { OwnershipSettings } from '../../src/workflows/ownership';
import type { OwnershipEvent } from '../../src/domain/events';
import type { OwnershipRecord } from '../../src/domain/projection';
import { DEFAULT_SETTINGS } from '../../src/domain/settings';
import type { DataConverter } from '@temporalio/common';
import os from 'node:os';
import { dataConverterOf } from '../../src/infra/payload-codec';
import { loadKeyring, type MessageKeyring } from '../../src/keys/message-seal';
import { startSealRequest } from '../../src/domain/seal';
import { type Tenure } from '../../src/domain/tenure';
import { tenureSecret } from '../../src/keys/tenure';

/**
 * The data converter of the test run's service processes: messages sealed with the run's service
 * key (global-setup writes it and names it in OD_SERVICE_KEY_FILE, so processes a test starts share
 * it), payloads encrypted when a payload key is given.
 */
export function testDataConverter(payloadKeyFile = ''): DataConverter {
  return dataConverterOf({ payloadKeyFile, serviceKeyFile: process.env.OD_SERVICE_KEY_FILE ?? '', dataDir: process.env.OD_TEST_TMP ?? os.tmpdir() });
}

/** The run's service key (as testDataConverter seals with): what a host agent a test starts itself derives tenure hashes from. */
export function testKeyring(): MessageKeyring {
  return loadKeyring({ serviceKeyFile: process.env.OD_SERVICE_KEY_FILE ?? '', dataDir: process.env.OD_TEST_TMP ?? os.tmpdir() });
}

/**
 * The secret the API would answer for a tenure (src/keys/tenure.ts), for a test that bound
 * through OwnershipClient and so has no answer to take it from: what the owner runs git with.
 */
export function testTenureSecret(t: Tenure): string {
  return tenureSecret(testKeyring().sealing.key, t);
}

export interface Harness {
  client: OwnershipClient;
  temporal: Client;
  pool: Pool;
  taskQueue: string;
  hostId: string;
  /** What a test needs to replace the workers mid-run (torture's --restart-worker): how they were made. */
  workers: { initial: Worker[]; temporalAddress: string; allowedRoots: string[]; bundlePath: string; maxCachedWorkflows: number; dataConverter: DataConverter };
  shutdown(): Promise<void>;
}

function required(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run the tests through \`npm test\` (jest's global setup starts the stack)`);
  return v;
}

/**
 * A real worker (its own task queue and host id) on the run's Temporal dev server and database.
 * The liveness authority is the one external seam a test may script: it stands for the orchestrator.
 */
let runtimeInstalled = false;
function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    // As worker.ts does: the SDK's log through ours, warnings and errors only unless OD_TEST_LOG_LEVEL says more.
    installTemporalLogging(createLogger((process.env.OD_TEST_LOG_LEVEL ?? 'warn').toLowerCase()));
  } catch {
    // A test installed its own runtime logger first (e.g. to capture logs): keep it.
  }
}

export async function startHarness(
  opts: {
    authority?: LivenessAuthority;
    allowedRoots?: string[];
    settings?: Partial<OwnershipSettings>;
    workerSettings?: Partial<OwnershipSettings>;
    dataConverter?: DataConverter;
    /**
     * A database of its own (migrated, dropped at shutdown) instead of the run's shared one: for a
     * test that reads every ownership the store holds and then messages them (the fuzz), which must
     * not find other test files' ownerships, whose workers stop when those files end.
     */
    ownDatabase?: boolean;
    /** the workflow cache cap (small: every few tasks replay from history) */
    maxCachedWorkflows?: number;
  } = {},
): Promise<Harness> {
  quietRuntime();
  const suffix = Math.random().toString(36).slice(2, 10);
  const taskQueue = `test-${suffix}`;
  const hostId = `host-${suffix}`;
  const address = required('TEMPORAL_ADDRESS');
  const runDatabase = required('OD_TEST_DATABASE_URL');
  const own = opts.ownDatabase ? await ownDatabase(runDatabase, suffix) : null;
  const pool = createPool(own?.url ?? runDatabase);
  const connection = await NativeConnection.connect({ address });
  const allowedRoots = opts.allowedRoots ?? [required('OD_TEST_TMP')];
  const dataConverter = opts.dataConverter ?? testDataConverter();
  const workers: Worker[] = await createWorkers({
    connection,
    namespace: 'default',
    taskQueue,
    hostId,
    allowedRoots,
    authority: opts.authority ?? noAuthority,
    pool,
    workflowBundle: { codePath: required('OD_TEST_WORKFLOW_BUNDLE') },
    ...(opts.workerSettings ? { settings: opts.workerSettings } : {}),
    dataConverter,
    ...(opts.maxCachedWorkflows ? { maxCachedWorkflows: opts.maxCachedWorkflows } : {}),
  });
  // A worker that fails leaves every later message to its ownerships waiting: said at once, not found from a timeout.
  const running = workers.map((w) =>
    w
      .run()
      .catch(
        (err: unknown) =>
          void process.stderr.write(`[harness] a worker of ${taskQueue} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`),
      ),
  );

  const clientConnection = await Connection.connect({ address });
  const temporal = new Client({ connection: clientConnection, namespace: 'default', dataConverter });
  const client = new OwnershipClient({ client: temporal, resolver: gitWorktreeResolver, taskQueue, hostId, allowedRoots, settings: opts.settings });
  return {
    client,
    temporal,
    pool,
    taskQueue,
    hostId,
    workers: {
      initial: workers,
      temporalAddress: address,
      allowedRoots,
      bundlePath: required('OD_TEST_WORKFLOW_BUNDLE'),
      maxCachedWorkflows: opts.maxCachedWorkflows ?? 0,
      dataConverter,
    },
    async shutdown() {
      // Temporal's runtime also reacts to SIGINT/SIGTERM by itself; only stop what still runs.
      workers.forEach((w) => w.getState() === 'RUNNING' && w.shutdown());
      await Promise.allSettled(running);
      await clientConnection.close();
      await connection.close();
      await pool.end();
      if (own) await dropDatabase(runDatabase, own.name);
      // The workers' git helper (src/git/spawner.ts) goes with them: one test file, one helper at most.
      stopGitSpawner();
    },
  };
}

/** `<run database>_<suffix>`, migrated; global teardown drops any a crashed test left behind. */
async function ownDatabase(runDatabase: string, suffix: string): Promise<{ name: string; url: string }> {
  const name = `${new URL(runDatabase).pathname.slice(1)}_${suffix}`;
  const url = await ensureDatabase(runDatabase, name);
  await migrate(url);
  return { name, url };
}

/** A scripted execution-session authority: what the orchestrator would answer, set by the test. */
export function scriptedAuthority(initial: 'alive' | 'dead' | 'unknown' = 'alive') {
  let verdict = initial;
  let calls = 0;
  let onAsk: (() => Promise<void>) | null = null;
  const authority: LivenessAuthority = {
    async check() {
      calls++;
      const hook = onAsk;
      onAsk = null;
      if (hook) await hook();
      return { verdict, detail: `scripted ${verdict}` };
    },
  };
  return {
    authority,
    /** Runs once, the next time the authority is asked, before it answers (something that happens while it is being asked). */
    whenAsked(fn: () => Promise<void>) {
      onAsk = fn;
    },
    set(v: 'alive' | 'dead' | 'unknown') {
      verdict = v;
    },
    get calls() {
      return calls;
    },
  };
}

/** An executor principal bound to `workerId`, as the API would authenticate it. */
export const executorPrincipal = (workerId: string): Principal => ({ kind: 'executor', id: `exec-${workerId}`, workerId });

/** Polls the live projection until `pred` holds (signals are asynchronous; updates are not). */
export async function waitForView(client: OwnershipClient, ref: OwnershipRef, pred: (v: OwnershipView) => boolean, timeoutMs = 30_000): Promise<OwnershipView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await client.projection(ref);
    if (v && pred(v)) return v;
    if (Date.now() > deadline) throw new Error(`condition not reached; last state ${v?.state}, sync ${JSON.stringify(v?.projectionSync)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A run started as continue-as-new would start it, believing `record` and the log's position
 * `sync.durableSeq` about a worktree: how a test puts a run and the log at odds on purpose (a
 * sequence gap, a log ahead of the run).
 */
export function startBelieving(
  h: Pick<Harness, 'temporal' | 'taskQueue' | 'hostId'>,
  run: {
    workflowId: string;
    ownershipId: string;
    repoRoot: string;
    worktree: { path: string; branch: string };
    record: OwnershipRecord;
    recentEvents: OwnershipEvent[];
    sync: { localSeq: number; durableSeq: number };
  },
) {
  return h.temporal.workflow.start('ownershipWorkflow', {
    workflowId: run.workflowId,
    taskQueue: h.taskQueue,
    args: [
      {
        ownershipId: run.ownershipId,
        worktree: { repoRoot: run.repoRoot, worktreePath: run.worktree.path, branch: run.worktree.branch, hostId: h.hostId },
        settings: DEFAULT_SETTINGS,
        // sealed as the service's own starts are (the harness's client holds the service key)
        seal: startSealRequest(Date.now()),
        carried: {
          record: run.record,
          durableRecord: run.record,
          recentEvents: run.recentEvents,
          liveness: { status: 'live', verdict: null, lastHeartbeatAt: null, checkedAt: null, leaseTtlMs: DEFAULT_SETTINGS.leaseTtlMs },
          projectionSync: { hostId: h.hostId, error: null, ...run.sync },
          lastHeartbeatMs: Date.now(),
          lastHeartbeatLoggedMs: Date.now(),
        },
      },
    ],
  });
}
