import { Command } from 'commander';
import { registerAdminCommands } from './commands/admin';
import { registerDiagnosticsCommand } from './commands/diagnostics';
import { registerGitCommands } from './commands/git';
import { registerServiceCommands } from './commands/service';
import { EXIT } from './exit-codes';

/**
 * `od-worktree`: the git-side CLI. Git-only commands (guard, install-hooks, claim --offline) work
 * without the service; lookups and writes go through the HTTP API (OD_API_URL, OD_TOKEN).
 */
export function buildProgram(): Command {
  const program = new Command('od-worktree')
    .description('who owns this worktree, who may mutate it now, and what happened to that ownership')
    .showHelpAfterError()
    .exitOverride();
  registerGitCommands(program);
  registerServiceCommands(program);
  registerAdminCommands(program);
  registerDiagnosticsCommand(program);
  return program;
}

if (require.main === module || process.argv[1]?.endsWith('od-worktree.js') || process.argv[1]?.endsWith('od-worktree')) {
  buildProgram()
    .parseAsync(process.argv)
    .catch((err: unknown) => {
      const e = err as { code?: string; exitCode?: number; message?: string };
      if (typeof e.code === 'string' && e.code.startsWith('commander.')) process.exit(e.exitCode === 0 ? 0 : EXIT.usage);
      process.stderr.write(`od-worktree: ${e.message ?? String(err)}\n`);
      process.exit(EXIT.internal);
    });
}
