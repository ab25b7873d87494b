import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ATTRIBUTION_REASONS, judgeClaim, tenureSegments, type LineClaim, type TenureSegment } from '../../src/domain/attribution';
import { stampEvent, type EventDraft, type OwnershipEvent } from '../../src/domain/events';

/**
 * docs/git-projection.md#whom-a-commit-is-attributed-to: a journal line is a claim; the tenure the
 * ownership log says held the worktree while the line can have been written decides.
 */

const owner = (session: string, worker: string, conversationId: string | null) => ({
  executionSessionId: session,
  runtime: 'codex-cli',
  parentExecutionSessionId: null,
  process: null,
  worker: { workerId: worker, runId: null },
  conversation: conversationId
    ? {
        provider: 'chatgpt-web' as const,
        conversationId,
        conversationUrl: `https://chatgpt.com/c/${conversationId}`,
        title: null,
        observedAt: '2026-01-01T00:00:00.000Z',
      }
    : null,
});

const A = owner('session-A', 'worker-a', 'a1b2c3d4-0000-4000-8000-00000000000a');
const B = owner('session-B', 'worker-b', 'a1b2c3d4-0000-4000-8000-00000000000b');

/** A's ownership of one worktree: A claims at t=1000, hands off to B (accepted at t=3000), B releases at t=5000. */
function log(): OwnershipEvent[] {
  const place = { repoRoot: '/r', worktreePath: '/r/wt', branch: 'wt/x', hostId: 'h' };
  const drafts: [number, EventDraft][] = [
    [
      1000,
      {
        type: 'ownership.claimed',
        data: { owner: A, epoch: 1, via: 'bind', handoffId: null, previousExecutionSessionId: null, lane: null, planRef: null, requestId: null },
        actorSessionId: 'session-A',
        principal: null,
      },
    ],
    [
      2000,
      {
        type: 'ownership.handoff_started',
        data: { handoffId: 'h1', fromExecutionSessionId: 'session-A', toExecutionSessionId: 'session-B', reason: null, expiresAt: '2030-01-01T00:00:00.000Z' },
        actorSessionId: 'session-A',
        principal: null,
      },
    ],
    [
      3000,
      {
        type: 'ownership.claimed',
        data: { owner: B, epoch: 2, via: 'handoff', handoffId: 'h1', previousExecutionSessionId: 'session-A', lane: null, planRef: null, requestId: null },
        actorSessionId: 'session-B',
        principal: null,
      },
    ],
    [5000, { type: 'ownership.released', data: { executionSessionId: 'session-B', epoch: 2, reason: null }, actorSessionId: 'session-B', principal: null }],
  ];
  // seq 2 (a plan) is one the store's query skips: a gap is not lost history here.
  return drafts.map(([at, d], i) => stampEvent('own_X', { ...place, seq: i === 0 ? 0 : i + 1 }, d, new Date(at).toISOString()));
}

const claim = (over: Partial<LineClaim>): LineClaim => ({
  ownershipId: 'own_X',
  epoch: 1,
  executionSessionId: 'session-A',
  committerSessionId: 'session-A',
  workerId: 'worker-a',
  conversationId: A.conversation!.conversationId,
  state: 'active',
  ...over,
});

let segments: TenureSegment[];
beforeAll(() => {
  segments = tenureSegments(log());
});

test('the log folds into held stretches: A active, A handing off, B; nothing after the release', () => {
  expect(segments.map((s) => [s.executionSessionId, s.epoch, s.state, s.from, s.to])).toEqual([
    ['session-A', 1, 'active', 1000, 2000],
    ['session-A', 1, 'handoff_pending', 2000, 3000],
    ['session-B', 2, 'active', 3000, 5000],
  ]);
});

test("the owner's own line, written while it held the worktree: attributed, with the record's facts", () => {
  expect(judgeClaim(claim({}), segments, { from: 1500, to: 1900 })).toEqual({
    verdict: 'attributed',
    reason: null,
    via: 'session',
    recorded: { ownershipId: 'own_X', epoch: 1, executionSessionId: 'session-A', workerId: 'worker-a', conversationId: A.conversation!.conversationId },
  });
});

