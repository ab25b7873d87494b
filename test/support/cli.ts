import { spawn } from 'node:child_process';
import path from 'node:path';
import { guardChild } from './process-guard';

/** The od-worktree binary as the package installs it (bin/), run by this node. */
export const CLI_BIN = path.resolve(__dirname, '../../bin/od-worktree.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs od-worktree with `args` in `cwd` under exactly `env`, asynchronously (a spawnSync would
 * block the event loop the test's own stack runs on). A non-zero exit is a result, not a throw
 * (-1: ended by a signal). In a process group of its own, guarded (process-guard.ts): a CLI a
 * failing test left waiting (a `serve`, a stuck request) is stopped when the test file ends.
 */
export function runCli(args: readonly string[], o: { cwd: string; env: NodeJS.ProcessEnv }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = guardChild(spawn(process.execPath, [CLI_BIN, ...args], { cwd: o.cwd, env: o.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
    const stdout: string[] = [];
    const stderr: string[] = [];
    child.stdout.setEncoding('utf8').on('data', (s: string) => stdout.push(s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => stderr.push(s));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? -1, stdout: stdout.join(''), stderr: stderr.join('') }));
  });
}

/** This process's environment pointed at the API as `token`, and not an agent session (no session id or epoch). */
export function apiEnv(url: string, token: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, OD_API_URL: url, OD_TOKEN: token };
  delete env.OVERDECK_EXECUTION_SESSION_ID;
  delete env.OVERDECK_EPOCH;
  return env;
}
