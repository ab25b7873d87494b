import type { Pool } from '../store/db';
import { claimEventsAt, insertLateWork } from '../store/journal-rows';
import { FULL_SHA, IdString } from '../domain/identity';
import { parseEvent } from '../domain/events';
import { git } from '../git/exec';
import type { JournalLine } from '../git/journal';
import { LATE_CLOCK_SLACK_MS, LATE_COMMITS_LISTED } from '../git/late';
import type { WorktreeIdentity } from '../git/repo';
import { lateRef } from '../git/wip';

/**
 * Late work of an older tenure in PostgreSQL (migrations/1700000000014_late-work.sql), from the
 * host agent's `late_preserved` journal lines (src/git/late.ts). The journal is a file whoever
 * works in the worktree can write, so a line is recorded only as far as the durable record and the
 * repository bear it out: the ownership held that worktree on this host, a newer tenure had begun
 * before the line was read, the session is the log's owner at that epoch (not the line's), the ref
 * is that tenure's late ref and points at the line's snapshot, and the commits listed are in the
 * snapshot's history. Who made those commits is commit_authorship's answer (the commit lines'
 * judgement), read at each lookup (late-work-lookup.ts).
 */

interface LateRow {
  offset: number;
  ownershipId: string;
  epoch: number;
  executionSessionId: string;
  ref: string;
  sha: string;
  head: string | null;
  commits: string[];
  more: number;
  uncommitted: boolean;
}

/** Records the `late_preserved` lines among `lines` that the record and the repository bear out; answers how many were not. */
export async function shipLateLines(
  pool: Pool,
  id: WorktreeIdentity,
  hostId: string,
  lines: readonly JournalLine[],
  readAt: number,
): Promise<{ recorded: number; rejected: number }> {
  let recorded = 0;
  let rejected = 0;
  for (const line of lines) {
    if (line.kind !== 'late_preserved') continue;
    const row = await checked(pool, id, hostId, line, readAt);
    if (row === null) {
      rejected++;
      continue;
    }
    const inserted = await insertLateWork(pool, {
      hostId,
      gitDir: id.privateDir,
      offset: row.offset,
      repoRoot: id.repoRoot,
      worktreePath: id.worktreePath,
      ownershipId: row.ownershipId,
      epoch: row.epoch,
      executionSessionId: row.executionSessionId,
      wipRef: row.ref,
      wipSha: row.sha,
      head: row.head,
      commits: row.commits,
      moreCommits: row.more,
      uncommitted: row.uncommitted,
    });
    if (inserted) recorded++;
  }
  return { recorded, rejected };
}

async function checked(pool: Pool, id: WorktreeIdentity, hostId: string, line: JournalLine, readAt: number): Promise<LateRow | null> {
  if (!IdString.safeParse(line.ownership).success || !/^[0-9]{1,9}$/.test(line.epoch)) return null;
  const epoch = Number(line.epoch);
  let ref: string;
  try {
    ref = lateRef(line.ownership, epoch);
  } catch {
    return null;
  }
  if (line.ref !== ref || !FULL_SHA.test(line.new)) return null;
  // The tenure at that epoch and the next one, from the log of this worktree on this host.
  const claims = await claimEventsAt(pool, line.ownership, id.worktreePath, hostId);
  let session: string | null = null;
  let since: number | null = null;
  for (const raw of claims) {
    const e = parseEvent(raw);
    if (e.type !== 'ownership.claimed' && e.type !== 'ownership.reclaimed') continue;
    if (e.data.epoch === epoch) session = e.data.owner.executionSessionId;
    else if (e.data.epoch > epoch && since === null) since = Date.parse(e.at);
  }
  if (session === null || since === null || line.session !== session) return null;
  // Written before the newer projection, so after the newer tenure began: a line read before that was not the host agent's.
  if (readAt < since - LATE_CLOCK_SLACK_MS) return null;

  const rev = async (r: string): Promise<string | null> => {
    const out = await git(['rev-parse', '-q', '--verify', `${r}^{object}`], { cwd: id.worktreePath, env: { GIT_DIR: id.commonDir }, okCodes: [1, 128] });
    return out.code === 0 ? out.stdout.trim() : null;
  };
  if ((await rev(ref)) !== line.new || (await rev(`${line.new}^{commit}`)) !== line.new) return null;
  const head = await rev(`${line.new}^1`);
  const uncommitted = head === null || (await rev(`${line.new}^{tree}`)) !== (await rev(`${head}^{tree}`));
  const listed = [...new Set(line.commits.split(':').filter((c) => FULL_SHA.test(c)))].slice(0, LATE_COMMITS_LISTED);
  const off = await notIn(id, listed, line.new);
  const more = /^[0-9]{1,6}$/.test(line.more) ? Number(line.more) : 0;
  return {
    offset: line.offset,
    ownershipId: line.ownership,
    epoch,
    executionSessionId: session,
    ref,
    sha: line.new,
    head,
    commits: listed.filter((c) => !off.has(c)),
    more,
    uncommitted,
  };
}

/** Of `commits`, those not in `tip`'s history (all of them when git cannot say). */
async function notIn(id: WorktreeIdentity, commits: readonly string[], tip: string): Promise<Set<string>> {
  if (commits.length === 0) return new Set();
  const res = await git(['rev-list', '--no-walk=unsorted', ...commits, '--not', tip], { cwd: id.worktreePath, env: { GIT_DIR: id.commonDir }, okCodes: [128] });
  return new Set(res.code === 0 ? res.stdout.split('\n').filter((s) => FULL_SHA.test(s)) : commits);
}
