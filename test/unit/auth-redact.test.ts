import type { BindingState } from '../../src/domain/binding';
import type { LandingReceipt, OwnershipEvent } from '../../src/domain/events';
import type { Conversation, Owner, Principal } from '../../src/domain/identity';
import { emptyRecord, type OwnershipRecord } from '../../src/domain/projection';
import type { LocalProjection } from '../../src/git/projection';
import type { Provenance } from '../../src/provenance/provenance';
import { REDACTED, redactForExport, redactForPrincipal } from '../../src/auth/policy';

const A = 'aaaaaaaa-1111-4111-8111-111111111111';
const B = 'bbbbbbbb-2222-4222-8222-222222222222';
const conv = (id: string, title: string): Conversation => ({
  provider: 'chatgpt-web',
  conversationId: id,
  conversationUrl: `https://chatgpt.com/c/${id}`,
  title,
  observedAt: '2026-01-01T00:00:00.000Z',
});
const owner = (workerId: string, c: Conversation | null): Owner => ({
  executionSessionId: `ses_${workerId}`,
  runtime: 'chatgpt-web',
  parentExecutionSessionId: null,
  conversation: c,
  worker: { runId: 'run_1', workerId },
  process: null,
});
const receipt = (workerId: string, c: Conversation): LandingReceipt => ({
  ownershipId: 'own_01J00000000000000000000000',
  sourceBranch: 'feat',
  sourceHead: 'abcdef1',
  landedBranch: 'main',
  landedHead: '1234567',
  landedAt: '2026-01-01T00:00:00.000Z',
  worktreePath: '/r/wt',
  executionSessionId: `ses_${workerId}`,
  worker: { runId: null, workerId },
  conversation: c,
});

/** Owned by worker_a (conversation A); an earlier landing by worker_b (conversation B). */
const record: OwnershipRecord = {
  ...emptyRecord({ ownershipId: 'own_01J00000000000000000000000', repoRoot: '/r', worktreePath: '/r/wt', branch: 'feat', hostId: 'h' }),
  worker: { runId: 'run_1', workerId: 'worker_a' },
  owner: owner('worker_a', conv(A, 'Title A')),
  lineage: [{ executionSessionId: 'ses_worker_a', runtime: 'chatgpt-web', epoch: 1, via: 'bind', at: '2026-01-01T00:00:00.000Z', conversationId: A }],
  landings: [receipt('worker_b', conv(B, 'Title B'))],
};

const reader: Principal = { kind: 'reader', id: 'dash' };
const execA: Principal = { kind: 'executor', id: 'orch', workerId: 'worker_a', runId: 'run_1' };
const execB: Principal = { kind: 'executor', id: 'orch-b', workerId: 'worker_b' };

const urlsIn = (x: unknown) => JSON.stringify(x).match(/https:\/\/chatgpt\.com\/c\/[0-9a-f-]+/g) ?? [];

