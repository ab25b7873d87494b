import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import type { Pool } from 'pg';
import type { LivenessAuthority } from '../../src/activities/liveness';
import { noAuthority } from '../../src/activities/liveness';
import { OwnershipClient, type OwnershipRef, type OwnershipView } from '../../src/client';
import type { Principal } from '../../src/domain/identity';
import { createWorkers } from '../../src/infra/workers';
import { createPool } from '../../src/store/db';
import type { OwnershipSettings } from '../../src/workflows/ownership';

export interface Harness {
  client: OwnershipClient;
  temporal: Client;
  pool: Pool;
  taskQueue: string;
  hostId: string;
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
    Runtime.install({ logger: new DefaultLogger(process.env.OD_TEST_LOG_LEVEL === 'debug' ? 'DEBUG' : 'WARN') });
  } catch {
    // A test installed its own runtime logger first (e.g. to capture logs): keep it.
  }
}

export async function startHarness(opts: { authority?: LivenessAuthority; allowedRoots?: string[]; settings?: Partial<OwnershipSettings> } = {}): Promise<Harness> {
  quietRuntime();
  const suffix = Math.random().toString(36).slice(2, 10);
  const taskQueue = `test-${suffix}`;
  const hostId = `host-${suffix}`;
  const address = required('TEMPORAL_ADDRESS');
  const pool = createPool(required('OD_TEST_DATABASE_URL'));
  const connection = await NativeConnection.connect({ address });
  const allowedRoots = opts.allowedRoots ?? [required('OD_TEST_TMP')];
  const workers: Worker[] = await createWorkers({
    connection,
    namespace: 'default',
    taskQueue,
    hostId,
    allowedRoots,
    authority: opts.authority ?? noAuthority,
    pool,
    workflowBundle: { codePath: required('OD_TEST_WORKFLOW_BUNDLE') },
  });
  const running = workers.map((w) => w.run());
  const clientConnection = await Connection.connect({ address });
  const temporal = new Client({ connection: clientConnection, namespace: 'default' });
  const client = new OwnershipClient({ client: temporal, taskQueue, hostId, allowedRoots, settings: opts.settings });
  return {
    client,
    temporal,
    pool,
    taskQueue,
    hostId,
    async shutdown() {
      // Temporal's runtime also reacts to SIGINT/SIGTERM by itself; only stop what still runs.
      workers.forEach((w) => w.getState() === 'RUNNING' && w.shutdown());
      await Promise.allSettled(running);
      await clientConnection.close();
      await connection.close();
      await pool.end();
    },
  };
}

/** A scripted execution-session authority: what the orchestrator would answer, set by the test. */
export function scriptedAuthority(initial: 'alive' | 'dead' | 'unknown' = 'alive') {
  let verdict = initial;
  let calls = 0;
  const authority: LivenessAuthority = {
    async check() {
      calls++;
      return { verdict, detail: `scripted ${verdict}` };
    },
  };
  return {
    authority,
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
