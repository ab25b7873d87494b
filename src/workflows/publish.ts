import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { condition, setCurrentDetails, upsertMemo, upsertSearchAttributes } from '@temporalio/workflow';
import { SEARCH_ATTRIBUTE_NAMES, type SearchAttributeField } from '../domain/search-attributes';
import { LIVE_MEMO, type LiveState } from './messages';
import { drainedToLog, view, type RunState } from './run-state';

/** Publication: search attributes (names: src/domain/search-attributes.ts) and the UI's one-line summary follow every change. */

const key = (field: Exclude<SearchAttributeField, 'sessions'>) => defineSearchAttributeKey(SEARCH_ATTRIBUTE_NAMES[field], SearchAttributeType.KEYWORD);
export const SA = {
  ownershipId: key('ownershipId'),
  repoRoot: key('repoRoot'),
  worktree: key('worktree'),
  branch: key('branch'),
  state: key('state'),
  session: key('session'),
  worker: key('worker'),
  conversation: key('conversation'),
  landedHead: key('landedHead'),
  sessions: defineSearchAttributeKey(SEARCH_ATTRIBUTE_NAMES.sessions, SearchAttributeType.KEYWORD_LIST),
};

export function publish(s: RunState): void {
  const r = s.record;
  if (!r) return;
  const attributes = [
    { key: SA.ownershipId, value: r.ownershipId },
    { key: SA.repoRoot, value: r.repoRoot },
    { key: SA.worktree, value: r.worktreePath },
    { key: SA.branch, value: r.branch },
    { key: SA.state, value: r.state },
    { key: SA.session, value: r.owner?.executionSessionId ?? null },
    { key: SA.worker, value: r.worker?.workerId ?? null },
    { key: SA.conversation, value: r.owner?.conversation?.conversationId ?? null },
    { key: SA.landedHead, value: r.landings.at(-1)?.landedHead ?? null },
  ];
  // Every session that ever owned it: a lineage is searchable after its owners lost it.
  const lineage = { key: SA.sessions, value: [...new Set(r.lineage.map((l) => l.executionSessionId))] };
  const serialized = JSON.stringify([...attributes.map((a) => a.value), lineage.value]);
  // Only a change of some attribute is worth a command in history (most events change none).
  if (serialized !== s.publishedAttributes) {
    upsertSearchAttributes([...attributes, lineage]);
    s.publishedAttributes = serialized;
  }
  const who = r.owner ? `${r.owner.executionSessionId} (${r.owner.runtime})` : 'unowned';
  // The children holding under the owner's tenure, by session and hold (only when some hold: the line is as it was otherwise).
  const holds = (r.holds ?? []).map((h) => `${h.executionSessionId} (hold ${h.holdId})`);
  const children = holds.length > 0 ? ` · children ${holds.join(', ')}` : '';
  setCurrentDetails(`${r.state.toUpperCase()} · ${who}${children} · branch ${r.branch} · lane ${r.lane ?? 'unknown'} · epoch ${r.epoch} · seq ${r.seq}`);
}

function liveOf(s: RunState): LiveState | null {
  const v = view(s);
  return v ? { ownershipId: v.ownershipId, seq: v.seq, liveness: v.liveness, projectionSync: v.projectionSync, projection: v.projection } : null;
}

/**
 * What only the running workflow knows (the owner's liveness, how far the worktree's projection
 * and the log have caught up), published as its memo whenever it changes: the service reads it with DescribeWorkflowExecution, which the worker never
 * sees. A query is answered by the worker inside the workflow's task stream, and one arriving while
 * a task is in flight on a worker that just took the workflow over splits that task's activations
 * in a way the SDK does not reproduce on replay: the task then fails for nondeterminism (see
 * docs/guarantees.md#messages). The projection query stays, for people in the Temporal UI.
 */
export async function liveLoop(s: RunState): Promise<never> {
  let published = '';
  // Only what the log holds whole: the state a message's events leave before they are durable
  // (the owner's new liveness beside the old record) is never a reader's to see, and each message
  // changes the memo once, not twice.
  const ready = () => drainedToLog(s);
  for (;;) {
    // Not while the run drains to continue as new: the next run publishes its own at once.
    await condition(() => !s.draining && s.record !== null && ready() && JSON.stringify(liveOf(s)) !== published);
    const live = liveOf(s)!;
    published = JSON.stringify(live);
    upsertMemo({ [LIVE_MEMO]: live });
  }
}