describe('redactForPrincipal', () => {
  it('shows everything to admin, landing and system', () => {
    for (const kind of ['admin', 'landing', 'system'] as const) expect(redactForPrincipal({ kind, id: 'x' }, record)).toEqual(record);
  });

  it('hides every conversation URL and title from a reader, keeping ids', () => {
    const r = redactForPrincipal(reader, record);
    expect(r.owner?.conversation).toEqual({ ...conv(A, REDACTED), conversationUrl: REDACTED });
    expect(r.landings[0]?.conversation).toEqual({ ...conv(B, REDACTED), conversationUrl: REDACTED });
    expect(r.lineage[0]?.conversationId).toBe(A);
    expect(urlsIn(r)).toEqual([]);
    expect(JSON.stringify(r)).not.toMatch(/Title [AB]/);
    // everything else untouched
    expect({ ...r, owner: record.owner, landings: record.landings }).toEqual(record);
  });

  it("shows an executor its own worker's conversations and hides the others", () => {
    const a = redactForPrincipal(execA, record);
    expect(a.owner?.conversation).toEqual(conv(A, 'Title A'));
    expect(a.landings[0]?.conversation?.conversationUrl).toBe(REDACTED);
    expect(a.landings[0]?.conversation?.title).toBe(REDACTED);
    expect(a.landings[0]?.conversation?.conversationId).toBe(B);

    const b = redactForPrincipal(execB, record);
    expect(b.owner?.conversation?.conversationUrl).toBe(REDACTED);
    expect(b.landings[0]?.conversation).toEqual(conv(B, 'Title B'));
  });

  it('hides conversations of an unknown worker from executors', () => {
    const orphan = { ...receipt('worker_a', conv(A, 'Title A')), worker: null };
    expect(redactForPrincipal(execA, orphan).conversation?.conversationUrl).toBe(REDACTED);
    expect(redactForPrincipal({ kind: 'executor', id: 'unbound' }, record).owner?.conversation?.conversationUrl).toBe(REDACTED);
  });

  it('covers provenance answers, executor bindings and events', () => {
    const prov: Provenance = {
      commit: '1234567',
      landedHead: '1234567',
      landedBranch: 'main',
      landedAt: '2026-01-01T00:00:00.000Z',
      sourceBranch: 'feat',
      sourceHead: 'abcdef1',
      worktreePath: '/r/wt',
      executionSessionId: 'ses_worker_a',
      worker: { runId: null, workerId: 'worker_a' },
      conversation: { conversationId: A, conversationUrl: `https://chatgpt.com/c/${A}`, title: 'Title A' },
      ownershipId: 'own_01J00000000000000000000000',
      via: 'landed_head',
    };
    expect(redactForPrincipal(reader, prov).conversation).toEqual({ conversationId: A, conversationUrl: REDACTED, title: REDACTED });
    expect(redactForPrincipal(execA, prov)).toEqual(prov);

    const binding: BindingState = {
      workerId: 'worker_a',
      runId: null,
      executor: 'chatgpt-web',
      executorInstanceId: 'ext-1',
      firstConversation: conv(A, 'Title A'),
      firstConflict: conv(B, 'Title B'),
      lastObservation: conv(B, 'Title B'),
      sessionGeneration: 'g1',
      lastSequence: 3,
      retiredGenerations: [],
    };
    expect(redactForPrincipal(execA, binding)).toEqual(binding);
    const hidden = redactForPrincipal(execB, binding);
    expect(urlsIn(hidden)).toEqual([]);
    expect(hidden.firstConflict?.title).toBe(REDACTED);

    const events = [
      {
        ownershipId: 'own_01J00000000000000000000000',
        seq: 1,
        at: '2026-01-01T00:00:00.000Z',
        actor: { executionSessionId: 'ses_worker_a', principal: 'executor:orch' },
        repoRoot: '/r',
        worktreePath: '/r/wt',
        branch: 'feat',
        hostId: 'h',
        type: 'ownership.reclaimed',
        data: {
          previousOwner: owner('worker_b', conv(B, 'Title B')),
          owner: owner('worker_a', conv(A, 'Title A')),
          epoch: 2,
          forced: false,
          reason: null,
          principal: execA,
        },
      },
    ] as OwnershipEvent[];
    const seenByA = redactForPrincipal(execA, events);
    expect(urlsIn(seenByA)).toEqual([`https://chatgpt.com/c/${A}`]);
    expect(urlsIn(redactForPrincipal(reader, events))).toEqual([]);
  });

  it('covers flat shapes and differently spelled keys (local projection, git config dumps, free text)', () => {
    const local: LocalProjection = {
      ownershipId: 'own_01J00000000000000000000000',
      executionSessionId: 'ses_worker_a',
      runtime: 'chatgpt-web',
      conversationId: A,
      conversationUrl: `https://chatgpt.com/c/${A}`,
      workerId: 'worker_a',
      runId: null,
      lane: null,
      planRef: null,
      epoch: 1,
      seq: 1,
      state: 'active',
      claimedAt: '2026-01-01T00:00:00.000Z',
      lastSeenAt: '2026-01-01T00:00:00.000Z',
    };
    expect(redactForPrincipal(execA, local)).toEqual(local);
    expect(redactForPrincipal(execB, local).conversationUrl).toBe(REDACTED);
    const dump = {
      'overdeck.owner.conversation-url': `https://chat.openai.com/c/${A}`,
      conversation_title: 'Title A',
      log: `bound to https://chatgpt.com/g/g-x/c/${A}?model=x and done`,
    };
    expect(redactForPrincipal(reader, dump)).toEqual({
      'overdeck.owner.conversation-url': REDACTED,
      conversation_title: REDACTED,
      log: `bound to ${REDACTED} and done`,
    });
  });

  it('leaves null and absent fields alone, and non-conversation titles too', () => {
    const v = { owner: owner('worker_a', { ...conv(A, 'x'), title: null }), plan: { title: 'Plan title' } };
    const r = redactForPrincipal(reader, v);
    expect(r.owner.conversation?.title).toBeNull();
    expect(r.plan.title).toBe('Plan title');
  });

  it('does not mutate its input and treats values as JSON', () => {
    const before = JSON.stringify(record);
    redactForPrincipal(reader, record);
    expect(JSON.stringify(record)).toBe(before);

    const hostile = JSON.parse(`{"__proto__": {"conversationUrl": "https://chatgpt.com/c/${A}"}, "at": 1}`) as Record<string, unknown>;
    const r = redactForPrincipal(reader, hostile);
    expect(Object.getPrototypeOf(r)).toBe(Object.prototype);
    expect(JSON.stringify(r)).not.toContain('chatgpt.com');

    const d = new Date('2026-01-01T00:00:00.000Z');
    expect(redactForPrincipal(reader, { d })).toEqual({ d: '2026-01-01T00:00:00.000Z' });

    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => redactForPrincipal(reader, cyclic)).toThrow(/cyclic/);
    const shared = { conversationId: A, conversationUrl: 'u' };
    expect(redactForPrincipal(reader, [shared, shared])).toEqual([
      { conversationId: A, conversationUrl: REDACTED },
      { conversationId: A, conversationUrl: REDACTED },
    ]);
  });
});

describe('redactForExport', () => {
  it("hides every URL and title, even the owner's own", () => {
    const r = redactForExport(record);
    expect(urlsIn(r)).toEqual([]);
    expect(JSON.stringify(r)).not.toMatch(/Title [AB]/);
    expect(r.owner?.conversation?.conversationId).toBe(A);
  });
  it('hides conversation ids too when asked', () => {
    const r = redactForExport(record, { conversationIds: true });
    expect(JSON.stringify(r)).not.toContain(A);
    expect(JSON.stringify(r)).not.toContain(B);
    expect(r.lineage[0]?.conversationId).toBe(REDACTED);
  });
});
