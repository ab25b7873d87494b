import { log, setHandler } from '@temporalio/workflow';
import { Checks } from '../domain/commands';
import { decideConversationBound, decideLanded, decideWorktreeRemoved, refreshesTitle, type Decision } from '../domain/decide';
import { store } from './activities';
import { emit } from './durable-log';
import { heartbeat, holdHeartbeat } from './liveness';
import {
  conversationBoundSignal,
  eventsQuery,
  heartbeatSignal,
  holdHeartbeatSignal,
  landedSignal,
  projectionQuery,
  QUERY_DESCRIPTIONS,
  worktreeRemovedSignal,
} from './messages';
import { view, type RunState } from './run-state';
import { recordRefusedSignal, sealedSignal } from './seal';
import { conversationSummary } from './summaries';

/** Signals: fire-and-forget, each idempotent; invalid ones are dropped (with a log line), refused ones recorded. */
export function installSignals(s: RunState): void {
  setHandler(heartbeatSignal, (raw) => {
    if (Checks.heartbeat(raw) && sealedSignal(s, 'heartbeat', raw)) heartbeat(s, raw);
  });
  setHandler(holdHeartbeatSignal, (raw) => {
    if (Checks.holdHeartbeat(raw) && sealedSignal(s, 'holdHeartbeat', raw)) holdHeartbeat(s, raw);
  });
  setHandler(landedSignal, (raw) => {
    if (!Checks.landed(raw)) return log.warn('landed signal dropped: invalid input');
    if (!sealedSignal(s, 'landed', raw)) return;
    decided('landed', () => decideLanded(s.record, raw), raw);
  });
  setHandler(worktreeRemovedSignal, (raw) => {
    if (!Checks.worktreeRemoved(raw)) return log.warn('worktreeRemoved signal dropped: invalid input');
    if (!sealedSignal(s, 'worktreeRemoved', raw)) return;
    decided('worktreeRemoved', () => decideWorktreeRemoved(s.record, raw), raw);
  });
  setHandler(conversationBoundSignal, async (raw) => {
    if (!Checks.conversationBound(raw) || !s.record?.worker || s.record.worker.workerId !== raw.workerId || !sealedSignal(s, 'conversationBound', raw)) return;
    const conversation = await store.readExecutorConversation.executeWithOptions({ summary: conversationSummary(raw.workerId) }, [raw.workerId]);
    decided(null, () => decideConversationBound(s.record, raw.workerId, conversation, { refreshTitle: refreshesTitle(s.record, conversation) }));
  });

  /**
   * Decides and emits. A refusal is logged under `name` and recorded for
   * people (refused_messages; the API answers a landing's or a removal's caller from it); null:
   * dropped silently (a conversation refresh that no longer applies).
   */
  function decided(name: string | null, decide: () => Decision, raw?: unknown): void {
    const d = decide();
    // Dropped for a lost task's events (durable-log.ts adopt): decided again on the adopted record,
    // silently (that task most likely decided this very signal).
    if (!('code' in d)) emit(s, d.events, undefined, () => decided(null, decide));
    else if (name !== null) {
      log.warn(`${name} signal refused`, { code: d.code });
      recordRefusedSignal(s, name, raw, d.code);
    }
  }
}

export function installQueries(s: RunState): void {
  setHandler(projectionQuery, () => view(s), { description: QUERY_DESCRIPTIONS.projection });
  // The Temporal UI's Queries tab sends no argument (or null): all recent events, not none.
  setHandler(eventsQuery, (afterSeq) => s.recentEvents.filter((e) => e.seq > (typeof afterSeq === 'number' ? afterSeq : 0)), {
    description: QUERY_DESCRIPTIONS.events,
  });
}
