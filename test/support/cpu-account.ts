import { appendFileSync } from 'node:fs';
import { readProc, readProcs } from '../../stack/proc-table';

/**
 * CPU seconds, for finding where a test run's time goes (OD_TEST_CPU_LOG names a JSON-lines file;
 * unset, nothing is measured). A process's own time plus that of the children it has reaped:
 * what a test file spawned and waited for counts toward the file.
 */
export function cpuOf(pid: number | 'self'): number {
  return readProc(pid)?.cpu ?? 0;
}

export function recordCpu(entry: Record<string, unknown>): void {
  const file = process.env.OD_TEST_CPU_LOG;
  if (file) appendFileSync(file, JSON.stringify(entry) + '\n');
}

/** Every live process whose command line matches, with its CPU (for the run's shared stack). */
export function cpuOfProcesses(match: RegExp): { pid: number; cmd: string; cpu: number }[] {
  return readProcs()
    .filter((p) => p.cmd !== '' && match.test(p.cmd))
    .map((p) => ({ pid: p.pid, cmd: p.cmd.slice(0, 120), cpu: p.cpu }));
}
