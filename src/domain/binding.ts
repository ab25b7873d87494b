import { z } from 'zod';
import { canonicalConversation, FreeText, IdString, IsoTimeInput, type Conversation } from './identity';
import { refusal, type Refusal } from './reasons';

/**
 * Executor binding per agent worker (docs/identities.md, Executor binding). The executor (the browser
 * extension) reports what it observed for its own worker; these rules decide what is kept.
 */

const UUID_BODY = '[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}';
const UUID_ANY_CASE = new RegExp(`^${UUID_BODY}$`);
/** What canonicalConversationUrl accepts, as a pattern a client can follow: the query and fragment (dropped) storable. */
const CONVERSATION_URL = new RegExp(
  String.raw`^(?=[\s\S]{1,2048}$)https://(?:(?:www\.)?chatgpt\.com|chat\.openai\.com)/(?:g/[A-Za-z0-9_-]+/)?c/${UUID_BODY}/?(?:[?#][^\s\x00-\x1f\x7f\uD800-\uDFFF]*)?$`,
  'u',
);

export const ObservationSchema = z.strictObject({
  executor: IdString,
  executorInstanceId: IdString,
  executionSessionId: IdString.optional(),
  /** Restarts of the executor start a new generation; sequence numbers are per generation. */
  sessionGeneration: IdString,
  sequence: z.number().int().nonnegative(),
  conversation: z.strictObject({
    // Looked up in PostgreSQL before any rule runs: a malformed id is refused here (a NUL in it once answered 500).
    conversationId: z.string().regex(UUID_ANY_CASE, 'a UUID').describe('the conversation’s UUID (any case; the nil UUID is refused as nil_uuid)'),
    conversationUrl: z
      .string()
      .regex(CONVERSATION_URL, 'a ChatGPT conversation URL')
      .meta({ maxLength: 2048 })
      .describe('https://chatgpt.com/c/<uuid> (also www.chatgpt.com, chat.openai.com, /g/<gpt>/c/<uuid>); naming the same UUID as conversationId'),
    title: FreeText.nullable().optional(),
    observedAt: IsoTimeInput,
  }),
});
export type Observation = z.infer<typeof ObservationSchema>;

export interface BindingState {
  workerId: string;
  runId: string | null;
  executor: string;
  executorInstanceId: string;
  firstConversation: Conversation | null;
  firstConflict: Conversation | null;
  lastObservation: Conversation | null;
  sessionGeneration: string | null;
  lastSequence: number | null;
  /** Generations this executor has moved on from: their late observations are replays, refused. */
  retiredGenerations: string[];
}

/** How many earlier generations are remembered (coalesced, like the rest of the binding). */
export const RETIRED_GENERATIONS_KEPT = 16;

export const MAX_OBSERVATION_AGE_MS = 15_000;
export const MAX_OBSERVATION_SKEW_MS = 1_000;

export type BindingOutcome = { state: BindingState; firstBound: boolean; conflict: boolean };

/**
 * Applies one observation. `takenBy` is the worker that already holds this conversation as its
 * first binding, if any (a UUID cannot become a second worker's first binding).
 */
export function applyObservation(
  prev: BindingState | null,
  who: { workerId: string; runId: string | null },
  obs: Observation,
  nowMs: number,
  takenBy: string | null,
): BindingOutcome | Refusal {
  const conv = canonicalConversation(obs.conversation);
  if ('code' in conv) return conv;
  const observedMs = Date.parse(conv.observedAt);
  if (!Number.isFinite(observedMs)) return refusal('invalid_input', { field: 'observedAt' });
  if (nowMs - observedMs > MAX_OBSERVATION_AGE_MS) return refusal('observation_too_old');
  if (observedMs - nowMs > MAX_OBSERVATION_SKEW_MS) return refusal('observation_in_future');
  if (prev && prev.sessionGeneration === obs.sessionGeneration && prev.lastSequence !== null && obs.sequence <= prev.lastSequence) {
    return refusal('sequence_not_increasing');
  }
  if (prev && prev.sessionGeneration !== obs.sessionGeneration && prev.retiredGenerations.includes(obs.sessionGeneration)) {
    return refusal('sequence_not_increasing', { generation: 'retired' });
  }
  const base: BindingState = prev ?? {
    workerId: who.workerId,
    runId: who.runId,
    executor: obs.executor,
    executorInstanceId: obs.executorInstanceId,
    firstConversation: null,
    firstConflict: null,
    lastObservation: null,
    sessionGeneration: null,
    lastSequence: null,
    retiredGenerations: [],
  };
  const next: BindingState = {
    ...base,
    runId: who.runId ?? base.runId,
    executor: obs.executor,
    executorInstanceId: obs.executorInstanceId,
    lastObservation: conv,
    sessionGeneration: obs.sessionGeneration,
    lastSequence: obs.sequence,
    retiredGenerations:
      base.sessionGeneration !== null && base.sessionGeneration !== obs.sessionGeneration
        ? [base.sessionGeneration, ...base.retiredGenerations.filter((g) => g !== base.sessionGeneration)].slice(0, RETIRED_GENERATIONS_KEPT)
        : base.retiredGenerations,
  };
  if (!base.firstConversation) {
    if (takenBy && takenBy !== who.workerId) return refusal('conversation_taken');
    return { state: { ...next, firstConversation: conv }, firstBound: true, conflict: false };
  }
  if (base.firstConversation.conversationId === conv.conversationId) {
    // Same conversation: a newer title is display-only and may refresh; the identity never moves.
    return {
      state: { ...next, firstConversation: { ...base.firstConversation, title: conv.title ?? base.firstConversation.title } },
      firstBound: false,
      conflict: false,
    };
  }
  return { state: { ...next, firstConflict: base.firstConflict ?? conv }, firstBound: false, conflict: true };
}
