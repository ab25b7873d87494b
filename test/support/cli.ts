import { execFile } from 'node:child_process';
import path from 'node:path';

/** The od-worktree binary as the package installs it (bin/), run by this node. */
export const CLI_BIN = path.resolve(__dirname, '../../bin/od-worktree.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs od-worktree with `args` in `cwd` under exactly `env`, asynchronously (a spawnSync would
 * block the event loop the test's own stack runs on). A non-zero exit is a result, not a throw.
 */
export function runCli(args: readonly string[], o: { cwd: string; env: NodeJS.ProcessEnv }): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI_BIN, ...args], { cwd: o.cwd, env: o.env, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/** This process's environment pointed at the API as `token`, and not an agent session (no session id or epoch). */
export function apiEnv(url: string, token: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, OD_API_URL: url, OD_TOKEN: token };
  delete env.OVERDECK_EXECUTION_SESSION_ID;
  delete env.OVERDECK_EPOCH;
  return env;
}
