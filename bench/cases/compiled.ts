import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { log } from '../stack';
import type { Cleanup } from '../../stack/cleanup';
import { childrenByParent, readProcs } from '../../stack/proc-table';

const run = promisify(execFile);
const REPO = path.resolve(__dirname, '../..');

/**
 * The package as an integrator installs it, built for this run: `<root>/pkg` holds package.json,
 * bin/ and a dist/ built by scripts/build.js, with the repository's node_modules beside it. Built
 * into the run's temp dir, never over the working tree's dist/, so it is always the sources of
 * this run; with no src/ beside bin/, bin/od-worktree.js runs dist/ as the installed package does.
 */
export interface BuiltPackage {
  dir: string;
  bin: string;
  buildSeconds: number;
}

export async function buildPackage(root: string): Promise<BuiltPackage> {
  const t0 = Date.now();
  const dir = path.join(root, 'pkg');
  mkdirSync(dir, { recursive: true });
  copyFileSync(path.join(REPO, 'package.json'), path.join(dir, 'package.json'));
  cpSync(path.join(REPO, 'bin'), path.join(dir, 'bin'), { recursive: true });
  symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  await run(process.execPath, [path.join(REPO, 'scripts/build.js'), '--out', path.join(dir, 'dist')], { cwd: REPO, maxBuffer: 16 * 2 ** 20 });
  const buildSeconds = Math.round((Date.now() - t0) / 100) / 10;
  log(`package built in ${buildSeconds} s (${dir})`);
  return { dir, bin: path.join(dir, 'bin', 'od-worktree.js'), buildSeconds };
}

/** The repository's own tsx, as `node_modules/.bin/tsx` runs it (the production path before the build). */
export const TSX_CLI = path.join(REPO, 'node_modules/tsx/dist/cli.mjs');
export const REPO_ROOT = REPO;

export interface Service {
  pid: number;
  /** ms from spawn to the ready line */
  readyMs: number;
  stop(): Promise<void>;
}

/**
 * A service process in its own process group (tsx runs the program in a child of its own), ready
 * once its log says `ready`; stopped with SIGTERM to the group, SIGKILL after 10 s.
 */
export async function startService(
  cleanup: Cleanup,
  label: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: string,
  timeoutMs = 120_000,
): Promise<Service> {
  const t0 = Date.now();
  const child: ChildProcess = spawn(process.execPath, args, { cwd: REPO, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid!;
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }, 10_000);
    await exited;
    clearTimeout(timer);
  };
  cleanup.add(`stop ${label}`, stop, 15_000);
  cleanup.addLastResort(() => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-pid, 'SIGKILL');
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label}: not ready after ${timeoutMs} ms; output: ${output.slice(-2000)}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-20_000);
      if (output.includes(ready)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited (${code ?? signal}) before it was ready: ${output.slice(-2000)}`));
    });
  });
  // Keep draining its output, or a chatty process blocks on a full pipe.
  child.stdout!.resume();
  child.stderr!.resume();
  return { pid, readyMs: Date.now() - t0, stop };
}

/** RSS in MiB of a process and all its descendants (Linux /proc), and of the largest one alone. */
export function treeRss(pid: number): { treeMiB: number; largestMiB: number; processes: number } | null {
  const procs = readProcs();
  if (procs.length === 0) return null;
  const children = childrenByParent(procs);
  const rssOf = (p: number): number => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      return m ? Number(m[1]) / 1024 : 0;
    } catch {
      return 0;
    }
  };
  const all: number[] = [];
  const walk = (p: number) => {
    all.push(p);
    for (const c of children.get(p) ?? []) walk(c.pid);
  };
  walk(pid);
  const sizes = all.map(rssOf);
  if (sizes[0] === 0) return null;
  const round1 = (x: number) => Math.round(x * 10) / 10;
  return { treeMiB: round1(sizes.reduce((a, b) => a + b, 0)), largestMiB: round1(Math.max(...sizes)), processes: all.length };
}
