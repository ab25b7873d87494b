import { mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The two runs that load the whole machine (the fault run: its own stack of processes, killed and
 * restarted; the 10,000-request fuzz) take turns: on 2 cores, together they starved each other's
 * API past its 30 s deadline, and the checkers rightly called those 503s and slow answers
 * violations. One lock per jest run (keyed by the parent process), a directory made atomically.
 */
const LOCK = path.join(os.tmpdir(), `od-heavy-test-${process.ppid}.lock`);

export async function acquireHeavyLock(): Promise<() => void> {
  for (;;) {
    try {
      mkdirSync(LOCK);
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch {
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
