import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { createInterface } from 'node:readline';
import { realGit } from './real-git';
import type { Readable, Writable } from 'node:stream';

type Helper = ChildProcessByStdio<Writable, Readable, null>;

/**
 * git processes started by a small helper process instead of by the worker itself.
 *
 * Why: creating a process copies the parent's page tables, so its cost grows with the parent's
 * memory. From a worker holding hundreds of cached ownerships (600+ MiB) one `git` costs 20-35 ms
 * to start against 2-3 ms from a 50 MiB process (measured on this project's 2-core machine), and a
 * first projection or a claim is several of them inside an acknowledgement. The helper is a bare
 * `node -e` script (no modules of ours, no tsx) that runs git exactly as `git()` would have, with
 * the environment, working directory and buffer limit it is given, and answers on its stdout.
 *
 * Only long-lived processes with large heaps turn it on (the workers: src/infra/workers.ts); a CLI
 * call spawns git directly, since starting the helper would cost more than it saves.
 */

/** What the helper reports of one git run: execFile's callback, made plain. */
export interface SpawnedResult {
  stdout: string;
  stderr: string;
  /** the exit code; null when git did not exit normally (signal, could not start) */
  exit: number | null;
  /** execFile's error code when git could not be run or its output overflowed (ENOENT, ERR_CHILD_PROCESS_STDIO_MAXBUFFER…) */
  errno: string | null;
}

interface Request {
  id: number;
  /** the git binary: resolved here (src/git/real-git.ts), the helper has nothing to import */
  git: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  maxBuffer: number;
  /** written to git's stdin, which is then closed */
  input?: string;
}

/** The helper, as plain JavaScript for `node -e`: one JSON line per request and per answer; {kill:id} ends a run; {close:true}, or its stdin closing, ends it once the runs it holds have answered. */
const HELPER = String.raw`
const { execFile } = require('node:child_process');
const running = new Map();
let closed = false;
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.kill !== undefined) { const c = running.get(m.kill); if (c) c.kill('SIGTERM'); return; }
  if (m.close === true) { closed = true; if (running.size === 0) process.exit(0); return; }
  const child = execFile(m.git, m.args, { cwd: m.cwd, env: m.env, maxBuffer: m.maxBuffer, encoding: 'utf8' }, (err, stdout, stderr) => {
    running.delete(m.id);
    out({ id: m.id, stdout, stderr, exit: err === null ? 0 : typeof err.code === 'number' ? err.code : null,
          errno: err !== null && typeof err.code === 'string' ? err.code : null });
    if (closed && running.size === 0) process.exit(0);
  });
  running.set(m.id, child);
  if (typeof m.input === 'string') { child.stdin.on('error', () => {}); child.stdin.end(m.input); }
}).on('close', () => { closed = true; if (running.size === 0) process.exit(0); });
`;

export class GitSpawner {
  private child: Helper | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: SpawnedResult) => void; reject: (e: Error) => void }>();

  run(args: readonly string[], opts: { cwd: string; env: NodeJS.ProcessEnv; maxBuffer: number; signal?: AbortSignal; input?: string }): Promise<SpawnedResult> {
    const child = this.helper();
    const id = this.nextId++;
    return new Promise<SpawnedResult>((resolve, reject) => {
      const onAbort = () => child.stdin.write(`${JSON.stringify({ kill: id })}\n`);
      this.pending.set(id, {
        resolve: (r) => {
          opts.signal?.removeEventListener('abort', onAbort);
          resolve(r);
        },
        reject: (e) => {
          opts.signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      });
      if (this.pending.size === 1) this.hold(child, true);
      const req: Request = {
        id,
        git: realGit(opts.env.PATH),
        args: [...args],
        cwd: opts.cwd,
        env: opts.env,
        maxBuffer: opts.maxBuffer,
        ...(opts.input !== undefined ? { input: opts.input } : {}),
      };
      child.stdin.write(`${JSON.stringify(req)}\n`);
      if (opts.signal?.aborted) onAbort();
      else opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The helper's pid while one runs (diagnostics, tests). */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** Ends the helper once the runs it holds have answered; later runs start a new one. */
  stop(): void {
    // Not the end of its stdin: a run still held may yet be cancelled ({kill}).
    this.child?.stdin.write(`${JSON.stringify({ close: true })}\n`);
    this.child = null;
  }

  /** Keeps the parent alive while a run is pending (as a directly spawned git would), not while idle. */
  private hold(child: Helper, on: boolean): void {
    for (const h of [child, child.stdin, child.stdout] as unknown as Array<{ ref?: () => void; unref?: () => void }>) (on ? h.ref : h.unref)?.call(h);
  }

  private helper(): Helper {
    if (this.child !== null) return this.child;
    // No execArgv: not tsx's loader, not the inspector; the helper needs node alone.
    const child = spawn(process.execPath, ['-e', HELPER], { stdio: ['pipe', 'pipe', 'inherit'], env: process.env });
    this.child = child;
    // Idle, the helper never keeps its parent alive; a worker exiting ends it (its stdin closes).
    this.hold(child, false);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const r = JSON.parse(line) as SpawnedResult & { id: number };
      const p = this.pending.get(r.id);
      this.pending.delete(r.id);
      if (this.pending.size === 0) this.hold(child, false);
      p?.resolve(r);
    });
    const gone = (why: string) => {
      if (this.child === child) this.child = null;
      // A run whose answer is lost may or may not have happened: failed, never run again here.
      for (const [id, p] of this.pending) {
        this.pending.delete(id);
        p.reject(new Error(`the git helper ${why}`));
      }
    };
    child.once('exit', (code, signal) => gone(`exited (${signal ?? code})`));
    child.once('error', (err) => gone(`failed: ${err.message}`));
    child.stdin.on('error', () => undefined);
    return child;
  }
}

let shared: GitSpawner | null = null;

/** Turns the helper on for this process (idempotent). */
export function useGitSpawner(): GitSpawner {
  shared ??= new GitSpawner();
  return shared;
}

/** The helper when this process turned it on, else null (git is spawned directly). */
export function gitSpawner(): GitSpawner | null {
  return shared;
}

/** Turns it off again (tests; a worker's shutdown). */
export function stopGitSpawner(): void {
  shared?.stop();
  shared = null;
}
