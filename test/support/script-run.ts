import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/**
 * One of the project's own runs (`scripts/faults.ts`, `scripts/multihost.ts`) as a test drives it: a
 * child process with its own stack (never the jest one: the jest stack's variables are dropped),
 * its whole output kept, and a stop() for afterAll, so a timed-out test leaves nothing behind
 * (SIGINT runs the run's own cleanup; SIGKILL a minute later).
 */
export class ScriptRun {
  private child: ChildProcess | null = null;

  run(script: string, args: string[], extraEnv: Record<string, string> = {}): Promise<{ code: number | null; text: string }> {
    const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv };
    for (const k of ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'OD_TEST_DATABASE_URL', 'OD_TEST_WORKFLOW_BUNDLE', 'OD_API_URL', 'OD_TOKEN']) delete env[k];
    const out: string[] = [];
    return new Promise((resolve) => {
      const child = spawn(path.join(ROOT, 'node_modules', '.bin', 'tsx'), [script, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
    const t = setTimeout(() => child.kill('SIGKILL'), 60_000);
    await gone;
    clearTimeout(t);
  }
}
