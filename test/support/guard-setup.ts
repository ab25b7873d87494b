import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sweepRegistry } from './process-guard';

/**
 * The jest process's half of the child-process guard (process-guard.ts): the run's registry file,
 * named to the workers in OD_TEST_CHILDREN, swept when jest ends (teardown) or is interrupted
 * (Ctrl-C, SIGTERM: the children are in process groups of their own, which the terminal's
 * signal no longer reaches). Starts nothing: every tier runs it, the unit tier included.
 * Idempotent: each jest project (tier) of a run calls it.
 */
const g = globalThis as { __odGuardDir?: string };

export default function guardSetup(): void {
  if (g.__odGuardDir) return;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'od-test-children-'));
  g.__odGuardDir = dir;
  const registry = path.join(dir, 'registry.jsonl');
  process.env.OD_TEST_CHILDREN = registry;
  const sweep = () => sweepRegistry(registry);
  process.on('exit', () => {
    sweep();
    rmSync(dir, { recursive: true, force: true });
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      sweep();
      // What the signal would have done without this listener: jest ends.
      process.kill(process.pid, sig);
    });
  }
}

export function guardTeardown(): void {
  const dir = g.__odGuardDir;
  if (!dir) return;
  const killed = sweepRegistry(path.join(dir, 'registry.jsonl'));
  if (killed) process.stderr.write(`[guard] killed ${killed} process group(s) left running at the end of the run\n`);
}
