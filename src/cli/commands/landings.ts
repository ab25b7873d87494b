import path from 'node:path';
import type { Command } from 'commander';
import { api, print, run, UsageError } from './service-run';
import { repoRootOf } from './service-target';

// Loaded by the command that runs, not at start-up (src/cli/main.ts).
const scanModule = () => require('../../landings/scan') as typeof import('../../landings/scan');

/** `od-worktree landings scan`: landings that reached a branch without a receipt (docs/operations.md#landings-without-a-receipt). */
export function registerLandingCommands(program: Command): void {
  const landings = program.command('landings').description('landings of owned worktrees');
  landings
    .command('scan')
    .description(
      'infer the landings that reached a branch without a receipt (merge, fast-forward, cherry-pick -x, patch-id, squash) and record them as inferred receipts; ambiguous commits record nothing and say why. Needs a landing or admin OD_TOKEN',
    )
    .option('--repo <path>', 'the repository (default: the one containing the current directory)')
    .option('--branch <name>', 'the target branch', 'main')
    .option('--since <rev>', 'only commits after this one on the branch')
    .option('--limit <n>', 'at most this many first-parent commits (newest)', '2000')
    .option('--json', 'machine-readable output')
    .action(async (o: { repo?: string; branch: string; since?: string; limit: string; json?: boolean }) => {
      const json = o.json === true;
      await run(json, async () => {
        const limit = Number(o.limit);
        if (!Number.isSafeInteger(limit) || limit <= 0) throw new UsageError('--limit must be a positive integer');
        const repo = o.repo ? path.resolve(o.repo) : ((await repoRootOf(process.cwd())) ?? process.cwd());
        const { ScanReportSchema } = scanModule();
        const res = await api().request<unknown>('POST', '/v1/landings/scan', {
          body: { repo, branch: o.branch, limit, ...(o.since ? { since: o.since } : {}) },
        });
        const report = ScanReportSchema.parse(res.body);
        const { z } = require('zod') as typeof import('zod');
        print(json, z.strictObject({ ok: z.literal(true), report: ScanReportSchema }), { ok: true, report }, () => renderScan(report));
      });
    });
}

export function renderScan(r: import('../../landings/scan').ScanReport): string {
  const lines = [`${r.branch} in ${r.repoRoot}: ${r.scanned} commits scanned, ${r.inferred} landings inferred, ${r.ambiguous} ambiguous`];
  for (const x of r.results) {
    if (x.status === 'inferred')
      lines.push(
        `  ${x.commit.slice(0, 12)}  inferred  ${x.method}  ${x.ownershipId}  (${x.commits.length} pre-land commit${x.commits.length === 1 ? '' : 's'})`,
      );
    else if (x.status === 'already_inferred') lines.push(`  ${x.commit.slice(0, 12)}  already inferred by an earlier scan`);
    else if (x.reason === 'landing_ambiguous') lines.push(`  ${x.commit.slice(0, 12)}  none      landing_ambiguous  candidates ${x.candidates.join(', ')}`);
  }
  const unmatched = r.results.filter((x) => x.reason === 'landing_no_candidate').length;
  if (unmatched > 0) lines.push(`  ${unmatched} commit${unmatched === 1 ? '' : 's'} without a receipt matched no ownership (landing_no_candidate)`);
  return lines.join('\n');
}
