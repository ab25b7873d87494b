import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { noopStop, noopUpdate, type noopWorkflow } from '../workflows/noop';
import { round } from '../breakdown';
import { judge, type Row } from '../report';
import { log, type BenchStack } from '../stack';
import { mapLimit, sleep, summarize, timeOnce } from '../stats';
import { minimalStop, minimalUpdate, type minimalNoopWorkflow } from '../workflows/minimal';

export interface MemorySample {
  rssMiB: number;
  heapUsedMiB: number;
  externalMiB: number;
  cachedWorkflows: number;
}

const MiB = 2 ** 20;

let gcFn: (() => void) | null | undefined;
/** A full GC of the main isolate when it can be had (--expose-gc set at run time), so samples are not garbage. */
function collect(): void {
  if (gcFn === undefined) {
    try {
      v8.setFlagsFromString('--expose-gc');
      gcFn = vm.runInNewContext('gc') as () => void;
    } catch {
      gcFn = null;
    }
  }
  gcFn?.();
}

/** A sample after garbage collection (main isolate) and a short settle. */
export async function settledSample(stack: BenchStack | null): Promise<MemorySample> {
  collect();
  await sleep(300);
  collect();
  return memorySample(stack);
}

/** This process's memory: it hosts the worker (workflow isolates, the Rust core), the client and the pools. */
export function memorySample(stack: BenchStack | null): MemorySample {
  const m = process.memoryUsage();
  return {
    rssMiB: round(m.rss / MiB, 1),
    heapUsedMiB: round(m.heapUsed / MiB, 1),
    externalMiB: round(m.external / MiB, 1),
    cachedWorkflows: stack ? stack.workers.reduce((a, w) => a + w.getStatus().numCachedWorkflows, 0) : 0,
  };
}

/** 8. RSS of the process hosting the worker with N live ownerships, next to the same process before any workflow ran. */
export function memoryRow(n: number, before: MemorySample, withLive: MemorySample, extra: Record<string, unknown>): Row {
  const goal = { on: 'absolute' as const, op: '<=' as const, value: 512 };
  return {
    id: 'worker-rss',
    name: `worker RSS, ${n} live ownerships (MiB)`,
    unit: 'MiB',
    ours: { p50: withLive.rssMiB, p99: null },
    base: { p50: before.rssMiB, p99: null },
    baseLabel: 'same process before any workflow',
    ratio: withLive.rssMiB / before.rssMiB,
    goal,
    met: judge(goal, null, withLive.rssMiB),
    details: {
      before,
      withLive,
      deltaMiB: round(withLive.rssMiB - before.rssMiB, 1),
      perOwnershipKiB: round(((withLive.rssMiB - before.rssMiB) * 1024) / n, 1),
      ...extra,
    },
  };
}

/** Built at the start, before the first memory sample, so the bundler's garbage is not measured later. */
export async function buildMinimalBundle(): Promise<string> {
  const bundle = await bundleWorkflowCode({
    workflowsPath: path.resolve(__dirname, '../workflows/minimal.ts'),
    logger: { trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: log, log: () => undefined },
  });
  return bundle.code;
}

/**
 * What one cached workflow costs, and why: `k` noop workflows of the bench's bundle (the product's
 * workflows and their modules, plus the noop: bench/workflows/index.ts) vs `k` of the same noop
 * bundled alone. Each side gets a worker of its own (its own workflow thread and V8
 * isolate, freed at shutdown), so neither reuses heap the other or earlier cases left behind; run
 * before any other workflow exists. Workflows are created by update-with-start, whose latency
 * (the first activation) is recorded too.
 */
export async function perWorkflowCost(stack: BenchStack, k: number, minimalBundle: string): Promise<Record<string, unknown>> {
  const run = Math.random().toString(36).slice(2, 8);
  const measure = async (label: string, bundle: { code: string } | { codePath: string }, workflowType: 'noopWorkflow' | 'minimalNoopWorkflow') => {
    const connection = await NativeConnection.connect({ address: stack.temporalAddress });
    const taskQueue = `${stack.taskQueue}-${label}`;
    const worker = await Worker.create({ connection, namespace: 'default', taskQueue, workflowBundle: bundle });
    const running = worker.run();
    try {
      const s0 = await settledSample(stack);
      const firstActivation: number[] = [];
      for (let i = 0; i < k; i++) {
        const workflowId = `bench-${label}-${run}-${i}`;
        firstActivation.push(
          await timeOnce(() =>
            workflowType === 'noopWorkflow'
              ? stack.temporal.workflow.executeUpdateWithStart(noopUpdate, {
                  args: [1],
                  startWorkflowOperation: new WithStartWorkflowOperation<typeof noopWorkflow>('noopWorkflow', {
                    workflowId,
                    taskQueue,
                    workflowIdConflictPolicy: 'USE_EXISTING',
                  }),
                })
              : stack.temporal.workflow.executeUpdateWithStart(minimalUpdate, {
                  args: [1],
                  startWorkflowOperation: new WithStartWorkflowOperation<typeof minimalNoopWorkflow>('minimalNoopWorkflow', {
                    workflowId,
                    taskQueue,
                    workflowIdConflictPolicy: 'USE_EXISTING',
                  }),
                }),
          ),
        );
      }
      const s1 = await settledSample(stack);
      await mapLimit(
        Array.from({ length: k }, (_, i) => i),
        16,
        (i) => stack.temporal.workflow.getHandle(`bench-${label}-${run}-${i}`).signal(workflowType === 'noopWorkflow' ? noopStop : minimalStop),
      );
      log(`memory: ${k} ${label} noop workflows on a fresh worker: +${round(s1.rssMiB - s0.rssMiB, 1)} MiB RSS`);
      return {
        perWorkflowKiB: round(((s1.rssMiB - s0.rssMiB) * 1024) / k, 1),
        updateWithStartP50Ms: round(summarize(firstActivation).p50),
        rssBeforeMiB: s0.rssMiB,
        rssAfterMiB: s1.rssMiB,
      };
    } finally {
      worker.shutdown();
      await running.catch(() => undefined);
      await connection.close();
    }
  };
  const product = await measure('product-bundle', { codePath: stack.bundlePath }, 'noopWorkflow');
  const minimal = await measure('minimal-bundle', { code: minimalBundle }, 'minimalNoopWorkflow');
  return { workflows: k, productBundle: product, minimalBundle: minimal, productBundleBytes: stack.bundleBytes, minimalBundleBytes: minimalBundle.length };
}
