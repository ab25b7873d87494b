import type { Command } from 'commander';
import { EXIT } from '../exit-codes';

// pg and the rebuild code load when an admin command runs, never at the CLI's start-up (main.ts).
const config = () => require('../../config') as typeof import('../../config');
const db = () => require('../../store/db') as typeof import('../../store/db');
const rebuild = () => require('../../store/rebuild') as typeof import('../../store/rebuild');

/**
 * Operator commands that work on the database directly (DATABASE_URL), on the service's own host:
 * the projection is derived data, so it can always be rebuilt from the append-only log.
 */
export function registerAdminCommands(program: Command): void {
  const admin = program.command('admin').description('operator commands against DATABASE_URL (the service host)');

  admin
    .command('rebuild-projection')
    .description('rebuild ownerships, landing receipts and branch names from ownership_events alone')
    .option('--ownership <id>', 'only this ownership')
    .option('--check', 'report differences between the stored projection and the log, change nothing')
    .option('--json', 'machine-readable output')
    .action(async (opts: { ownership?: string; check?: boolean; json?: boolean }) => {
      const cfg = config().loadConfig();
      if (!cfg.databaseUrl) {
        process.stderr.write('od-worktree admin: DATABASE_URL is not set\n');
        process.exitCode = EXIT.usage;
        return;
      }
      const pool = db().createPool(cfg.databaseUrl);
      try {
        if (opts.check) {
          const diffs = await rebuild().compareProjection(pool, { ownershipId: opts.ownership });
          if (opts.json) process.stdout.write(`${JSON.stringify({ consistent: diffs.length === 0, diffs })}\n`);
          else if (diffs.length === 0) process.stdout.write('projection consistent with the log\n');
          else for (const d of diffs) process.stdout.write(`${d.ownershipId}  ${d.kind}  ${d.detail}\n`);
          process.exitCode = diffs.length === 0 ? EXIT.ok : EXIT.conflict;
          return;
        }
        if (!opts.json) process.stderr.write('rebuilding projection from ownership_events…\n');
        const result = await rebuild().rebuildProjection(pool, { ownershipId: opts.ownership });
        if (opts.json) process.stdout.write(`${JSON.stringify(result)}\n`);
        else
          process.stdout.write(
            `rebuilt ${result.ownerships} ownerships from ${result.events} events in ${result.batches} batches ` +
              `(${result.landingReceipts} receipts, ${result.branchNames} branch names, ${result.removed} orphan rows removed, ${result.failures.length} failures)\n`,
          );
        process.exitCode = result.failures.length === 0 ? EXIT.ok : EXIT.conflict;
      } finally {
        await pool.end();
      }
    });
}
