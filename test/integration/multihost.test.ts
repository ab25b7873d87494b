import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { whyNoNetns } from '../../multihost/netns';
import { acquireHeavyLock } from '../support/heavy-lock';

/**
 * The multi-host run's short mode (`npm run multihost -- --short`) as a test: three hosts as network
 * namespaces sharing one Temporal and one PostgreSQL, one cut off by taking its link down, one whose
 * agent is killed, one whose worker is killed under load; all five checks and every bound must hold.
 * It needs root and `ip netns` (CI has both); elsewhere the test is skipped and its name says why.
 */

const ROOT = path.resolve(__dirname, '../..');
const why = whyNoNetns();

let child: ChildProcess | null = null;
let releaseHeavy: () => void = () => undefined;
beforeAll(async () => {
  if (!why) releaseHeavy = await acquireHeavyLock();
}, 900_000);
afterAll(async () => {
  // A timed-out test must not leave the run's processes, namespaces or links behind: SIGINT runs its cleanup.
  if (child && child.exitCode === null && child.signalCode === null) {
    const gone = new Promise((r) => child!.once('exit', r));
    child.kill('SIGINT');
    const t = setTimeout(() => child?.kill('SIGKILL'), 60_000);
    await gone;
    clearTimeout(t);
  }
  releaseHeavy();
});

if (why) {
  process.stderr.write(`multihost (short) not run here: ${why}\n`);
  test.skip(`multihost (short): not run here: ${why}`, () => undefined);
} else {
  test('multihost (short): owners on three network hosts, one cut off and back, an agent gone, a worker killed under load', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    // The jest stack's variables must not leak into the run's own stack.
    for (const k of ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'OD_TEST_DATABASE_URL', 'OD_TEST_WORKFLOW_BUNDLE', 'OD_API_URL', 'OD_TOKEN']) delete env[k];
    const out: string[] = [];
    const code = await new Promise<number | null>((resolve) => {
      child = spawn(path.join(ROOT, 'node_modules', '.bin', 'tsx'), ['scripts/multihost.ts', '--short'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout!.on('data', (b: Buffer) => out.push(b.toString()));
      child.stderr!.on('data', (b: Buffer) => out.push(b.toString()));
      child.once('exit', (c) => resolve(c));
    });
    const text = out.join('');
    const lines = text.split('\n');
    // The figures, and every failure with its detail, in the test's output.
    process.stderr.write(lines.filter((l) => /^\[multihost\] (\d (PASS|FAIL)|bound|PASS|FAIL|the run broke)|^\[multihost\]\s+FAIL/.test(l)).join('\n') + '\n');
    expect(lines.filter((l) => /^\[multihost\] \d (PASS|FAIL)/.test(l)).map((l) => l.split(' ').slice(1, 3).join(' '))).toEqual(['1 PASS', '2 PASS', '3 PASS', '4 PASS', '5 PASS']);
    expect(lines.filter((l) => /^\[multihost\] bound MISSED/.test(l))).toEqual([]);
    expect(code).toBe(0);
  }, 900_000);
}
