import type { Pool } from '../store/db';
import type { ShipperLog } from '../provenance/attributions-shipper';
import { landedBranchesOf, repoRootsOfHost } from '../store/inferred-landings';
import { scanLandings } from './scan';

/**
 * The periodic `landings scan` of a host agent (OD_LANDINGS_SCAN_INTERVAL_MS, off by default): for
 * each repository holding worktrees of this host, its `main` and every branch receipts landed on.
 * Each pass starts after the previous one's tip of each branch (bounded, incremental); a failure
 * is logged once and the next pass tries again from the same place.
 */
export class LandingScanJob {
  private timer: NodeJS.Timeout | null = null;
  private readonly lastTip = new Map<string, string>();
  private warned = false;

  constructor(private readonly deps: { pool: Pool; hostId: string; log?: ShipperLog }) {}

  async runOnce(): Promise<number> {
    let inferred = 0;
    for (const repo of await repoRootsOfHost(this.deps.pool, this.deps.hostId)) {
      for (const branch of new Set(['main', ...(await landedBranchesOf(this.deps.pool, repo))])) {
        const key = `${repo}\0${branch}`;
        try {
          const since = this.lastTip.get(key);
          const report = await scanLandings(this.deps.pool, { repo, branch, limit: 2000, ...(since ? { since } : {}) });
          inferred += report.inferred;
          const tip = report.results[report.results.length - 1]?.commit;
          if (tip) this.lastTip.set(key, tip);
        } catch (err) {
          if (!this.warned) {
            this.warned = true;
            this.deps.log?.warn(
              { repo, branch, err: err instanceof Error ? err.message : String(err) },
              'landings scan failed (said once; retried every pass)',
            );
          }
        }
      }
    }
    return inferred;
  }

  start(intervalMs: number): void {
    if (intervalMs <= 0 || this.timer) return;
    let busy = false;
    this.timer = setInterval(() => {
      if (busy) return;
      busy = true;
      this.runOnce()
        .catch(() => undefined)
        .finally(() => (busy = false));
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
