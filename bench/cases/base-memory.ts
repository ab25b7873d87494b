import { renameSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../src/infra/ports';
import { generateToken, hashToken } from '../../src/auth/tokens';
import type { Cleanup } from '../../stack/cleanup';
import type { BenchContext } from '../context';
import { judge, type Row } from '../report';
import { log } from '../stack';
import { sleep } from '../stats';
import { REPO_ROOT, startService, treeRss, TSX_CLI, type BuiltPackage } from './compiled';

interface Sample {
  /** the process and its children (tsx runs the program in a child process) */
  treeMiB: number;
  largestMiB: number;
  processes: number;
  readyMs: number;
}

/** Settling time and readings per process: the quick mode (the CI smoke run) takes fewer. */
const sampling = (scale: number) => (scale >= 0.5 ? { settleMs: 3_000, readings: 5 } : { settleMs: 1_000, readings: 3 });

/** Median of a few RSS readings after the service said it was ready and had a moment to settle. */
async function sampleService(cleanup: Cleanup, scale: number, label: string, args: string[], env: NodeJS.ProcessEnv, ready: string): Promise<Sample> {
  const svc = await startService(cleanup, label, args, env, ready);
  const { settleMs, readings: n } = sampling(scale);
  try {
    await sleep(settleMs);
    const readings = [];
    for (let i = 0; i < n; i++) {
      const r = treeRss(svc.pid);
      if (r) readings.push(r);
      await sleep(400);
    }
    if (readings.length === 0) throw new Error(`${label}: no RSS readings (is /proc there?)`);
    readings.sort((a, b) => a.treeMiB - b.treeMiB);
    const mid = readings[Math.floor(readings.length / 2)];
    log(`memory: ${label}: ${mid.treeMiB} MiB RSS (${mid.processes} process${mid.processes > 1 ? 'es' : ''}), ready after ${svc.readyMs} ms`);
    return { ...mid, readyMs: svc.readyMs };
  } finally {
    await svc.stop();
  }
}

function memoryPair(id: string, name: string, compiled: Sample, tsx: Sample, baseLabel: string, details: Record<string, unknown> = {}): Row {
  const goal = { on: 'ratio' as const, op: '<=' as const, value: 1 };
  const ratio = compiled.treeMiB / tsx.treeMiB;
  return {
    id,
    name,
    unit: 'MiB',
    ours: { p50: compiled.treeMiB, p99: null },
    base: { p50: tsx.treeMiB, p99: null },
    baseLabel,
    ratio,
    goal,
    met: judge(goal, ratio, compiled.treeMiB),
    details: { compiled, tsx, ...details },
  };
}

/**
 * Base memory of the production processes before any ownership exists: the worker (workflow
 * worker + host agent) and the API, each as the image runs it now (`node dist/...`, compiled)
 * and as it ran before (`tsx worker.ts`: TypeScript compiled at start, workflows bundled at start).
 * Each is its own process on the run's Temporal and PostgreSQL, on task queues of its own (so it
 * takes no work from the bench's workers), measured one at a time.
 */
export async function benchBaseMemory(ctx: BenchContext, cleanup: Cleanup, pkg: BuiltPackage): Promise<Row[]> {
  const { stack } = ctx;
  const suffix = Math.random().toString(36).slice(2, 8);
  const common = (label: string): NodeJS.ProcessEnv => ({
    ...process.env,
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    TEMPORAL_ADDRESS: stack.temporalAddress,
    DATABASE_URL: stack.databaseUrl,
    TEMPORAL_TASK_QUEUE: `bench-mem-${label}-${suffix}`,
    OD_HOST_ID: `bench-mem-${label}-${suffix}`,
    OD_ALLOWED_ROOTS: stack.root,
  });
  const worker = {
    compiled: [path.join(pkg.dir, 'dist/worker.js')],
    tsx: [TSX_CLI, path.join(REPO_ROOT, 'worker.ts')],
  };
  const workerCompiled = await sampleService(cleanup, ctx.scale, 'worker (compiled)', worker.compiled, common('wc'), 'worker running');
  const workerTsx = await sampleService(cleanup, ctx.scale, 'worker (tsx)', worker.tsx, common('wt'), 'worker running');
  // What the prebuilt workflow bundle is worth: the compiled worker bundling at start instead (not in the quick mode).
  let workerBundling: Sample | null = null;
  if (ctx.scale >= 0.5) {
    const bundle = path.join(pkg.dir, 'dist/workflow-bundle.js');
    renameSync(bundle, `${bundle}.off`);
    try {
      workerBundling = await sampleService(cleanup, ctx.scale, 'worker (compiled, bundling at start)', worker.compiled, common('wb'), 'worker running');
    } finally {
      renameSync(`${bundle}.off`, bundle);
    }
  }

  const apiEnv = async (label: string): Promise<NodeJS.ProcessEnv> => ({
    ...common(label),
    OD_API_HOST: '127.0.0.1',
    OD_API_PORT: String(await freePort()),
    OD_TOKENS: JSON.stringify({ principals: [{ id: `bench-mem-${label}`, kind: 'reader', tokenSha256: hashToken(generateToken()) }] }),
  });
  const apiCompiled = await sampleService(
    cleanup,
    ctx.scale,
    'api (compiled)',
    [path.join(pkg.dir, 'dist/src/server/main.js')],
    await apiEnv('ac'),
    'api listening',
  );
  const apiTsx = await sampleService(
    cleanup,
    ctx.scale,
    'api (tsx)',
    [TSX_CLI, path.join(REPO_ROOT, 'src/server/main.ts')],
    await apiEnv('at'),
    'api listening',
  );

  return [
    memoryPair(
      'worker-base-rss',
      'worker base RSS, no ownership: node dist/worker.js (MiB)',
      workerCompiled,
      workerTsx,
      'tsx worker.ts (TypeScript and workflow bundle built at start)',
      {
        compiledBundlingAtStart: workerBundling,
      },
    ),
    memoryPair('api-base-rss', 'API base RSS, no ownership: node dist/src/server/main.js (MiB)', apiCompiled, apiTsx, 'tsx src/server/main.ts'),
  ];
}
