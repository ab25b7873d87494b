import type { HostActivities, LivenessVerdict, StoreActivities } from '../../src/activities/types';
import type { HostRemovalRequest } from '../../src/contract/removal';
import type { OwnershipEvent } from '../../src/domain/events';
import type { OwnershipRecord } from '../../src/domain/projection';

/**
 * The activities an ownership workflow calls, in memory: the durable log a list per ownership,
 * the worktree's projection a list of the records written, the liveness authority a verdict the
 * test sets. What the workflow decides is the subject; PostgreSQL and git are the integration
 * tier's. They keep the contracts of src/activities/types.ts that the workflow relies on: the log
 * appends in seq order, keeps the first version of a seq (the log wins) and refuses a gap.
 */
export interface FakeActivities {
  store: StoreActivities;
  host: HostActivities;
  /** each ownership's durable log */
  log(ownershipId: string): OwnershipEvent[];
  /** appends to an ownership's log behind the workflow's back: what a task lost after its write leaves there */
  appendBehind(e: OwnershipEvent): void;
  /** every record written to a worktree's projection, in order */
  projections: OwnershipRecord[];
  /** every removal the host was asked for, in order */
  removals: HostRemovalRequest[];
  /** what the liveness authority answers from now on */
  setVerdict(v: LivenessVerdict): void;
}

export function fakeActivities(): FakeActivities {
  const logs = new Map<string, OwnershipEvent[]>();
  const projections: OwnershipRecord[] = [];
  const removals: HostRemovalRequest[] = [];
  let verdict: LivenessVerdict = 'alive';
  const logOf = (id: string) => logs.get(id) ?? logs.set(id, []).get(id)!;
  const host: HostActivities = {
    async applyLocalProjection(record) {
      projections.push(record);
      return { localSeq: record.seq, result: 'written', branch: null };
    },
    async preserveWip() {
      return null;
    },
    async worktreePresence() {
      return { present: false, detail: 'gone' };
    },
    async inspectWorktree(worktreePath, claimedBranch) {
      return { worktreePath, repoRoot: worktreePath, branch: claimedBranch ?? null };
    },
    async checkSessionLiveness() {
      return { verdict, detail: `fake ${verdict}` };
    },
    async removeWorktree(req) {
      removals.push(req);
      return {
        worktree: req.worktreePath,
        status: req.dryRun ? 'would_remove' : 'removed',
        refusal: null,
        refusals: [],
        receipt: null,
        facts: null,
        removedAt: req.dryRun ? null : new Date(0).toISOString(),
        branch: null,
        record: null,
        error: null,
      };
    },
  };
  const store: StoreActivities = {
    async persistEvents(_workflowId, events) {
      if (events.length === 0) return { durableSeq: 0 };
      // As the store: an event already recorded as sent changes nothing; the log holding another at
      // one of the seqs (a lost task's write) writes nothing and answers the log's events from the batch's first seq.
      const log = logOf(events[0]!.ownershipId);
      const otherwise = events.some((e) => {
        const recorded = log.find((x) => x.seq === e.seq);
        return recorded !== undefined && JSON.stringify(recorded) !== JSON.stringify(e);
      });
      if (otherwise) {
        const ahead = log.filter((x) => x.seq >= events[0]!.seq);
        return { durableSeq: ahead.at(-1)!.seq, ahead };
      }
      for (const e of events) {
        if (log.some((x) => x.seq === e.seq)) continue;
        if (e.seq !== (log.at(-1)?.seq ?? 0) + 1) throw new Error(`seq ${e.seq} leaves a gap`);
        log.push(e);
      }
      return { durableSeq: log.at(-1)?.seq ?? 0 };
    },
    async readLogTail(ownershipId, afterSeq) {
      return logOf(ownershipId).filter((x) => x.seq > afterSeq);
    },
    async readHeartbeat() {
      return null;
    },
    async readExecutorConversation() {
      return null;
    },
    async readSettings() {
      return null;
    },
  };
  return {
    store,
    host,
    log: (id) => [...logOf(id)],
    appendBehind: (e) => void logOf(e.ownershipId).push(e),
    projections,
    removals,
    setVerdict: (v) => (verdict = v),
  };
}
