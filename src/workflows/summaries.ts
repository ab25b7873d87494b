import type { Hold, OwnershipEvent } from '../domain/events';
import type { OwnershipRecord } from '../domain/projection';

/**
 * One line per command for the Temporal UI's compact history (user metadata), so a history reads
 * as the ownership's story. Ids, seqs and event types only: never a title, URL, lane, reason or
 * other text a caller wrote.
 */

const owner = (r: OwnershipRecord): string => (r.owner ? `${r.owner.executionSessionId} (epoch ${r.epoch})` : 'no owner');

export const persistSummary = (batch: readonly OwnershipEvent[]): string => {
  const first = batch[0]!;
  const last = batch.at(-1)!;
  const types = [...new Set(batch.map((e) => e.type.replace(/^ownership\./, '')))].join(', ');
  return `log seq ${first.seq === last.seq ? first.seq : `${first.seq}-${last.seq}`}: ${types}`;
};

export const projectionSummary = (r: OwnershipRecord): string => `project ${r.state} ${owner(r)} into the worktree (seq ${r.seq})`;

export const wipSummary = (session: string | null): string => `preserve WIP of ${session ?? 'the worktree'} before reclaim`;

export const conversationSummary = (workerId: string): string => `read the conversation of worker ${workerId}`;

export const livenessSummary = (session: string, epoch: number): string => `liveness of ${session} (epoch ${epoch})`;

export const heartbeatSummary = (session: string, epoch: number): string => `heartbeat of ${session} (epoch ${epoch}) as the API recorded it`;

export const inspectSummary = (hostId: string): string => `inspect the worktree on host ${hostId}`;

/** The timer's line: a child hold's lease when that is what falls due first (`hold`), else the record's deadline. */
export function deadlineSummary(r: OwnershipRecord | null, hold: Hold | null = null): string {
  if (r === null) return 'first claim due';
  if (hold !== null) return `lease of hold ${hold.holdId} (child ${hold.executionSessionId}) under ${owner(r)}`;
  if (r.state === 'handoff_pending' && r.handoff) return `handoff to ${r.handoff.toExecutionSessionId} expires`;
  return `lease of ${owner(r)}`;
}
