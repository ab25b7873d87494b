import { isCancellation } from '@temporalio/workflow';
import type { HostQueue } from './activities';
import { refusal } from '../domain/reasons';
import { fail, failureType, hostRefusal } from './activities';
import type { RunState } from './run-state';
import { inspectSummary, wipSummary } from './summaries';

/** What an acknowledgement asks the worktree's host before it is given, within a short bound. */

/** What WIP preservation gave a reclaim: the preserved commit, nothing to preserve, or why nothing was preserved. */
export type WipOutcome = { ref: string; sha: string; files?: number; bytes?: number } | null | 'worktree_missing' | { failed: string };

/**
 * WIP preservation inside the reclaim's acknowledgement, bounded: a host that does not answer
 * refuses the reclaim (`host_unavailable`, nothing changed); a worktree that is gone has no WIP
 * to keep: the reclaim goes on and records why (`ownership.wip_not_preserved`); any other
 * refusal of the host is the reclaim's refusal. An admin's forced reclaim is the way out of a
 * worktree whose WIP cannot be preserved (an unreadable file, a host that is gone): it goes on
 * and records why nothing was preserved.
 */
export async function preserveWipNow(s: RunState, hostNow: HostQueue, worktreePath: string, seq: number, forced = false): Promise<WipOutcome> {
  try {
    return await hostNow.preserveWip.executeWithOptions({ summary: wipSummary(s.record?.owner?.executionSessionId ?? null) }, [
      worktreePath,
      s.ownershipId,
      seq,
    ]);
  } catch (err) {
    if (isCancellation(err)) throw err;
    if (failureType(err) === 'worktree_missing') return 'worktree_missing';
    if (forced) return { failed: (failureType(err) ?? 'host_unavailable').slice(0, 64) };
    fail(hostRefusal(err));
  }
}

/**
 * A worktree on another host than the starter's: that host's agent says what it is before the
 * first claim. A spelling that is not canonical would be a second workflow id for the worktree.
 */
export async function verifyOnHost(s: RunState, hostNow: HostQueue, claimedBranch: string): Promise<void> {
  const { worktree } = s;
  let seen: { worktreePath: string; repoRoot: string };
  try {
    // The branch is git's on that host too: another name is branch_mismatch, a detached HEAD detached_head.
    // The claim's branch, not the start's: a first claim refused for its branch leaves the run open to a right one.
    seen = await hostNow.inspectWorktree.executeWithOptions({ summary: inspectSummary(worktree.hostId) }, [worktree.worktreePath, claimedBranch]);
  } catch (err) {
    fail(hostRefusal(err));
  }
  if (seen.worktreePath !== worktree.worktreePath) fail(refusal('worktree_mismatch', { reason: 'not the canonical path of the worktree on its host' }));
  if (seen.repoRoot !== worktree.repoRoot && worktree.repoRoot !== worktree.worktreePath) fail(refusal('repo_root_mismatch'));
  // The host confirmed this branch: the record's first event takes it, not the start input's.
  s.verified = { repoRoot: seen.repoRoot, branch: claimedBranch };
}