test('a line naming another tenure than the one holding the worktree is disputed, and says what the record holds', () => {
  // B's tenure, claimed from a line written while only A held it (framing B).
  const framed = claim({
    epoch: 2,
    executionSessionId: 'session-B',
    committerSessionId: 'session-B',
    workerId: 'worker-b',
    conversationId: B.conversation!.conversationId,
  });
  expect(judgeClaim(framed, segments, { from: 1100, to: 1900 })).toMatchObject({
    verdict: 'disputed',
    reason: 'attribution_claim_mismatch',
    recorded: { executionSessionId: 'session-A', epoch: 1 },
  });
  // One fact wrong is enough: another conversation, another worker, another ownership.
  expect(judgeClaim(claim({ conversationId: B.conversation!.conversationId }), segments, { from: 1100, to: 1900 }).verdict).toBe('disputed');
  expect(judgeClaim(claim({ workerId: 'worker-b' }), segments, { from: 1100, to: 1900 }).verdict).toBe('disputed');
  expect(judgeClaim(claim({ ownershipId: 'own_Y' }), segments, { from: 1100, to: 1900 }).verdict).toBe('disputed');
});

test('after a read of the journal that followed the handoff, A can no longer be named for a new line', () => {
  // Written after a read at t=3500: only B held the worktree since.
  expect(judgeClaim(claim({}), segments, { from: 3500, to: 4000 })).toMatchObject({ verdict: 'disputed', recorded: { executionSessionId: 'session-B' } });
  // A line read for the first time after the handoff, with no earlier read: A's, as it says.
  expect(judgeClaim(claim({}), segments, { from: null, to: 4000 })).toMatchObject({ verdict: 'attributed', recorded: { executionSessionId: 'session-A' } });
});

test('no tenure in the window: unowned, whatever the line names', () => {
  expect(judgeClaim(claim({}), segments, { from: 5500, to: 6000 })).toEqual({
    verdict: 'unowned',
    reason: 'attribution_no_tenure',
    via: 'unknown',
    recorded: null,
  });
  expect(judgeClaim(claim({}), segments, { from: null, to: 900 })).toMatchObject({ verdict: 'unowned' });
  // A line that read a free worktree, in a window that has free time: unowned, not B's.
  expect(
    judgeClaim(claim({ ownershipId: 'own_X', epoch: 2, state: 'released', executionSessionId: 'session-B', committerSessionId: 'session-Z' }), segments, {
      from: 4000,
      to: 6000,
    }),
  ).toMatchObject({ verdict: 'unowned' });
});

test('without a session id: the owner only when the record (or the state the hook read) had it alone', () => {
  expect(judgeClaim(claim({ committerSessionId: null }), segments, { from: 1100, to: 1900 })).toMatchObject({ verdict: 'attributed', via: 'owner_at_time' });
  expect(judgeClaim(claim({ committerSessionId: null, state: 'handoff_pending' }), segments, { from: 2100, to: 2900 })).toMatchObject({
    verdict: 'unknown',
    reason: 'attribution_no_session',
    recorded: { executionSessionId: 'session-A' },
  });
  expect(judgeClaim(claim({ committerSessionId: null, state: null }), segments, { from: 1100, to: 2900 })).toMatchObject({ verdict: 'unknown' });
  // A state the record never had then is a claim that does not hold.
  expect(judgeClaim(claim({ committerSessionId: null, state: 'submitted' }), segments, { from: 1100, to: 1900 })).toMatchObject({ verdict: 'disputed' });
});

test('docs/reason-codes.md lists every attribution reason with its meaning', () => {
  const doc = readFileSync(path.resolve(__dirname, '../../docs/reason-codes.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Commit attribution'));
  const rows = Object.fromEntries([...section.matchAll(/^\| `(attribution_[a-z_]+)` \| (.+) \|$/gm)].map((m) => [m[1]!, m[2]!]));
  expect(rows).toEqual(ATTRIBUTION_REASONS);
});

