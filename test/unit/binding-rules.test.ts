import {
  applyObservation,
  MAX_OBSERVATION_AGE_MS,
  MAX_OBSERVATION_SKEW_MS,
  ObservationSchema,
  type BindingOutcome,
  type BindingState,
  type Observation,
} from '../../src/domain/binding';
import type { Refusal } from '../../src/domain/reasons';

/**
 * Executor-binding rules (docs/identities.md#executor-binding), one test per rule, each written so
 * that removing the rule from src/domain/binding.ts or src/domain/identity.ts makes it fail.
 */

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const U1 = '0b7e2f43-5b6c-4d2a-9e7f-1a2b3c4d5e6f';
const U2 = '1c8f3a54-6c7d-4e3b-8f80-2b3c4d5e6f70';
const U3 = '2d904b65-7d8e-4f4c-9091-3c4d5e6f7081';
const ME = { workerId: 'worker_a', runId: 'run_1' };

let seq = 0;
function obs(id: string, over: { url?: string; title?: string | null; at?: number; generation?: string; sequence?: number } = {}): Observation {
  return {
    executor: 'chatgpt-web',
    executorInstanceId: 'ext-1',
    sessionGeneration: over.generation ?? 'gen-1',
    sequence: over.sequence ?? seq++,
    conversation: {
      conversationId: id,
      conversationUrl: over.url ?? `https://chatgpt.com/c/${id}`,
      title: over.title === undefined ? 'a title' : over.title,
      observedAt: new Date(over.at ?? NOW).toISOString(),
    },
  };
}

function ok(x: BindingOutcome | Refusal): BindingOutcome {
  if ('code' in x) throw new Error(`unexpected refusal ${x.code}`);
  return x;
}
function refused(x: BindingOutcome | Refusal): string {
  if (!('code' in x)) throw new Error('expected a refusal');
  return x.code;
}
const first = (o: Observation, takenBy: string | null = null) => applyObservation(null, ME, o, NOW, takenBy);
/** Applies observations in order from an empty binding; returns the final state. */
function fold(...list: Observation[]): BindingState {
  let s: BindingState | null = null;
  for (const o of list) s = ok(applyObservation(s, ME, o, NOW, null)).state;
  return s!;
}

beforeEach(() => {
  seq = 0;
});

describe('canonical conversation identity', () => {
  it('lowercases an uppercase UUID, in the id and in the URL', () => {
    const s = ok(first(obs(U1.toUpperCase(), { url: `https://chatgpt.com/c/${U1.toUpperCase()}` }))).state;
    expect(s.firstConversation?.conversationId).toBe(U1);
    expect(s.firstConversation?.conversationUrl).toBe(`https://chatgpt.com/c/${U1}`);
  });

  it('refuses the nil UUID as the id', () => {
    const nil = '00000000-0000-0000-0000-000000000000';
    expect(refused(first(obs(nil, { url: `https://chatgpt.com/c/${U1}` })))).toBe('nil_uuid');
  });

  it('refuses the nil UUID in the URL', () => {
    const nil = '00000000-0000-0000-0000-000000000000';
    expect(refused(first(obs(U1, { url: `https://chatgpt.com/c/${nil}` })))).toBe('nil_uuid');
  });

  it('refuses an id that is not a UUID', () => {
    expect(refused(first(obs('not-a-uuid', { url: `https://chatgpt.com/c/${U1}` })))).toBe('invalid_input');
  });

  it.each([
    ['a GPT conversation', `https://chatgpt.com/g/g-abc123-my-gpt/c/${U1}`],
    ['the legacy host', `https://chat.openai.com/c/${U1}`],
    ['the www host', `https://www.chatgpt.com/c/${U1}`],
    ['a query and a fragment', `https://chatgpt.com/c/${U1}?model=gpt-4o&x=1#msg-3`],
    ['a trailing slash', `https://chatgpt.com/c/${U1}/`],
    ['an uppercase host', `https://CHATGPT.COM/c/${U1}`],
  ])('normalises %s to https://chatgpt.com/c/<uuid>', (_label, url) => {
    const s = ok(first(obs(U1, { url }))).state;
    expect(s.firstConversation?.conversationUrl).toBe(`https://chatgpt.com/c/${U1}`);
    expect(s.lastObservation?.conversationUrl).toBe(`https://chatgpt.com/c/${U1}`);
  });

  it('refuses a URL and an id that name different conversations', () => {
    expect(refused(first(obs(U1, { url: `https://chatgpt.com/c/${U2}` })))).toBe('conversation_mismatch');
  });

  it.each([
    ['another host', `https://example.com/c/${U1}`],
    ['a look-alike host', `https://chatgpt.com.evil.example/c/${U1}`],
    ['a subdomain', `https://evil.chatgpt.com/c/${U1}`],
    ['plain http', `http://chatgpt.com/c/${U1}`],
    ['another path', `https://chatgpt.com/share/${U1}`],
    ['a nested path', `https://chatgpt.com/x/c/${U1}`],
    ['not a URL', `chatgpt.com/c/${U1}`],
  ])('refuses %s', (_label, url) => {
    expect(refused(first(obs(U1, { url })))).toBe('invalid_input');
  });
});

