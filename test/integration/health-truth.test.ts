import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Pool } from 'pg';
import { checkHealth, type HealthDeps } from '../../src/api/service/health';
import { hostTaskQueue } from '../../src/domain/queues';
import { BEACON_STALE_MS } from '../../src/infra/beacon';
import { createPool } from '../../src/store/db';
import { entryCommand } from '../../stack/compiled';

/**
 * /healthz tells the truth about a host agent that was killed: Temporal keeps listing its pollers
 * for a minute or more, the agent's beacon goes quiet within seconds. A real `worker.ts
 * --host-agent` process, killed with SIGKILL.
 */

const ROOT = path.resolve(__dirname, '../..');
let pool: Pool;
let connection: Connection;
let deps: HealthDeps;
let agent: ChildProcess | null = null;
const suffix = Math.random().toString(36).slice(2, 8);
const hostId = `beacon-${suffix}`;
const taskQueue = `beacon-q-${suffix}`;

beforeAll(async () => {
  pool = createPool(process.env.OD_TEST_DATABASE_URL!);
  connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  deps = { temporal: new Client({ connection }), pool, namespace: 'default', taskQueue, hostTaskQueue: hostTaskQueue(hostId), hostId };
});
afterAll(async () => {
  agent?.kill('SIGKILL');
  await connection?.close();
  await pool?.end();
});

async function pollersListed(): Promise<boolean> {
  const { temporal } = await import('@temporalio/proto');
  const res = await deps.temporal.workflowService.describeTaskQueue({
    namespace: 'default',
    taskQueue: { name: hostTaskQueue(hostId), kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
  });
  return (res.pollers ?? []).length > 0;
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 250));
  }
}

test('a host agent killed with SIGKILL is reported down while Temporal still lists its pollers', async () => {
  const [command, ...argv] = entryCommand('worker.ts', ['--host-agent']);
  agent = spawn(command, argv, {
    cwd: ROOT,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS,
      TEMPORAL_TASK_QUEUE: taskQueue,
      DATABASE_URL: process.env.OD_TEST_DATABASE_URL,
      OD_HOST_ID: hostId,
      OD_ALLOWED_ROOTS: process.env.OD_TEST_TMP,
      LOG_LEVEL: 'warn',
    },
    stdio: 'ignore',
  });
  const up = await until(
    () => checkHealth(deps),
    (h) => h.hostAgent === 'up',
    60_000,
  );
  expect(up).toMatchObject({ temporal: 'up', postgres: 'up', hostAgent: 'up' });

  agent.kill('SIGKILL');
  agent = null;
  const down = await until(
    () => checkHealth(deps),
    (h) => h.hostAgent === 'down',
    BEACON_STALE_MS + 10_000,
  );
  expect(down).toMatchObject({ temporal: 'up', postgres: 'up', hostAgent: 'down' });
  // What made it a lie before: the dead agent's pollers are still listed.
  expect(await pollersListed()).toBe(true);
}, 120_000);
