import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { guardChild } from './process-guard';

const ROOT = path.resolve(__dirname, '../..');

/**
 * One of the project's own runs (`scripts/faults.ts`, `scripts/multihost.ts`) as a test drives it: a
 * child process with its own stack (never the jest one: the jest stack's variables are dropped),
 * its whole output kept, and a stop() for afterAll, so a timed-out test leaves nothing behind
 * (SIGINT runs the run's own cleanup; SIGKILL to its process group a minute later). The run is a
 * group of its own, guarded (process-guard.ts): stopped the same way when its test file ends
 * without calling stop(), whether it passed or failed.
 */
export class ScriptRun {
  private child: ChildProcess | null = null;

  run(script: string, args: string[], extraEnv: Record<string, string> = {}): Promise<{ code: number | null; text: string }> {
    const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv };
    for (const k of ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'OD_TEST_DATABASE_URL', 'OD_TEST_WORKFLOW_BUNDLE', 'OD_API_URL', 'OD_TOKEN']) delete env[k];
    const out: string[] = [];
    return new Promise((resolve) => {
      const child = spawn(path.join(ROOT, 'node_modules', '.bin', 'tsx'), [script, ...args], {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      // SIGINT to tsx alone, which relays it: the run's own cleanup, as stop() asks for it.
      guardChild(child, { stopSignal: 'SIGINT', graceMs: 60_000, leaderOnly: true });
      this.child = child;
      child.stdout!.on('data', (b: Buffer) => out.push(b.toString()));
      child.stderr!.on('data', (b: Buffer) => out.push(b.toString()));
      child.once('exit', (code) => resolve({ code, text: out.join('') }));
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGINT');
    const t = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the group is gone
      }
    }, 60_000);
    await gone;
    clearTimeout(t);
  }
}
