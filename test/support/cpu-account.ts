import { appendFileSync, readdirSync, readFileSync } from 'node:fs';

/**
 * CPU seconds, for finding where a test run's time goes (OD_TEST_CPU_LOG names a JSON-lines file;
 * unset, nothing is measured). A process's own time plus that of the children it has reaped:
 * what a test file spawned and waited for counts toward the file.
 */
const TICKS = 100; // USER_HZ on Linux

export function cpuOf(pid: number | 'self'): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields 14-17 (utime stime cutime cstime), 1-based from pid; f[0] is field 3
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICKS;
  } catch {
    return 0;
  }
}

export function recordCpu(entry: Record<string, unknown>): void {
  const file = process.env.OD_TEST_CPU_LOG;
  if (file) appendFileSync(file, JSON.stringify(entry) + '\n');
}

/** Every live process whose command line matches, with its CPU (for the run's shared stack). */
export function cpuOfProcesses(match: RegExp): { pid: number; cmd: string; cpu: number }[] {
  const out: { pid: number; cmd: string; cpu: number }[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const cmd = cmdlineOf(d);
    if (cmd && match.test(cmd)) out.push({ pid: Number(d), cmd: cmd.slice(0, 120), cpu: cpuOf(Number(d)) });
  }
  return out;
}

function cmdlineOf(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
}
