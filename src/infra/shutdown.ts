import { groupRunning, groupAncestors, isRunning, sameProcessRunning } from '../host/procfs';
import { startReaper, type Reaper } from './reaper';

/**
 * The one way `npm start` stops: every path (SIGINT, SIGTERM, SIGHUP, the launching process
 * going away, a failed start, a worker crash) runs the same ordered stop, within one deadline,
 * and ends by printing `stopped.`. Children that run outside this process (the Temporal dev
 * server, PostgreSQL) are registered the moment they are spawned, so they are stopped even when
 * the signal comes in the middle of the start; past the deadline, at process exit, and from the
 * reaper if this process is killed outright, whatever is left of them is killed.
 */

export interface ShutdownOptions {
  say: (line: string) => void;
  warn: (line: string) => void;
  /** the whole stop, ordered steps and forced kills, ends within this (default 10 s) */
  deadlineMs?: number;
  /** watch the processes that launched this one (npm, its shell), and stop when one is gone */
  watchLauncher?: boolean;
}

export interface ChildHandle {
  /** the child has exited by itself or was stopped: nothing left to kill */
  release(): void;
}

interface Step {
  name: string;
  tier: number;
  timeoutMs: number;
  stop: () => Promise<void>;
}

interface Child {
  pid: number;
  /** the child leads its own process group: signal the group */
  group: boolean;
}

export interface Shutdown {
  readonly stopping: boolean;
  /**
   * What stops a started part. Higher tiers stop first; one tier's steps run together. Added
   * while stopping (a part that finished starting after the signal), it is stopped at once.
   */
  add(name: string, stop: () => Promise<void>, opts: { tier: number; timeoutMs: number }): void;
  /** A child process outside this one, to be killed if the ordered stop cannot finish. */
  child(pid: number, opts: { group: boolean; signal: 'TERM' | 'INT' }): ChildHandle;
  /** Runs the ordered stop and exits with `code`. Idempotent: later calls wait for the first. */
  run(code: number, why?: string): Promise<never>;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
/** A second signal this long after the first forces the exit; sooner, it is the same request relayed twice. */
const FORCE_AFTER_MS = 1_000;
const LAUNCHER_POLL_MS = 500;

const withTimeout = (p: Promise<void>, ms: number): Promise<'done' | 'timeout'> =>
  new Promise((resolve) => {
    const t = setTimeout(() => resolve('timeout'), ms);
    p.then(
      () => (clearTimeout(t), resolve('done')),
      () => (clearTimeout(t), resolve('done')),
    );
  });

export function createShutdown(opts: ShutdownOptions): Shutdown {
  const deadlineMs = opts.deadlineMs ?? 10_000;
  const steps: Step[] = [];
  const children = new Map<number, Child>();
  const late: Promise<unknown>[] = [];
  const reaper: Reaper = startReaper();
  let running: Promise<never> | null = null;
  let firstSignalAt: number | null = null;

  const killLeft = () => {
    for (const c of children.values()) {
      try {
        process.kill(c.group ? -c.pid : c.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  };
  const anyChildLeft = () => [...children.values()].some((c) => (c.group ? groupRunning(c.pid) : isRunning(c.pid)));
  // process.exit from anywhere (a library, an uncaught error) still takes the children along.
  process.on('exit', killLeft);

  // The first signal asks for the stop (or leaves one already under way to finish); only a
  // second signal, a second after the first, forces the exit.
  const onSignal = (signal: NodeJS.Signals) => {
    if (firstSignalAt === null) {
      firstSignalAt = Date.now();
      void run(0, signal);
    } else if (Date.now() - firstSignalAt > FORCE_AFTER_MS) {
      opts.warn(`${signal} again: killing what is left`);
      killLeft();
      reaper.done();
      process.exit(130);
    }
  };
  for (const s of SIGNALS) process.on(s, onSignal);

  if (opts.watchLauncher !== false) {
    const launchers = groupAncestors();
    const initialParent = process.ppid;
    const timer = setInterval(() => {
      const gone = launchers.find((p) => !sameProcessRunning(p));
      if (gone || process.ppid !== initialParent) void run(0, `the process that started this one (pid ${gone?.pid ?? initialParent}) is gone`);
    }, LAUNCHER_POLL_MS);
    timer.unref();
  }

  async function stopAll(): Promise<boolean> {
    const started = Date.now();
    const tiers = [...new Set(steps.map((s) => s.tier))].sort((a, b) => b - a);
    let clean = true;
    for (const tier of tiers) {
      const left = deadlineMs - 1_000 - (Date.now() - started);
      if (left <= 0) return false;
      const results = await Promise.all(
        steps
          .filter((s) => s.tier === tier)
          .map(async (s) => {
            const r = await withTimeout(s.stop(), Math.min(s.timeoutMs, left));
            if (r === 'timeout') opts.warn(`stopping ${s.name} took longer than ${Math.round(Math.min(s.timeoutMs, left) / 1000)} s`);
            return r;
          }),
      );
      if (results.includes('timeout')) clean = false;
    }
    const rest = deadlineMs - 1_000 - (Date.now() - started);
    if (late.length && rest > 0) await Promise.race([Promise.allSettled(late), new Promise((r) => setTimeout(r, rest))]);
    return clean;
  }

  function run(code: number, why?: string): Promise<never> {
    if (running) return running;
    opts.say(why && !why.startsWith('SIG') ? `stopping (${why})…` : 'stopping…');
    const hard = setTimeout(() => {
      opts.warn(`the stop took longer than ${deadlineMs / 1000} s: killing what is left`);
      killLeft();
      reaper.done();
      opts.say('stopped.');
      process.exit(code || 1);
    }, deadlineMs);
    hard.unref();
    running = stopAll().then(() => {
      if (anyChildLeft()) {
        killLeft();
        opts.warn('a child process outlived its stop and was killed');
      }
      reaper.done();
      opts.say('stopped.');
      process.exit(code);
    });
    return running;
  }

  return {
    get stopping() {
      return running !== null;
    },
    add(name, stop, o) {
      if (running) {
        late.push(stop().catch(() => undefined));
        return;
      }
      steps.push({ name, stop, tier: o.tier, timeoutMs: o.timeoutMs });
    },
    child(pid, o) {
      children.set(pid, { pid, group: o.group });
      reaper.add(pid, o.signal, o.group ? 'group' : 'pid');
      return {
        release() {
          children.delete(pid);
          reaper.del(pid);
        },
      };
    },
    run,
  };
}
