import type { Command } from 'commander';
import { EXIT } from './exit-codes';
import { PACKAGE_VERSION } from '../version';

/**
 * `od-worktree`: the git-side CLI. Git-only commands (guard, install-hooks, claim --offline) work
 * without the service; lookups and writes go through the HTTP API (OD_API_URL, OD_TOKEN).
 *
 * Start-up loads commander and the command definitions only; each command loads what it runs
 * (zod, git, the HTTP client) when it runs, and none of them loads Temporal, pg or fastify.
 * test/integration/package.test.ts checks that for `who` and `--version`.
 */
export function buildProgram(): Command {
  const { Command } = require('commander') as typeof import('commander');
  const { registerAdminCommands } = require('./commands/admin') as typeof import('./commands/admin');
  const { registerDiagnosticsCommand } = require('./commands/diagnostics') as typeof import('./commands/diagnostics');
  const { registerGitCommands } = require('./commands/git') as typeof import('./commands/git');
  const { registerServiceCommands } = require('./commands/service') as typeof import('./commands/service');
  const program = new Command('od-worktree')
    .description('who owns this worktree, who may mutate it now, and what happened to that ownership')
    .version(PACKAGE_VERSION, '-V, --version', 'print the version')
    .showHelpAfterError()
    .exitOverride();
  registerGitCommands(program);
  registerServiceCommands(program);
  registerAdminCommands(program);
  registerDiagnosticsCommand(program);
  (require('./commands/agent') as typeof import('./commands/agent')).registerAgentCommands(program);
  (require('./commands/landings') as typeof import('./commands/landings')).registerLandingCommands(program);
  (require('./commands/override') as typeof import('./commands/override')).registerOverrideCommand(program);
  (require('./commands/cleanup') as typeof import('./commands/cleanup')).registerCleanupCommands(program);
  (require('./commands/restore') as typeof import('./commands/restore')).registerRestoreCommand(program);
  (require('./commands/integrate') as typeof import('./commands/integrate')).registerIntegrateCommands(program);
  return program;
}

/**
 * The command has finished: exit as soon as stdout and stderr are flushed, with its exit code.
 * Waiting for the event loop to drain instead would let anything still pending (a request's
 * timer, an integrator's hook) hold the answer back; the HTTP client's idle sockets do not.
 */
function exitWhenFlushed(): void {
  let pending = 2;
  const done = () => {
    if (--pending === 0) process.exit();
  };
  process.stdout.write('', done);
  process.stderr.write('', done);
}

/** `od-worktree --version` alone answers before any command is defined: scripts call it to probe the CLI. */
function onlyVersion(argv: readonly string[]): boolean {
  return argv.length === 3 && (argv[2] === '--version' || argv[2] === '-V');
}

if (require.main === module || process.argv[1]?.endsWith('od-worktree.js') || process.argv[1]?.endsWith('od-worktree')) {
  if (onlyVersion(process.argv)) process.stdout.write(`${PACKAGE_VERSION}\n`);
  else
    buildProgram()
      .parseAsync(process.argv)
      .then(exitWhenFlushed, (err: unknown) => {
        const e = err as { code?: string; exitCode?: number; message?: string };
        if (typeof e.code === 'string' && e.code.startsWith('commander.')) process.exit(e.exitCode === 0 ? 0 : EXIT.usage);
        process.stderr.write(`od-worktree: ${e.message ?? String(err)}\n`);
        process.exit(EXIT.internal);
      });
}
