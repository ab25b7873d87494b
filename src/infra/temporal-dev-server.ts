import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { SEARCH_ATTRIBUTES } from '../config';
import { waitForPort } from './ports';
import { groupRunning } from '../host/procfs';
import { temporalCliPath } from './tools';

export interface DevServerOptions {
  port: number;
  uiPort: number | null;
  /** SQLite file (WAL) for persistence; null keeps everything in memory. */
  dbFile: string | null;
  namespace?: string;
  logFile?: (line: string) => void;
  /** told the pid the moment the server is spawned (it leads its own process group), before it is ready */
  onSpawn?: (pid: number) => void;
  /**
   * the address it listens on (default 127.0.0.1). Only 127.0.0.1 or 0.0.0.0 work: the dev server's
   * own services dial each other on 127.0.0.1 (a multi-host run listens on all and is reached at its bridge's address)
   */
  ip?: string;
}

export interface DevServer {
  address: string;
  uiUrl: string | null;
  process: ChildProcess;
  /** SIGTERM to the whole process group, SIGKILL after `graceMs` (default 5 s); resolves once the group is gone. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * The real `temporal server start-dev`, with this project's search attributes registered at launch.
 * Started in its own process group, so a Ctrl-C reaches the stack's ordered stop first (the
 * worker drains while the server still answers) and stop() ends the whole tree. Because it does
 * not die with its parent by itself, a caller registers its pid (onSpawn) with whatever kills
 * leftovers (src/infra/shutdown.ts for `npm start`).
 */
export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const ip = opts.ip ?? '127.0.0.1';
  const args = ['server', 'start-dev', '--ip', ip, '--port', String(opts.port), '--log-level', 'warn', '--log-format', 'json'];
  if (opts.uiPort) args.push('--ui-port', String(opts.uiPort));
  else args.push('--headless');
  if (opts.dbFile) {
    mkdirSync(path.dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile, '--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal');
  }
  if (opts.namespace && opts.namespace !== 'default') args.push('--namespace', opts.namespace);
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${type}`);

  const child = spawn(temporalCliPath(), args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  if (child.pid !== undefined) opts.onSpawn?.(child.pid);
  const sink = opts.logFile ?? (() => undefined);
  child.stdout?.on('data', (b: Buffer) => sink(b.toString()));
  child.stderr?.on('data', (b: Buffer) => sink(b.toString()));
  let exited = false;
  const exitPromise = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));

  const ready = waitForPort(opts.port, ip, 60_000);
  const died = exitPromise.then(() => {
    throw new Error(`temporal dev server exited during start (port ${opts.port})`);
  });
  try {
    await Promise.race([ready, died]);
  } catch (err) {
    killGroup(child, 'SIGKILL');
    throw err;
  } finally {
    died.catch(() => undefined);
  }

  return {
    address: `${ip}:${opts.port}`,
    uiUrl: opts.uiPort ? `http://${ip}:${opts.uiPort}` : null,
    process: child,
    async stop(graceMs = 5_000) {
      if (!exited) {
        killGroup(child, 'SIGTERM');
        const killer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
        await exitPromise;
        clearTimeout(killer);
      }
      // The CLI is the group's leader; anything it left behind in the group goes with it.
      if (child.pid !== undefined && groupRunning(child.pid)) killGroup(child, 'SIGKILL');
    },
  };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    /* already gone */
  }
}
