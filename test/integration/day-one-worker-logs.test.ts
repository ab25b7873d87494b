import { spawn } from 'node:child_process';
import path from 'node:path';
import { entryCommand } from '../../stack/compiled';

/**
 * A normal start is quiet: `worker.ts` (workflows, store and git activities) and
 * `worker.ts --host-agent` (git activities only) print one info line, `worker running`, and
 * nothing else at the default LOG_LEVEL. The Temporal SDK's own log goes through our logger: its
 * warning that the host agent registers no workflows (true by design) is debug, and at
 * LOG_LEVEL=debug it is there, in our format, so it was routed rather than lost.
 */

const ROOT = path.resolve(__dirname, '../..');
const NO_WORKFLOWS = 'No workflows registered, not polling for workflow tasks';

interface Line {
  level: number;
  msg: string;
  [k: string]: unknown;
}

/** Starts worker.ts, waits for `worker running`, stops it with SIGTERM, and returns everything it printed. */
async function runWorker(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: Line[]; raw: string; stderr: string }> {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['LOG_LEVEL', 'DATABASE_URL', 'TEMPORAL_TASK_QUEUE', 'OD_HOST_ID']) delete base[k];
  const suffix = Math.random().toString(36).slice(2, 10);
  const [command, ...argv] = entryCommand('worker.ts', args);
  const child = spawn(command, argv, {
    cwd: ROOT,
    env: {
      ...base,
      TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS!,
      TEMPORAL_TASK_QUEUE: `logs-${suffix}`,
      OD_HOST_ID: `logs-${suffix}`,
      OD_ALLOWED_ROOTS: process.env.OD_TEST_TMP!,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let raw = '';
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (b: Buffer) => {
      raw += b.toString();
      if (raw.includes('"msg":"worker running"')) resolve();
    });
    void exited.then(() => reject(new Error(`worker.ts exited before running:\n${raw}\n${stderr}`)));
  });
  // The SDK logs its warning as the worker's run begins, in the same turn as `worker running`:
  // everything it would print is out once it has stopped.
  child.kill('SIGTERM');
  const code = await exited;
  const stdout = raw
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
  return { code, stdout, raw, stderr };
}

describe.each([
  ['worker.ts --host-agent', ['--host-agent'], {}],
  ['worker.ts (workflows and activities)', [], { DATABASE_URL: process.env.OD_TEST_DATABASE_URL! }],
])('%s', (_name, args, env) => {
  test('at the default LOG_LEVEL it prints `worker running` and nothing else: no SDK warning that the host agent has no workflows', async () => {
    const run = await runWorker(args, env);
    expect({ messages: run.stdout.map((l) => l.msg), stderr: run.stderr, code: run.code }).toEqual({ messages: ['worker running'], stderr: '', code: 0 });
    expect(run.raw).not.toContain(NO_WORKFLOWS);
  }, 120_000);

  test("at LOG_LEVEL=debug the SDK's lines are ours (JSON, component temporal-sdk), the no-workflows one at debug", async () => {
    const run = await runWorker(args, { ...env, LOG_LEVEL: 'debug' });
    const sdk = run.stdout.filter((l) => l.component === 'temporal-sdk');
    expect(sdk.length).toBeGreaterThan(0);
    expect(run.stdout.filter((l) => l.msg === NO_WORKFLOWS).map((l) => l.level)).toEqual([20]);
    expect(run.stderr).toBe('');
  }, 120_000);
});
