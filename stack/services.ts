import path from 'node:path';
import { PROJECT_ROOT } from '../src/infra/tools';
import type { Cleanup } from './cleanup';
import { entryCommand } from './compiled';
import { ManagedProcess } from './procs';

/** How each service process is started (its entry and arguments) and when it serves. */
export const SERVICES = {
  /** workflows, store activities and the built-in host agent of its OD_HOST_ID; bundles the workflows first: the slowest */
  worker: { args: ['worker.ts'], readyLine: /worker running/, readyTimeoutMs: 120_000 },
  /** only the git side of its OD_HOST_ID */
  hostAgent: { args: ['worker.ts', '--host-agent'], readyLine: /worker running/, readyTimeoutMs: 60_000 },
  api: { args: ['src/server/main.ts'], readyLine: /api listening/, readyTimeoutMs: 60_000 },
} as const;

export interface ServiceProcessOptions {
  /** its name in messages and its log file `<logDir>/<name>.log` */
  name: string;
  env: NodeJS.ProcessEnv;
  logDir: string;
  /** runs the command elsewhere (a network namespace): the argv it is given, wrapped */
  wrap?: (argv: string[]) => { command: string; args: string[] };
}

/**
 * A service process of the run, not yet started: its entry through tsx's loader, or compiled when
 * OD_WORKTREE_DIST names a tree (entryCommand, stack/compiled.ts). The run starts, kills and
 * restarts it; at exit, if the cleanup never ran, it is killed with its group.
 */
export function serviceProcess(cleanup: Cleanup, kind: keyof typeof SERVICES, o: ServiceProcessOptions): ManagedProcess {
  const s = SERVICES[kind];
  const [entry, ...rest] = s.args;
  const argv = entryCommand(entry, rest);
  const { command, args } = o.wrap ? o.wrap(argv) : { command: argv[0]!, args: argv.slice(1) };
  const p = new ManagedProcess({
    name: o.name,
    command,
    args,
    cwd: PROJECT_ROOT,
    env: o.env,
    logFile: path.join(o.logDir, `${o.name}.log`),
    readyLine: s.readyLine,
    readyTimeoutMs: s.readyTimeoutMs,
  });
  cleanup.addLastResort(() => p.killSync());
  return p;
}
