import { readdirSync, readFileSync } from 'node:fs';

/**
 * Processes as Linux's /proc shows them, for the runs that account for CPU and memory (the test
 * tiers' CPU log, the bench). Unreadable entries (a process that exited meanwhile) are skipped.
 */
export interface ProcEntry {
  pid: number;
  ppid: number;
  /** its command line, arguments joined by spaces */
  cmd: string;
  /** CPU seconds: its own and those of the children it has reaped (so short-lived git counts where it ran) */
  cpu: number;
}

const TICKS = 100; // USER_HZ on Linux

/** One process, or null when it is gone or unreadable. */
export function readProc(pid: number | 'self'): ProcEntry | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses): f[0] is field 3, 1-based.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
    // field 1 the pid, 4 the ppid, 14-17 utime stime cutime cstime
    return {
      pid: Number(stat.slice(0, stat.indexOf(' '))),
      ppid: Number(f[1]),
      cmd,
      cpu: (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICKS,
    };
  } catch {
    return null;
  }
}

/** Every process readable now. */
export function readProcs(): ProcEntry[] {
  let dirs: string[];
  try {
    dirs = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
  return dirs.map((d) => readProc(Number(d))).filter((p): p is ProcEntry => p !== null);
}

/** Children by parent pid. */
export function childrenByParent(procs: readonly ProcEntry[]): Map<number, ProcEntry[]> {
  const children = new Map<number, ProcEntry[]>();
  for (const p of procs) {
    const list = children.get(p.ppid);
    if (list) list.push(p);
    else children.set(p.ppid, [p]);
  }
  return children;
}