describe('per-worker binding history', () => {
  it('binds the first observed conversation', () => {
    const o = ok(first(obs(U1)));
    expect(o.firstBound).toBe(true);
    expect(o.state.firstConversation?.conversationId).toBe(U1);
    expect(o.state.workerId).toBe('worker_a');
  });

  it('never moves the first binding', () => {
    const s1 = fold(obs(U1));
    const o = ok(applyObservation(s1, ME, obs(U2), NOW, null));
    expect(o.conflict).toBe(true);
    expect(o.firstBound).toBe(false);
    expect(o.state.firstConversation?.conversationId).toBe(U1);
  });

  it('keeps a later different UUID as firstConflict, and a third one does not overwrite it', () => {
    const s2 = fold(obs(U1), obs(U2));
    expect(s2.firstConflict?.conversationId).toBe(U2);
    const s3 = fold(obs(U1), obs(U2), obs(U3));
    expect(s3.firstConflict?.conversationId).toBe(U2);
    expect(s3.firstConversation?.conversationId).toBe(U1);
  });

  it('always records the latest observation', () => {
    expect(fold(obs(U1), obs(U2)).lastObservation?.conversationId).toBe(U2);
    expect(fold(obs(U1), obs(U2), obs(U1)).lastObservation?.conversationId).toBe(U1);
    const later = fold(obs(U1, { at: NOW - 5000 }), obs(U1, { at: NOW - 1000 }));
    expect(later.lastObservation?.observedAt).toBe(new Date(NOW - 1000).toISOString());
  });

  it('re-observing the first conversation is no conflict and only refreshes its title', () => {
    const s = fold(obs(U1, { title: 'old' }));
    const o = ok(applyObservation(s, ME, obs(U1, { title: 'new', at: NOW - 1 }), NOW, 'worker_a'));
    expect(o.conflict).toBe(false);
    expect(o.state.firstConversation).toEqual({ ...s.firstConversation, title: 'new' });
  });

  it("refuses a UUID that is already another worker's first binding", () => {
    expect(refused(first(obs(U1), 'worker_b'))).toBe('conversation_taken');
  });

  it('does not count its own first binding as taken', () => {
    expect(ok(first(obs(U1), 'worker_a')).firstBound).toBe(true);
  });
});

