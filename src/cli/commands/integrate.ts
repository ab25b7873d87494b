import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { EXIT } from '../exit-codes';
import { run, UsageError } from './service-run';

/**
 * `od-worktree integrate <tool>` writes the tool's hook configuration (src/adapters/install.ts);
 * `od-worktree hook <tool> <event>` is what those hooks run (src/adapters/agent-hooks.ts).
 * docs/integrating.md#agent-tools.
 */

// Loaded by the command that runs, not at start-up (src/cli/main.ts).
const install = () => require('../../adapters/install') as typeof import('../../adapters/install');
const hooks = () => require('../../adapters/agent-hooks') as typeof import('../../adapters/agent-hooks');
const payloads = () => require('../../adapters/hook-payloads') as typeof import('../../adapters/hook-payloads');

function toolOf(given: string): 'claude-code' | 'codex' {
  if (given === 'claude-code' || given === 'codex') return given;
  throw new UsageError(`unknown tool ${JSON.stringify(given)}: claude-code or codex`);
}

/** The gate's PreToolUse entry, found from here under src/ (tsx, jest) and dist/src/ alike. */
function gateHook(): string {
  for (let dir = __dirname, i = 0; i < 6; i++, dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'hooks', 'pretooluse-git-gate.sh');
    if (existsSync(candidate)) return candidate;
  }
  throw new UsageError('hooks/pretooluse-git-gate.sh not found next to the package');
}

async function repoTop(cwd: string): Promise<string> {
  const { identifyWorktree } = require('../../git/repo') as typeof import('../../git/repo');
  const id = await identifyWorktree(cwd).catch(() => {
    throw new UsageError(`not inside a git repository: ${cwd} (run it in the repository, or pass --user or --settings)`);
  });
  return id.repoRoot;
}

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (b: Buffer) => chunks.push(b));
    process.stdin.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.once('error', reject);
  });
}

export function registerIntegrateCommands(program: Command): void {
  program
    .command('integrate')
    .argument('<tool>', 'claude-code or codex')
    .description(
      "install the tool's hooks (Claude Code: .claude/settings.json; Codex: .codex/hooks.json) so its sessions bind the worktrees they create, pass the git gate, and release at the end; merged into the file, other hooks kept (docs/integrating.md#agent-tools)",
    )
    .option('--print', 'print the merged configuration; write nothing')
    .option('--user', "the user's file (~/.claude/settings.json, ~/.codex/hooks.json) instead of the repository's")
    .option('--settings <file>', 'this file instead')
    .option('--json', 'machine-readable output')
    .action(async (given: string, o: { print?: boolean; user?: boolean; settings?: string; json?: boolean }) => {
      const json = o.json === true;
      await run(json, async () => {
        const tool = toolOf(given);
        const file = o.settings
          ? path.resolve(o.settings)
          : install().defaultConfigFile(tool, o.user ? '' : await repoTop(process.cwd()), os.homedir(), o.user === true);
        let r;
        try {
          r = await install().installHooks(tool, file, { print: o.print === true });
        } catch (err) {
          if (err instanceof install().SettingsUnreadable) throw new UsageError(err.message);
          throw err;
        }
        if (json) {
          process.stdout.write(
            `${JSON.stringify({ ok: true, tool, file: r.file, written: o.print !== true && r.changed, changed: r.changed, settings: JSON.parse(r.text) as unknown }, null, 2)}\n`,
          );
        } else if (o.print) {
          process.stdout.write(r.text);
        } else {
          process.stdout.write(`${r.changed ? 'wrote' : 'unchanged'}: ${r.file} (${tool} hooks: ${Object.keys(install().hookConfig(tool)).join(', ')})\n`);
        }
      });
    });

  program
    .command('hook')
    .argument('<tool>', 'claude-code or codex')
    .argument('<event>', 'session-start, session-end, pre-tool-use, worktree-create, worktree-remove, stop, env')
    .description("run by the hooks `integrate` installs: reads the tool's hook JSON on stdin (docs/integrating.md#agent-tools)")
    .action(async (given: string, event: string) => {
      // Every failure of ours exits 1, never 2: the tools read 2 from a PreToolUse hook as a refusal of the call, which only the gate may make.
      try {
        const tool = toolOf(given);
        const { apiClient, apiEnv } = require('../api-env') as typeof import('../api-env');
        const { ApiError, ApiUnreachableError } = require('../../api/client') as typeof import('../../api/client');
        const { gateDir } = require('./agent') as typeof import('./agent');
        let client: ReturnType<typeof apiClient> | undefined;
        const ctx = {
          env: process.env,
          api: () => (client ??= apiClient(apiEnv(process.env))),
          serviceError: (err: unknown) => {
            if (err instanceof ApiError) return { code: err.code, message: err.body.message };
            if (err instanceof ApiUnreachableError) return { code: 'unreachable', message: `the ownership service is unreachable at ${err.baseUrl}` };
            return null;
          },
          gateHook: gateHook(),
          gateDir: gateDir(),
          cli: install().cliCommand(),
        };
        if (event === 'env') {
          // Evaluated by the session's env file before each shell command: prints shell, never fails the command.
          process.stdout.write(await hooks().envExports(process.cwd(), ctx));
          return;
        }
        if (!(event in payloads().EVENTS[tool])) throw new UsageError(`${tool} has no hook event ${event}`);
        const answer = await hooks().runHook(tool, event, await readStdin(), ctx);
        process.stdout.write(answer.stdout);
        process.stderr.write(answer.stderr);
        process.exitCode = answer.exit === 0 ? 0 : answer.exit === 2 ? 2 : EXIT.refused;
      } catch (err) {
        process.stderr.write(`od-worktree: hook ${given} ${event}: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exitCode = EXIT.refused;
      }
    });
}
