import { decideClaim, decideLanded, decideReclaim, decideRelease, checkReclaim, decideHandoffTimeout, decideConversationBound } from '../../src/domain/decide';
import type { ClaimInput } from '../../src/domain/commands';
import type { OwnershipEvent } from '../../src/domain/events';
import { applyEvent, project, type OwnershipRecord } from '../../src/domain/projection';
import { canonicalConversation } from '../../src/domain/identity';

/** The state machine as pure decisions: microseconds per rule, no Temporal needed. */
const exec = (workerId: string) => ({ kind: 'executor' as const, id: `e-${workerId}`, workerId });
const claim = (session: string, workerId = 'w1'): ClaimInput => ({
  executionSessionId: session,
  runtime: 'codex-cli',
  worker: { runId: null, workerId },
  principal: exec(workerId),
  branch: 'wt/x',
});
const base = { ownershipId: 'own_01J00000000000000000000000', repoRoot: '/r', worktreePath: '/r/wt', branch: 'wt/x', hostId: 'h' };

let seq = 0;
function stamp(
  drafts: { type: string; data: unknown; actorSessionId: string | null; principal: string | null }[],
  at = '2026-01-01T00:00:00.000Z',
): OwnershipEvent[] {
  return drafts.map(
    (d) => ({ ...base, seq: ++seq, at, actor: { executionSessionId: d.actorSessionId, principal: d.principal }, type: d.type, data: d.data }) as OwnershipEvent,
  );
}
function run(r: OwnershipRecord | null, d: ReturnType<typeof decideClaim>): OwnershipRecord {
  if ('code' in d) throw new Error(d.code);
  let out = r;
  for (const e of stamp(d.events)) out = applyEvent(out, e);
  return out!;
}

beforeEach(() => {
  seq = 0;
});

test('first claim is epoch 1; a replay by the owner appends nothing; another session is refused with the owner summary', () => {
  const r = run(null, decideClaim(null, claim('a'), null));
  expect(r).toMatchObject({ state: 'active', epoch: 1, seq: 1 });
  expect(decideClaim(r, claim('a'), null)).toEqual({ events: [] });
  const refused = decideClaim(r, claim('b', 'w2'), null);
  expect(refused).toMatchObject({ code: 'worktree_owned', details: { owner: { executionSessionId: 'a', epoch: 1 } } });
});

test('an executor may only claim for its own worker', () => {
  expect(decideClaim(null, { ...claim('a'), principal: exec('someone-else') }, null)).toMatchObject({ code: 'worker_mismatch' });
  expect(decideClaim(null, { ...claim('a'), principal: { kind: 'reader', id: 'r' } }, null)).toMatchObject({ code: 'forbidden' });
});

test('release is fenced by session and epoch, and a released worktree is claimed at epoch + 1', () => {
  const r = run(null, decideClaim(null, claim('a'), null));
  expect(decideRelease(r, { executionSessionId: 'a', epoch: 2, principal: exec('w1') })).toMatchObject({ code: 'stale_epoch' });
  expect(decideRelease(r, { executionSessionId: 'b', epoch: 1, principal: exec('w1') })).toMatchObject({ code: 'not_owner' });
  const released = run(r, decideRelease(r, { executionSessionId: 'a', epoch: 1, principal: exec('w1') }));
  expect(released.state).toBe('released');
  const next = run(released, decideClaim(released, claim('b', 'w2'), null));
  expect(next).toMatchObject({ state: 'active', epoch: 2, owner: { executionSessionId: 'b' } });
  expect(next.lineage.map((l) => l.via)).toEqual(['bind', 'after_release']);
});

test('reclaim needs proof of death, or an admin force with a reason', () => {
  const r = run(null, decideClaim(null, claim('a'), null));
  const input = { executionSessionId: 'b', runtime: 'x', worker: { runId: null, workerId: 'w2' }, principal: exec('w2') };
  expect(checkReclaim(r, input, { status: 'live', verdict: null })).toMatchObject({ code: 'owner_alive' });
  expect(checkReclaim(r, input, { status: 'silent', verdict: 'alive' })).toMatchObject({ code: 'owner_alive' });
  expect(checkReclaim(r, input, { status: 'silent', verdict: 'unknown' })).toMatchObject({ code: 'liveness_unknown' });
  // Silent past its lease while the authority is still being asked (a host cut off): not proven alive either.
  expect(checkReclaim(r, input, { status: 'silent', verdict: null })).toMatchObject({ code: 'liveness_unknown' });
  expect(checkReclaim(r, { ...input, force: true, reason: 'x' }, { status: 'silent', verdict: 'unknown' })).toMatchObject({ code: 'force_requires_admin' });
  expect(checkReclaim(r, { ...input, principal: { kind: 'admin', id: 'ops' }, force: true }, { status: 'silent', verdict: 'unknown' })).toMatchObject({
    code: 'force_requires_reason',
  });
  expect(
    checkReclaim(r, { ...input, principal: { kind: 'admin', id: 'ops' }, force: true, reason: 'host lost' }, { status: 'silent', verdict: 'unknown' }),
  ).toBeNull();
  const stale = applyEvent(
    r,
    stamp([
      { type: 'ownership.stale', actorSessionId: null, principal: 'system', data: { executionSessionId: 'a', epoch: 1, verdict: 'dead', detail: null } },
    ])[0],
  );
  expect(checkReclaim(stale, input, { status: 'stale', verdict: 'dead' })).toBeNull();
});