describe('observation time window and ordering', () => {
  it(`refuses an observation older than ${MAX_OBSERVATION_AGE_MS} ms`, () => {
    expect(refused(first(obs(U1, { at: NOW - MAX_OBSERVATION_AGE_MS - 1 })))).toBe('observation_too_old');
    expect(ok(first(obs(U1, { at: NOW - MAX_OBSERVATION_AGE_MS }))).firstBound).toBe(true);
  });

  it(`refuses an observation more than ${MAX_OBSERVATION_SKEW_MS} ms in the future`, () => {
    expect(refused(first(obs(U1, { at: NOW + MAX_OBSERVATION_SKEW_MS + 1 })))).toBe('observation_in_future');
    expect(ok(first(obs(U1, { at: NOW + MAX_OBSERVATION_SKEW_MS }))).firstBound).toBe(true);
  });

  it('the window is 15 s back and 1 s ahead, as docs/identities.md#executor-binding says', () => {
    expect(MAX_OBSERVATION_AGE_MS).toBe(15_000);
    expect(MAX_OBSERVATION_SKEW_MS).toBe(1_000);
  });

  it('refuses a sequence that does not increase within a session generation', () => {
    const s = fold(obs(U1, { sequence: 5 }));
    expect(refused(applyObservation(s, ME, obs(U1, { sequence: 5 }), NOW, null))).toBe('sequence_not_increasing');
    expect(refused(applyObservation(s, ME, obs(U1, { sequence: 4 }), NOW, null))).toBe('sequence_not_increasing');
    expect(ok(applyObservation(s, ME, obs(U1, { sequence: 6 }), NOW, null)).state.lastSequence).toBe(6);
  });

  it('lets a new session generation restart at 0', () => {
    const s = fold(obs(U1, { sequence: 5 }));
    const o = ok(applyObservation(s, ME, obs(U1, { generation: 'gen-2', sequence: 0 }), NOW, null));
    expect(o.state.sessionGeneration).toBe('gen-2');
    expect(o.state.lastSequence).toBe(0);
  });

  it('refuses a late observation from a generation the executor has moved on from (a replay)', () => {
    const s = fold(obs(U1, { generation: 'gen-1', sequence: 5 }), obs(U1, { generation: 'gen-2', sequence: 0 }));
    expect(s.retiredGenerations).toEqual(['gen-1']);
    expect(refused(applyObservation(s, ME, obs(U1, { generation: 'gen-1', sequence: 6 }), NOW, null))).toBe('sequence_not_increasing');
    // Moving on again keeps both, most recent first, and a brand-new generation is still welcome.
    const t = ok(applyObservation(s, ME, obs(U1, { generation: 'gen-3', sequence: 0 }), NOW, null)).state;
    expect(t.retiredGenerations).toEqual(['gen-2', 'gen-1']);
    expect(refused(applyObservation(t, ME, obs(U1, { generation: 'gen-2', sequence: 9 }), NOW, null))).toBe('sequence_not_increasing');
  });

  it('records nothing from a refused observation (the previous state is what the caller keeps)', () => {
    const s = fold(obs(U1, { sequence: 5 }));
    const snapshot = JSON.stringify(s);
    applyObservation(s, ME, obs(U2, { sequence: 5 }), NOW, null);
    expect(JSON.stringify(s)).toBe(snapshot);
  });
});

describe('ObservationSchema', () => {
  const valid = () => JSON.parse(JSON.stringify(obs(U1))) as Record<string, unknown>;

  it('accepts a well-formed observation', () => {
    expect(ObservationSchema.safeParse(valid()).success).toBe(true);
  });

  it('refuses unknown fields, at the top and in the conversation', () => {
    const top = { ...valid(), workerId: 'worker_b' };
    expect(ObservationSchema.safeParse(top).error?.issues[0]?.code).toBe('unrecognized_keys');
    const v = valid();
    const inner = { ...v, conversation: { ...(v.conversation as object), provider: 'chatgpt-web' } };
    expect(ObservationSchema.safeParse(inner).error?.issues[0]?.code).toBe('unrecognized_keys');
  });

  it('refuses a negative or fractional sequence and a time without offset', () => {
    expect(ObservationSchema.safeParse({ ...valid(), sequence: -1 }).success).toBe(false);
    expect(ObservationSchema.safeParse({ ...valid(), sequence: 1.5 }).success).toBe(false);
    const v = valid();
    const noOffset = { ...v, conversation: { ...(v.conversation as object), observedAt: '2026-03-01T12:00:00' } };
    expect(ObservationSchema.safeParse(noOffset).success).toBe(false);
  });
});
