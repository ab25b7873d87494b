import { appendFileSync, readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { allPids, isRunning, procCommand, procStat } from '../../src/host/procfs';

/**
 * A failing test stops what it started. Every long-running child a test starts is spawned in its
 * own process group (`detached: true`) and registered here; when the test file ends, passed or
 * failed, the guarded environment (guarded-environment.ts) stops each registered group and every
 * process below it (a dev server or a PostgreSQL a child put in a group of its own included), and
 * any child of this process the file left behind unregistered. A process jest itself never got
 * to tear down (a worker killed, jest interrupted) is still named in the run's registry file
 * (OD_TEST_CHILDREN, made by guard-setup.ts), which the jest process sweeps when it exits.
 *
 * Why groups: a child that dies by SIGKILL leaves its own children running (a failed
 * day-one start/stop left `npm start`, its Temporal dev server and PostgreSQL for 12 minutes).
 */

export interface GuardOptions {
  /** what asks the group to stop first (its own cleanup runs): SIGTERM unless said */
  stopSignal?: NodeJS.Signals;
  /** how long the group has to stop by itself before SIGKILL */
  graceMs?: number;
  /** the stop signal to the child alone, not its group (a child that relays signals to its own children, as tsx does) */
  leaderOnly?: boolean;
}

interface Entry {
  pid: number;
  pgid: number;
  startTime: string;
  stopSignal: NodeJS.Signals;
  graceMs: number;
  leaderOnly: boolean;
}

const DEFAULT_GRACE_MS = 15_000;

/** The guard of one test file, living outside the file's module registry (it outlives the file). */
export class ChildGuard {
  private readonly entries: Entry[] = [];
  /**
   * Children of this process that were there before the file (run in band: the stack's dev server
   * and PostgreSQL): never the file's, nor what they start later (PostgreSQL's backends).
   */
  private readonly before: Set<number>;

  constructor(private readonly registryFile: string | undefined) {
    this.before = new Set(descendantsOf(process.pid, 1));
  }

  register(child: ChildProcess, opts: GuardOptions = {}): void {
    const pid = child.pid;
    if (pid === undefined) return;
    const st = procStat(pid);
    // Only a group leader's group is the child's own: never signal a group the test runner is in.
    const pgid = st && st.pgrp === pid ? pid : 0;
    const entry: Entry = {
      pid,
      pgid,
      startTime: st?.startTime ?? '',
      stopSignal: opts.stopSignal ?? 'SIGTERM',
      graceMs: opts.graceMs ?? DEFAULT_GRACE_MS,
      leaderOnly: opts.leaderOnly ?? false,
    };
    this.entries.push(entry);
    if (this.registryFile) appendFileSync(this.registryFile, `${JSON.stringify({ pid, pgid, startTime: entry.startTime })}\n`);
  }

  /**
   * Everything the file started and left running: each registered group is asked to stop (its
   * signal), given its grace, then killed with every process that was below it; then anything
   * else below this process that was not there before the file.
   */
  async stopAll(): Promise<string[]> {
    const stopped: string[] = [];
    for (const e of this.entries.splice(0)) {
      if (!sameProcess(e.pid, e.startTime) && !(e.pgid && groupAlive(e.pgid))) continue;
      const tree = new Set([...descendantsOf(e.pid), ...(e.pgid ? membersOf(e.pgid) : [])]);
      if (sameProcess(e.pid, e.startTime)) tree.add(e.pid);
      stopped.push(`${e.pid} (group ${e.pgid || 'none'}, ${tree.size} processes)`);
      signal(e.pgid && !e.leaderOnly ? -e.pgid : e.pid, e.stopSignal);
      const deadline = Date.now() + e.graceMs;
      while (Date.now() < deadline && [...tree].some(isRunning)) await new Promise((r) => setTimeout(r, 100));
      if (e.pgid) signal(-e.pgid, 'SIGKILL');
      for (const p of tree) if (isRunning(p)) signal(p, 'SIGKILL');
    }
    const strays = descendantsOf(process.pid, 1)
      .filter((p) => !this.before.has(p))
      .flatMap((p) => [p, ...descendantsOf(p)])
      .filter(isRunning);
    // Named before they go: what was left is what a fix would look for.
    const commands = new Map(strays.map((p) => [p, procCommand(p)]));
    for (const p of strays) {
      const st = procStat(p);
      if (st && st.pgrp === p) signal(-p, 'SIGKILL');
      signal(p, 'SIGKILL');
    }
    if (strays.length) stopped.push(`unregistered: ${strays.map((p) => `${p} (${(commands.get(p) ?? []).join(' ').slice(0, 80)})`).join(', ')}`);
    return stopped;
  }

  /** At process exit nothing can wait: whatever is still registered is killed at once. */
  killAllNow(): void {
    for (const e of this.entries.splice(0)) {
      if (e.pgid) signal(-e.pgid, 'SIGKILL');
      if (sameProcess(e.pid, e.startTime)) signal(e.pid, 'SIGKILL');
    }
  }
}

/**
 * Registers `child` (spawned with `detached: true`) with the running test file's guard. Outside
 * the guarded environment (a script reusing a support module) there is nothing to register with.
 */
export function guardChild<C extends ChildProcess>(child: C, opts: GuardOptions = {}): C {
  const guard = (globalThis as { __odChildGuard?: ChildGuard }).__odChildGuard;
  guard?.register(child, opts);
  return child;
}

/**
 * The run's registry, swept by the jest process at its exit: every group still alive whose leader
 * is the process registered (same start time: not a pid reused since), killed with what is below it.
 */
export function sweepRegistry(registryFile: string): number {
  let text: string;
  try {
    text = readFileSync(registryFile, 'utf8');
  } catch {
    return 0;
  }
  let killed = 0;
  for (const line of text.split('\n').filter(Boolean)) {
    const e = JSON.parse(line) as { pid: number; pgid: number; startTime: string };
    if (!sameProcess(e.pid, e.startTime)) continue;
    for (const p of descendantsOf(e.pid)) signal(p, 'SIGKILL');
    if (e.pgid) signal(-e.pgid, 'SIGKILL');
    signal(e.pid, 'SIGKILL');
    killed++;
  }
  return killed;
}

function sameProcess(pid: number, startTime: string): boolean {
  const st = procStat(pid);
  return st !== null && st.startTime === startTime && st.state !== 'Z' && st.state !== 'X';
}

function groupAlive(pgid: number): boolean {
  return membersOf(pgid).some(isRunning);
}

function membersOf(pgid: number): number[] {
  return (allPids() ?? []).filter((p) => procStat(p)?.pgrp === pgid);
}

/** Every process below `root` (by parent links, whatever their group or session), down to `depth` levels. */
export function descendantsOf(root: number, depth = Infinity): number[] {
  const children = new Map<number, number[]>();
  for (const pid of allPids() ?? []) {
    const st = procStat(pid);
    if (st) children.set(st.ppid, [...(children.get(st.ppid) ?? []), pid]);
  }
  const out: number[] = [];
  const walk = (pid: number, level: number) => {
    if (level > depth) return;
    for (const c of children.get(pid) ?? []) {
      out.push(c);
      walk(c, level + 1);
    }
  };
  walk(root, 1);
  return out;
}

function signal(target: number, sig: NodeJS.Signals): void {
  try {
    process.kill(target, sig);
  } catch {
    // already gone
  }
}