/** A's tenure with a child hold: A claims at t=1000, grants child-C a hold at t=2000, the hold ends at t=4000; A releases at t=6000. */
function logWithHold(): OwnershipEvent[] {
  const place = { repoRoot: '/r', worktreePath: '/r/wt', branch: 'wt/x', hostId: 'h' };
  const hold = {
    holdId: 'hld_C',
    executionSessionId: 'child-C',
    parentExecutionSessionId: 'session-A',
    epoch: 1,
    grantedAt: new Date(2000).toISOString(),
    leaseTtlMs: 60_000,
    runtime: 'codex-cli',
  };
  const drafts: [number, EventDraft][] = [
    [
      1000,
      {
        type: 'ownership.claimed',
        data: { owner: A, epoch: 1, via: 'bind', handoffId: null, previousExecutionSessionId: null, lane: null, planRef: null, requestId: null },
        actorSessionId: 'session-A',
        principal: null,
      },
    ],
    [2000, { type: 'ownership.hold_granted', data: { hold }, actorSessionId: 'session-A', principal: null }],
    [
      4000,
      {
        type: 'ownership.hold_ended',
        data: { holdId: 'hld_C', executionSessionId: 'child-C', reason: 'released', detail: null },
        actorSessionId: 'child-C',
        principal: null,
      },
    ],
    [6000, { type: 'ownership.released', data: { executionSessionId: 'session-A', epoch: 1, reason: null }, actorSessionId: 'session-A', principal: null }],
  ];
  return drafts.map(([at, d], i) => stampEvent('own_X', { ...place, seq: i }, d, new Date(at).toISOString()));
}

test("a child's commit under a live hold is the child's, and through it the parent's conversation; before the grant or after the end it is nobody's", () => {
  const held = tenureSegments(logWithHold());
  expect(held.map((s) => [s.executionSessionId, (s.holds ?? []).map((h) => h.executionSessionId), s.from, s.to])).toEqual([
    ['session-A', [], 1000, 2000],
    ['session-A', ['child-C'], 2000, 4000],
    ['session-A', [], 4000, 6000],
  ]);
  // The child's line: its own session committing, the parent as the projection's owner.
  const child = claim({ committerSessionId: 'child-C' });
  expect(judgeClaim(child, held, { from: 2500, to: 3000 })).toEqual({
    verdict: 'attributed',
    reason: null,
    via: 'hold',
    recorded: { ownershipId: 'own_X', epoch: 1, executionSessionId: 'child-C', workerId: 'worker-a', conversationId: A.conversation!.conversationId },
    hold: { holdId: 'hld_C', parentExecutionSessionId: 'session-A' },
  });
  // Not yet granted, or ended: the child's session is not the tenure's.
  expect(judgeClaim(child, held, { from: 1100, to: 1900 })).toMatchObject({ verdict: 'disputed', reason: 'attribution_claim_mismatch', via: 'unknown' });
  expect(judgeClaim(child, held, { from: 4500, to: 5000 })).toMatchObject({ verdict: 'disputed', reason: 'attribution_claim_mismatch', via: 'unknown' });
  // A line that names the child as the owner, or any other fact than the parent's tenure, is disputed.
  expect(judgeClaim(claim({ committerSessionId: 'child-C', executionSessionId: 'child-C' }), held, { from: 2500, to: 3000 }).verdict).toBe('disputed');
  expect(judgeClaim(claim({ committerSessionId: 'child-C', epoch: 2 }), held, { from: 2500, to: 3000 }).verdict).toBe('disputed');
  expect(judgeClaim(claim({ committerSessionId: 'child-C', conversationId: B.conversation!.conversationId }), held, { from: 2500, to: 3000 }).verdict).toBe(
    'disputed',
  );
  expect(judgeClaim(claim({ committerSessionId: 'child-D' }), held, { from: 2500, to: 3000 }).verdict).toBe('disputed');
  // The parent's own commit is still the parent's; one without a session id while a child holds is nobody's (either may have made it).
  expect(judgeClaim(claim({}), held, { from: 2500, to: 3000 })).toMatchObject({
    verdict: 'attributed',
    via: 'session',
    recorded: { executionSessionId: 'session-A' },
  });
  expect(judgeClaim(claim({ committerSessionId: null }), held, { from: 2500, to: 3000 })).toMatchObject({
    verdict: 'unknown',
    reason: 'attribution_no_session',
  });
  expect(judgeClaim(claim({ committerSessionId: null }), held, { from: 4500, to: 5000 })).toMatchObject({ verdict: 'attributed', via: 'owner_at_time' });
});
