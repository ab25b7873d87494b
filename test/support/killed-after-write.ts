/**
 * A workflow worker that is killed (SIGKILL, by itself) right after its first log write commits:
 * the write is a local activity, so its result was to reach history with the workflow task that
 * ran it, and that task is lost with the process. What it wrote is printed first, one JSON line
 * (`{"wrote": [...]}`), for the test to compare with the log. Started by
 * test/integration/log-ahead.test.ts; its environment names the run's stack and the queue.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { createStoreActivities } from '../../src/activities';
import { auditSinks } from '../../src/infra/audit-sink';
import { keyringOf } from '../../src/infra/payload-codec';
import { createPool } from '../../src/store/db';
import type { OwnershipEvent } from '../../src/domain/events';
import { testDataConverter } from './harness';

async function main(): Promise<void> {
  const env = (name: string): string => process.env[name] ?? (process.stderr.write(`${name} is not set\n`), process.exit(2));
  const dataConverter = testDataConverter();
  const pool = createPool(env('OD_TEST_DATABASE_URL'));
  const store = createStoreActivities({ pool, keyring: keyringOf(dataConverter) });
  const connection = await NativeConnection.connect({ address: env('TEMPORAL_ADDRESS') });
  const worker = await Worker.create({
    connection,
    taskQueue: env('OD_KILLED_TASK_QUEUE'),
    workflowBundle: { codePath: env('OD_TEST_WORKFLOW_BUNDLE') },
    dataConverter,
    sinks: auditSinks(pool, () => undefined),
    activities: {
      ...store,
      async persistEvents(workflowId: string, events: OwnershipEvent[]) {
        await store.persistEvents(workflowId, events);
        process.stdout.write(`${JSON.stringify({ wrote: events })}\n`, () => process.kill(process.pid, 'SIGKILL'));
        // Never answers: the process ends before its task does.
        return await new Promise<never>(() => undefined);
      },
    },
  });
  process.stdout.write('{"polling": true}\n');
  await worker.run();
}

void main();
