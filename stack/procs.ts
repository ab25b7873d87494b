import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';

/**
 * A service process of the stack under test that the run can kill and start again: its own
 * process group (so `kill -9` takes its children with it: the git helper, the program a wrapper
 * such as `ip netns exec` runs), stdout and stderr appended to one
 * log file per component, and readiness read from what the process prints.
 */
export interface ProcSpec {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  logFile: string;
  /** a line the process prints once it serves (matched on its output since this start) */
  readyLine: RegExp;
  readyTimeoutMs: number;
}

export class ManagedProcess {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private output = '';
  private readyWaiters: (() => void)[] = [];
  /** how the last start ended (exit code and signal), for the message of a start that failed */
  private lastExit = '';
  starts = 0;

  constructor(readonly spec: ProcSpec) {}

  get name(): string {
    return this.spec.name;
  }
  get pid(): number | null {
    return this.child?.pid ?? null;
  }
  running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the process and resolves once it printed its ready line; rejects if it exits first. */
  async start(): Promise<void> {
    if (this.running()) throw new Error(`${this.name} is already running`);
    this.starts++;
    this.output = '';
    const startedAt = Date.now();
    const fd = openSync(this.spec.logFile, 'a');
    writeSync(fd, `\n===== ${new Date().toISOString()} start #${this.starts} of ${this.name} =====\n`);
    const child = spawn(this.spec.command, this.spec.args, { cwd: this.spec.cwd, env: this.spec.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const onData = (b: Buffer) => {
      writeSync(fd, b);
      // Only the tail matters for readiness; the whole output is in the log file.
      this.output = (this.output + b.toString()).slice(-64 * 1024);
      if (this.spec.readyLine.test(this.output)) for (const w of this.readyWaiters.splice(0)) w();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    this.exited = new Promise<void>((resolve) =>
      child.once('exit', (code, signal) => {
        this.lastExit = `code ${code}, signal ${signal}`;
        writeSync(fd, `\n===== ${new Date().toISOString()} ${this.name} exited (${this.lastExit}) =====\n`);
        closeSync(fd);
        resolve();
      }),
    );
    const ready = new Promise<void>((resolve) => this.readyWaiters.push(resolve));
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      ready.then(() => 'ready' as const),
      this.exited.then(() => 'exited' as const),
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), this.spec.readyTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (outcome !== 'ready') {
      if (outcome === 'timeout') this.signal('SIGKILL');
      const how = outcome === 'exited' ? `exited (${this.lastExit})` : 'did not get ready';
      throw new Error(`${this.name} ${how} during start after ${Date.now() - startedAt} ms; last output:\n${this.output.slice(-2000)}`);
    }
  }

  /** Sends a signal to the whole process group; false when nothing was there to receive it. */
  signal(sig: NodeJS.Signals): boolean {
    const pid = this.child?.pid;
    if (!pid || !this.running()) return false;
    try {
      process.kill(-pid, sig);
      return true;
    } catch {
      return false;
    }
  }

  /** `kill -9` of the group, resolved once the process is gone. */
  async kill9(): Promise<void> {
    this.signal('SIGKILL');
    await this.exited;
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 8_000): Promise<void> {
    if (!this.signal('SIGTERM')) return;
    const killer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(killer);
  }

  /** Synchronous last resort at process exit. */
  killSync(): void {
    this.signal('SIGCONT');
    this.signal('SIGKILL');
  }

  logTail(chars = 3000): string {
    try {
      return readFileSync(this.spec.logFile, 'utf8').slice(-chars);
    } catch {
      return '';
    }
  }
}
