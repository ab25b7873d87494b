import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * What Linux's /proc says about processes and listening sockets: enough for `npm start` to know
 * when the process that launched it is gone, and to name the process holding a port it needs.
 * Every function answers null / empty where /proc is missing (macOS) or unreadable.
 */

export interface ProcStat {
  pid: number;
  ppid: number;
  pgrp: number;
  /** clock ticks since boot: with the pid, identifies one process across pid reuse */
  startTime: string;
  state: string;
}

export function procStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) is parenthesised and may hold spaces or parentheses itself.
  const close = text.lastIndexOf(')');
  const rest = text.slice(close + 2).split(' ');
  return { pid, state: rest[0]!, ppid: Number(rest[1]), pgrp: Number(rest[2]), startTime: rest[19]! };
}

/** This boot's id, or null where /proc does not say (macOS). */
export function readBootIdSync(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return null;
  }
}

/** One variable of a process's environment: its value, null when absent, undefined when unreadable (another user's process). */
export function procEnvironVar(pid: number, name: string): string | null | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return undefined;
  }
  const entry = text.split('\0').find((e) => e.startsWith(`${name}=`));
  return entry === undefined ? null : entry.slice(name.length + 1);
}

export function procCommand(pid: number): string[] | null {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (args[args.length - 1] === '') args.pop();
    return args;
  } catch {
    return null;
  }
}

/** Alive and not a zombie (a zombie holds no port and no file; only its parent can reap it). */
export function isRunning(pid: number): boolean {
  const st = procStat(pid);
  if (st) return st.state !== 'Z' && st.state !== 'X';
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether any process of the group is still running (zombies excluded where /proc can tell). */
export function groupRunning(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const pids = allPids();
  if (pids === null) return true;
  return pids.some((pid) => {
    const st = procStat(pid);
    return st !== null && st.pgrp === pgid && st.state !== 'Z' && st.state !== 'X';
  });
}

export function allPids(): number[] | null {
  try {
    return readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number);
  } catch {
    return null;
  }
}

/**
 * The ancestors of this process that share its process group, nearest first: the chain a
 * terminal or a test launched together (npm, its shell, tsx). When one of them dies, whoever
 * asked for this process is gone, even though nobody signalled it.
 */
export function groupAncestors(): ProcStat[] {
  const me = procStat(process.pid);
  if (!me) return [];
  const out: ProcStat[] = [];
  for (let pid = me.ppid; pid > 1 && out.length < 16;) {
    const st = procStat(pid);
    if (!st || st.pgrp !== me.pgrp) break;
    out.push(st);
    pid = st.ppid;
  }
  return out;
}

/** The same process as recorded (same pid, same start time), still running. */
export function sameProcessRunning(p: ProcStat): boolean {
  const now = procStat(p.pid);
  return now !== null && now.startTime === p.startTime && now.state !== 'Z' && now.state !== 'X';
}

/** Socket inodes listening on `port` (TCP, IPv4 and IPv6, any address). */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      // local_address is HEXIP:HEXPORT; state 0A is LISTEN.
      if (f[1]!.endsWith(`:${hexPort}`) && f[3] === '0A') inodes.add(f[9]!);
    }
  }
  return inodes;
}

export interface PortHolder {
  pid: number;
  command: string[];
  pgrp: number | null;
}

/** The process listening on `port`, when /proc lets us see it (every process as root, our own otherwise). */
export function portHolder(port: number): PortHolder | null {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return null;
  for (const pid of allPids() ?? []) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const m = /^socket:\[(\d+)\]$/.exec(target);
      if (m && inodes.has(m[1]!)) return { pid, command: procCommand(pid) ?? [], pgrp: procStat(pid)?.pgrp ?? null };
    }
  }
  return null;
}
