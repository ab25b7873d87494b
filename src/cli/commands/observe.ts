import type { Command } from 'commander';
import { api, print, run, schemas, UsageError } from './service-run';
import { positiveInt, worktreeTop } from './service-target';

/**
 * `observe`: register (or heartbeat) this session as a read-only observer of a worktree, or leave.
 * An observer is listed by `who` and holds nothing: no tenure, no secret, so the hooks refuse its
 * changes as any non-owner's, and no owner ever waits for it. Call it again within --ttl to stay listed.
 */
export function registerObserveCommand(program: Command): void {
  program
    .command('observe')
    .description('register this session as a read-only observer of a worktree (listed by who; never an owner): run again within --ttl to stay listed')
    .option('--worktree <path>', 'the worktree (default: the current one)')
    .option('--session <id>', 'the observing session (default: OVERDECK_EXECUTION_SESSION_ID)')
    .option('--runtime <runtime>', "the observer's runtime (default: the executor binding's)")
    .option('--worker <id>', 'admin: the agent worker the session runs for')
    .option('--host <id>', 'the host that holds the worktree (default: the API host)')
    .option('--ttl <ms>', 'how long the registration lasts without another call (5000..600000, default 60000)')
    .option('--leave', 'end the registration now')
    .option('--json', 'machine-readable output')
    .action(
      async (o: { worktree?: string; session?: string; runtime?: string; worker?: string; host?: string; ttl?: string; leave?: boolean; json?: boolean }) => {
        const json = o.json === true;
        await run(json, async () => {
          const session = o.session ?? process.env.OVERDECK_EXECUTION_SESSION_ID;
          if (!session) throw new UsageError('--session (or OVERDECK_EXECUTION_SESSION_ID) is required');
          const ttlMs = positiveInt(o.ttl, '--ttl');
          if (o.leave && ttlMs !== undefined) throw new UsageError('--ttl has no meaning with --leave');
          const where = {
            worktreePath: await worktreeTop(o.worktree ?? process.cwd()),
            executionSessionId: session,
            ...(o.host !== undefined ? { hostId: o.host } : {}),
            ...(o.worker !== undefined ? { workerId: o.worker } : {}),
          };
          if (o.leave) {
            const left = await api().leaveObserve(where);
            print(json, schemas().LeaveObserveOutputSchema, { ok: true, ...left }, () =>
              left.left ? `session ${session} no longer observes ${left.worktreePath}` : `session ${session} was not observing ${left.worktreePath}`,
            );
            return;
          }
          const got = await api().observe({ ...where, ...(o.runtime !== undefined ? { runtime: o.runtime } : {}), ...(ttlMs !== undefined ? { ttlMs } : {}) });
          print(
            json,
            schemas().ObserveOutputSchema,
            { ok: true, ...got },
            () =>
              `session ${session} observes ${got.worktreePath} (read-only; runtime ${got.observer.runtime}) until ${got.observer.expiresAt}: run again before then to stay listed`,
          );
        });
      },
    );
}
