import type { Command } from 'commander';
import type { ApiClient } from '../../api/client';
import { GitSideError } from '../../git/errors';
import { gatedEnv, runGated } from './agent';
import { api, NotFound, run, schemas, UsageError } from './service-run';
import { notFoundOr404, worktreeTop } from './service-target';

/**
 * `od-worktree override`: a person who must step into an owned worktree does so on the record.
 * The service records the override (who, why, when, which tenure) before it answers with the
 * current owner's tenure, and the command then runs exactly as `exec` runs one: the gate first on
 * PATH, the owner's OVERDECK_EPOCH and OVERDECK_TENURE_SECRET (not its session id: the person is not
 * the agent's session), and OVERDECK_OVERRIDE_ID naming the record. An admin token (OD_TOKEN) only. The secret is never
 * printed: it reaches the command's environment and nothing else.
 */

const projections = () => require('../../git/projection') as typeof import('../../git/projection');

/** The ownership the worktree's projection names (no service needed), else the service's record of the path. */
async function ownershipOf(client: ApiClient, top: string): Promise<string> {
  const local = await projections()
    .readProjection(top)
    .catch((err: unknown) => {
      // An unreadable projection says nothing: the service's record of the path decides.
      if (err instanceof GitSideError && err.code === 'projection_corrupt') return null;
      throw err;
    });
  // A provisional claim's id is a placeholder the service never issued.
  if (local !== null && local.provisional !== true) return local.ownershipId;
  const record = await notFoundOr404(client.get({ worktreePath: top }));
  if (!record) throw new NotFound(`no ownership recorded for worktree ${top}: nothing to override`);
  return record.ownershipId;
}

export function registerOverrideCommand(program: Command): void {
  program
    .command('override')
    .description(
      "step into an owned worktree, on the record: the service records who and why, then the command (default: $SHELL) runs as `exec` runs one, with the owner's tenure (admin token)",
    )
    .argument('[command...]', 'the command and its arguments, after -- (default: $SHELL)')
    .requiredOption('--reason <text>', 'why a person must step in: recorded and shown in history')
    .option('--worktree <path>', 'worktree (default: the one containing the current directory)')
    .option('--json', 'print the recorded override as JSON before the command runs')
    .action(async (argv: string[], o: { reason: string; worktree?: string; json?: boolean }) => {
      const json = o.json === true;
      let env: NodeJS.ProcessEnv | null = null;
      await run(json, async () => {
        if (o.reason.trim() === '') throw new UsageError('--reason must say why');
        const top = await worktreeTop(o.worktree ?? process.cwd());
        const client = api();
        const { tenure, ...recorded } = await client.override(await ownershipOf(client, top), { reason: o.reason });
        const out = { ok: true as const, ...recorded };
        if (json) process.stdout.write(`${JSON.stringify(schemas().OverrideOutputSchema.parse(out), null, 2)}\n`);
        // On stderr: the command's own output follows on stdout.
        else
          process.stderr.write(
            `od-worktree: override ${recorded.overrideId} recorded for ownership ${recorded.ownershipId} (epoch ${recorded.epoch}, owner session ${recorded.owner.executionSessionId})\n`,
          );
        // The person proves the tenure with its secret but is not its session: what they commit is
        // journalled with no session id and the override's id, never as the agent's own work.
        env = { ...gatedEnv(process.env, { epoch: String(tenure.epoch), secret: tenure.secret }), OVERDECK_OVERRIDE_ID: recorded.overrideId };
        delete env.OVERDECK_EXECUTION_SESSION_ID;
      });
      if (env === null) return;
      const [cmd, ...args] = argv.length > 0 ? argv : [process.env.SHELL || '/bin/sh'];
      await runGated(cmd!, args, env);
    });
}
