import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { OwnershipClient } from '../../src/client';
import { gitWorktreeResolver } from '../../src/adapters/worktree-resolver';
import { hostTaskQueue } from '../../src/domain/queues';
import type { OwnershipSettings } from '../../src/domain/settings';
import { createLogger } from '../../src/infra/logger';
import { createKeyFileIfMissing } from '../../src/keys/message-seal';
import { dataConverterOf } from '../../src/infra/payload-codec';
import { installTemporalLogging } from '../../src/infra/workers';
import { startTimeSkipping } from '../support/time-skipping';
import { fakeActivities, type FakeActivities } from './fake-activities';

/**
 * The ownership workflow (the run's bundle, OD_TEST_WORKFLOW_BUNDLE) on the time-skipping test
 * server this file starts, with in-memory activities (fake-activities.ts), driven through the
 * real OwnershipClient. Time stands still unless the test moves it (`advance`): a timer fires
 * exactly when the test says, never because the machine was slow.
 */
export interface OwnershipEnv {
  env: TestWorkflowEnvironment;
  client: OwnershipClient;
  fakes: FakeActivities;
  /** a directory under the client's allowed roots, for real git worktrees */
  root: string;
  /** moves the server's clock on by `ms` (and the seals' clock with it) */
  advance(ms: number): Promise<void>;
  stop(): Promise<void>;
}

/** `worker.maxCachedWorkflows: 0`: every workflow task runs on a copy of the run rebuilt from history, as one after a lost task does. */
export async function startOwnershipEnv(
  settings: Partial<OwnershipSettings> = {},
  worker: { maxCachedWorkflows?: number; maxConcurrentWorkflowTaskExecutions?: number } = {},
): Promise<OwnershipEnv> {
  try {
    installTemporalLogging(createLogger((process.env.OD_TEST_LOG_LEVEL ?? 'warn').toLowerCase()));
  } catch {
    // installed by an earlier file of this jest worker
  }
  const root = mkdtempSync(path.join(process.env.OD_TEST_TMP ?? os.tmpdir(), 'wf-'));
  const keyFile = path.join(root, 'service.key');
  createKeyFileIfMissing(keyFile);
  const dataConverter = dataConverterOf({ payloadKeyFile: '', serviceKeyFile: keyFile, dataDir: root });
  const env = await startTimeSkipping(dataConverter);
  const suffix = Math.random().toString(36).slice(2, 8);
  const taskQueue = `wf-${suffix}`;
  const hostId = `wf-host-${suffix}`;
  const fakes = fakeActivities();
  const workers = [
    await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: process.env.OD_TEST_WORKFLOW_BUNDLE! },
      dataConverter,
      activities: fakes.store,
      ...worker,
    }),
    await Worker.create({ connection: env.nativeConnection, taskQueue: hostTaskQueue(hostId), dataConverter, activities: fakes.host }),
  ];
  const running = workers.map((w) => w.run());
  let skewMs = 0;
  const client = new OwnershipClient({
    client: env.client,
    resolver: gitWorktreeResolver,
    taskQueue,
    hostId,
    allowedRoots: [root],
    settings,
    updateWithStart: false,
    now: () => Date.now() + skewMs,
  });
  return {
    env,
    client,
    fakes,
    root,
    async advance(ms) {
      await env.sleep(ms);
      skewMs = (await env.currentTimeMs()) - Date.now();
    },
    async stop() {
      workers.forEach((w) => w.getState() === 'RUNNING' && w.shutdown());
      await Promise.allSettled(running);
      await env.teardown();
    },
  };
}
