import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { SEARCH_ATTRIBUTES } from '../config';
import { waitForPort } from './ports';
import { temporalCliPath } from './tools';

export interface DevServerOptions {
  port: number;
  uiPort: number | null;
  /** SQLite file (WAL) for persistence; null keeps everything in memory. */
  dbFile: string | null;
  namespace?: string;
  logFile?: (line: string) => void;
}

export interface DevServer {
  address: string;
  uiUrl: string | null;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * The real `temporal server start-dev`, with this project's search attributes registered at launch.
 * Exits with the parent: started in its own process group so stop() can end the whole tree.
 */
export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port), '--log-level', 'warn', '--log-format', 'json'];
  if (opts.uiPort) args.push('--ui-port', String(opts.uiPort));
  else args.push('--headless');
  if (opts.dbFile) {
    mkdirSync(path.dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile, '--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal');
  }
  if (opts.namespace && opts.namespace !== 'default') args.push('--namespace', opts.namespace);
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${type}`);

  const child = spawn(temporalCliPath(), args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const sink = opts.logFile ?? (() => undefined);
  child.stdout?.on('data', (b: Buffer) => sink(b.toString()));
  child.stderr?.on('data', (b: Buffer) => sink(b.toString()));
  let exited = false;
  const exitPromise = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));

  const ready = waitForPort(opts.port, '127.0.0.1', 60_000);
  const died = exitPromise.then(() => {
    throw new Error(`temporal dev server exited during start (port ${opts.port})`);
  });
  await Promise.race([ready, died]);
  died.catch(() => undefined);

  return {
    address: `127.0.0.1:${opts.port}`,
    uiUrl: opts.uiPort ? `http://127.0.0.1:${opts.uiPort}` : null,
    process: child,
    async stop() {
      if (exited) return;
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        return;
      }
      const killer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }, 7_000);
      await exitPromise;
      clearTimeout(killer);
    },
  };
}