test('a forced reclaim replayed is answered as a replay; the same without a reason is refused, never a replay', () => {
  const r = run(null, decideClaim(null, claim('a'), null));
  const admin = { kind: 'admin' as const, id: 'ops' };
  const forced = { executionSessionId: 'b', runtime: 'x', worker: { runId: null, workerId: 'w2' }, principal: admin, force: true, reason: 'host lost' };
  const took = run(r, decideReclaim(r, forced, { status: 'silent', verdict: 'unknown' }, null));
  expect(took.owner?.executionSessionId).toBe('b');
  expect(decideReclaim(took, forced, { status: 'live', verdict: null }, null)).toEqual({ events: [] });
  const { reason: _dropped, ...withoutReason } = forced;
  expect(decideReclaim(took, withoutReason, { status: 'live', verdict: null }, null)).toMatchObject({ code: 'force_requires_reason' });
});

test('landing is idempotent on the landed head and only for landing or admin principals', () => {
  const r = run(null, decideClaim(null, claim('a'), null));
  const landed = {
    sourceHead: 'a'.repeat(40),
    landedBranch: 'main',
    landedHead: 'b'.repeat(40),
    landedAt: '2026-01-01T00:00:00.000Z',
    principal: { kind: 'landing' as const, id: 'l' },
  };
  expect(decideLanded(r, { ...landed, principal: exec('w1') })).toMatchObject({ code: 'forbidden' });
  const after = run(r, decideLanded(r, landed));
  expect(after.state).toBe('landed');
  expect(decideLanded(after, landed)).toEqual({ events: [] });
  expect(after.landings[0]).toMatchObject({ executionSessionId: 'a', landedHead: 'b'.repeat(40) });
});

test('a handoff past its expiry falls back to the owner; before it, nothing happens', () => {
  const r = run(null, decideClaim(null, claim('a'), null));
  const pending = applyEvent(
    r,
    stamp([
      {
        type: 'ownership.handoff_started',
        actorSessionId: 'a',
        principal: null,
        data: { handoffId: 'hof_1', fromExecutionSessionId: 'a', toExecutionSessionId: 'b', reason: null, expiresAt: '2026-01-01T00:10:00.000Z' },
      },
    ])[0],
  );
  expect(decideHandoffTimeout(pending, '2026-01-01T00:09:59.000Z')).toEqual({ events: [] });
  const back = run(pending, decideHandoffTimeout(pending, '2026-01-01T00:10:00.000Z'));
  expect(back).toMatchObject({ state: 'active', handoff: null, owner: { executionSessionId: 'a' } });
});

test('a conversation observed after the claim fills an unknown one, never replaces a known one', () => {
  const conv = canonicalConversation({
    conversationId: '6f1c2a34-9b7d-4e21-8c55-0d3e4f5a6b7c',
    conversationUrl: 'https://chatgpt.com/c/6f1c2a34-9b7d-4e21-8c55-0d3e4f5a6b7c',
    observedAt: '2026-01-01T00:00:00.000Z',
  });
  if ('code' in conv) throw new Error('bad fixture');
  const r = run(null, decideClaim(null, claim('a'), null));
  expect(decideConversationBound(r, 'other-worker', conv)).toEqual({ events: [] });
  const bound = run(r, decideConversationBound(r, 'w1', conv));
  expect(bound.owner!.conversation!.conversationId).toBe(conv.conversationId);
  expect(decideConversationBound(bound, 'w1', { ...conv, conversationId: '11111111-1111-4111-8111-111111111111' })).toEqual({ events: [] });
});

test('a newer title of the same conversation is recorded (identity, URL and observation time kept); the same title or no title records nothing', () => {
  const conv = canonicalConversation({
    conversationId: '6f1c2a34-9b7d-4e21-8c55-0d3e4f5a6b7c',
    conversationUrl: 'https://chatgpt.com/c/6f1c2a34-9b7d-4e21-8c55-0d3e4f5a6b7c',
    title: 'Old',
    observedAt: '2026-01-01T00:00:00.000Z',
  });
  if ('code' in conv) throw new Error('bad fixture');
  const claimed = run(null, decideClaim(null, claim('a'), null));
  const r = run(claimed, decideConversationBound(claimed, 'w1', conv));
  expect(decideConversationBound(r, 'w1', conv)).toEqual({ events: [] });
  expect(decideConversationBound(r, 'w1', { ...conv, title: null })).toEqual({ events: [] });
  const renamed = { ...conv, title: 'New', observedAt: '2026-01-01T00:05:00.000Z', conversationUrl: 'https://chatgpt.com/c/other' };
  expect(decideConversationBound(r, 'w1', renamed, { refreshTitle: false })).toEqual({ events: [] });
  const after = run(r, decideConversationBound(r, 'w1', renamed));
  expect(after.owner!.conversation).toEqual({ ...conv, title: 'New' });
  expect(after.lineage.at(-1)!.conversationId).toBe(conv.conversationId);
});

test('the reducer refuses a gap in the sequence', () => {
  const d = decideClaim(null, claim('a'), null);
  if ('code' in d) throw new Error(d.code);
  const [claimed] = stamp(d.events);
  const plan = stamp([{ type: 'ownership.plan_bound', actorSessionId: 'a', principal: null, data: { lane: 'l', planRef: null, requestId: null } }])[0];
  expect(project([claimed, plan])?.seq).toBe(2);
  expect(() => project([claimed, { ...plan, seq: 3 }])).toThrow(/sequence gap/);
});
