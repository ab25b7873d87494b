import type { Pool } from '../store/db';
import { journalStat } from '../git/journal';
import type { OwnershipRecord } from '../domain/projection';
import { journalWorktreesOf } from '../store/ownership-rows';
import { recordLandedCommits } from './landing-commits';
import { writeProvenanceNote } from './provenance-notes';
import { shipJournal } from './attributions';

/**
 * The host agent's journal shipping (docs/git-projection.md#the-journal). The hooks only append to
 * a file; this process, which already writes the projections of the worktrees it holds, ships what
 * they appended straight to PostgreSQL when it has a pool: right after each projection write (an
 * owner change, a landing: the moments whose commits must be attributed before anything else moves
 * the branch) and every `intervalMs` for the worktrees of this host. One worktree is shipped by one
 * call at a time; each call is bounded (src/provenance/attributions.ts MAX_PASSES) and idempotent.
 *
 * Without a pool (a host agent given no DATABASE_URL) nothing is shipped: it says so once, and the
 * journals stay in the worktrees until an agent with a pool ships them (the offset resumes).
 */
export interface ShipperLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export class JournalShipper {
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  /** The newest record a caller brought while its worktree was being shipped: the next pass records its landings. */
  private readonly waiting = new Map<string, OwnershipRecord>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private warnedFailure = false;
  /** worktree -> its journal as last shipped (private git dir, file, offset): a periodic pass with nothing new then starts no git */
  private readonly shipped = new Map<string, { privateDir: string; inode: string; offset: number }>();

  constructor(
    private readonly deps: {
      pool: Pool | null;
      hostId: string;
      allowedRoots: readonly string[];
      log?: ShipperLog;
      /** OD_PROVENANCE_NOTES: also write each landed head's provenance as a git note (src/provenance/provenance-notes.ts) */ provenanceNotes?: boolean;
    },
  ) {
    if (!deps.pool)
      deps.log?.debug(
        { hostId: deps.hostId },
        'no DATABASE_URL: commit journals stay local in each worktree (overdeck.journal) until a host agent with a database ships them',
      );
  }

  /** After a projection write: ship this worktree's journal, then record the landed commits of its receipts. */
  afterProjection(record: OwnershipRecord): Promise<void> {
    return this.ship(record.worktreePath, record);
  }

  ship(worktreePath: string, record?: OwnershipRecord): Promise<void> {
    const pool = this.deps.pool;
    if (!pool || this.stopped) return Promise.resolve();
    const current = this.running.get(worktreePath);
    if (current) {
      this.again.add(worktreePath);
      const held = this.waiting.get(worktreePath);
      if (record && (!held || record.seq >= held.seq)) this.waiting.set(worktreePath, record);
      return current;
    }
    const run = (async () => {
      // The pass that runs again for a later caller takes that caller's record: a landing that
      // arrived while a pass without one ran (the periodic one) still has its commits recorded.
      let rec = record;
      do {
        this.again.delete(worktreePath);
        try {
          if (rec || !(await this.nothingNew(worktreePath))) {
            const shipped = await shipJournal(pool, worktreePath, { hostId: this.deps.hostId, allowedRoots: this.deps.allowedRoots });
            this.shipped.set(worktreePath, { privateDir: shipped.privateDir, inode: shipped.inode, offset: shipped.offset });
          }
          for (const receipt of rec?.landings ?? []) {
            await recordLandedCommits(pool, worktreePath, rec!.repoRoot, receipt);
            // After the rows: the note carries the authors those rows give.
            if (this.deps.provenanceNotes) await writeProvenanceNote(pool, worktreePath, receipt.landedHead);
          }
        } catch (err) {
          // A worktree gone or outside the roots, or PostgreSQL away: the offset did not move, the next pass retries.
          if (!this.warnedFailure) {
            this.warnedFailure = true;
            this.deps.log?.warn(
              { worktreePath, err: err instanceof Error ? err.message : String(err) },
              'journal shipping failed (said once; retried every pass)',
            );
          }
        }
        rec = this.waiting.get(worktreePath);
        this.waiting.delete(worktreePath);
      } while (this.again.has(worktreePath) && !this.stopped);
    })().finally(() => this.running.delete(worktreePath));
    this.running.set(worktreePath, run);
    return run;
  }

  /**
   * The same journal file has not grown past what this process shipped of it (a stat; never git).
   * Not the worktree's offset file: whoever works there could push it on to keep lines unshipped.
   */
  private async nothingNew(worktreePath: string): Promise<boolean> {
    const last = this.shipped.get(worktreePath);
    if (last === undefined) return false;
    const now = await journalStat({ privateDir: last.privateDir });
    return now.inode === last.inode && now.size <= last.offset;
  }

  /** Every worktree of this host that may still have journal lines: held ones, and those changed within a day. */
  async shipAll(): Promise<void> {
    const pool = this.deps.pool;
    if (!pool || this.stopped) return;
    for (const worktreePath of await journalWorktreesOf(pool, this.deps.hostId)) await this.ship(worktreePath);
  }

  start(intervalMs: number): void {
    if (!this.deps.pool || intervalMs <= 0 || this.timer) return;
    let busy = false;
    this.timer = setInterval(() => {
      if (busy) return;
      busy = true;
      this.shipAll()
        .catch(() => undefined)
        .finally(() => (busy = false));
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.allSettled([...this.running.values()]);
  }
}
