import { childrenByParent, readProcs, type ProcEntry } from '../stack/proc-table';

/**
 * Where a phase's CPU went, from /proc (Linux): the bench process with its own children (the
 * worker, the client, the git helper and the git it runs), the Temporal dev server, PostgreSQL.
 * A process's figure includes the children it has reaped, so short-lived git counts where it ran.
 * PostgreSQL is every `postgres` process on the machine (the embedded one, or DATABASE_URL's when
 * local): a quiet machine is assumed, as for every figure of the bench.
 */
export interface CpuSplit {
  bench: number;
  temporal: number;
  postgres: number;
}

const isPostgres = (cmd: string) => /^postgres(:|\s|$)|\/bin\/postgres\s/.test(cmd);
const isTemporal = (cmd: string) => /\btemporal server start-dev\b/.test(cmd);

/** CPU seconds so far, split as above; take two and subtract (cpuPerOp). */
export function cpuNow(): CpuSplit {
  const procs = readProcs();
  const children = childrenByParent(procs);
  const split: CpuSplit = { bench: 0, temporal: 0, postgres: 0 };
  for (const p of procs) if (isPostgres(p.cmd)) split.postgres += p.cpu;
  // The bench's tree, less the servers it started (their own figures).
  const walk = (p: ProcEntry): void => {
    if (isPostgres(p.cmd)) return;
    if (isTemporal(p.cmd)) {
      split.temporal += p.cpu;
      return;
    }
    split.bench += p.cpu;
    for (const c of children.get(p.pid) ?? []) walk(c);
  };
  const self = procs.find((p) => p.pid === process.pid);
  if (self) walk(self);
  return split;
}

/** Milliseconds of CPU per operation since `before`, for `ops` operations. */
export function cpuPerOp(before: CpuSplit, after: CpuSplit, ops: number): CpuSplit {
  const per = (k: keyof CpuSplit) => Math.round(((after[k] - before[k]) / Math.max(1, ops)) * 1000 * 10) / 10;
  return { bench: per('bench'), temporal: per('temporal'), postgres: per('postgres') };
}
