import {
  checkReclaim,
  decideAcceptHandoff,
  decideClaim,
  decideEndHold,
  decideGrantHold,
  decideHandoff,
  decideLanded,
  decideReclaim,
  decideRelease,
  type Decision,
} from '../../src/domain/decide';
import type { ClaimInput, GrantHoldInput } from '../../src/domain/commands';
import { MAX_HOLDS, parseEvent, type OwnershipEvent } from '../../src/domain/events';
import { decideHoldExpired } from '../../src/domain/hold';
import { applyEvent, OwnershipRecordSchema, type OwnershipRecord } from '../../src/domain/projection';

/** Child holds as pure decisions: a parent's children keep the worktree from being let go under them. */
const exec = (workerId: string) => ({ kind: 'executor' as const, id: `e-${workerId}`, workerId });
const admin = { kind: 'admin' as const, id: 'ops' };
const claim = (session: string, workerId = 'w1'): ClaimInput => ({
  executionSessionId: session,
  runtime: 'claude-code',
  worker: { runId: null, workerId },
  principal: exec(workerId),
  branch: 'wt/x',
});
const base = { ownershipId: 'own_01J00000000000000000000000', repoRoot: '/r', worktreePath: '/r/wt', branch: 'wt/x', hostId: 'h' };
const NOW = '2026-01-01T00:00:00.000Z';
let seq = 0;

/** Applies a decision as the workflow would: every event schema-valid, folded in order. */
function run(r: OwnershipRecord | null, d: Decision): OwnershipRecord {
  if ('code' in d) throw new Error(`refused: ${d.code}`);
  let out = r;
  for (const x of d.events) {
    const e: OwnershipEvent = parseEvent({
      ...base,
      seq: ++seq,
      at: NOW,
      actor: { executionSessionId: x.actorSessionId, principal: x.principal },
      type: x.type,
      data: x.data,
    });
    out = applyEvent(out, e);
  }
  return OwnershipRecordSchema.parse(out);
}
const grant = (holdId: string, child: string, over: Partial<GrantHoldInput> = {}): GrantHoldInput => ({
  executionSessionId: 'parent',
  epoch: 1,
  principal: exec('w1'),
  holdId,
  childExecutionSessionId: child,
  ...over,
});
function twoChildren(): OwnershipRecord {
  let r = run(null, decideClaim(null, claim('parent'), null));
  r = run(r, decideGrantHold(r, grant('h1', 'child-1'), NOW, 60_000));
  return run(r, decideGrantHold(r, grant('h2', 'child-2', { runtime: 'codex-cli' }), NOW, 60_000));
}
const typesOf = (d: Decision) => ('code' in d ? d.code : d.events.map((e) => e.type));

beforeEach(() => {
  seq = 0;
});

test('the owner grants holds under its tenure; a replay grants nothing new; the same id for another child is refused', () => {
  const r = twoChildren();
  expect(r.holds).toEqual([
    { holdId: 'h1', executionSessionId: 'child-1', parentExecutionSessionId: 'parent', epoch: 1, grantedAt: NOW, leaseTtlMs: 60_000, runtime: null },
    expect.objectContaining({ holdId: 'h2', executionSessionId: 'child-2', runtime: 'codex-cli' }),
  ]);
  expect(decideGrantHold(r, grant('h1', 'child-1'), NOW, 60_000)).toEqual({ events: [] });
  expect(decideGrantHold(r, grant('h1', 'child-3'), NOW, 60_000)).toMatchObject({ code: 'invalid_input', details: { field: 'holdId' } });
  expect(decideGrantHold(r, grant('h3', 'child-1'), NOW, 60_000)).toMatchObject({ code: 'invalid_input', details: { field: 'childExecutionSessionId' } });
  expect(decideGrantHold(r, grant('h3', 'parent'), NOW, 60_000)).toMatchObject({ code: 'invalid_input' });
});

test('only the owner, at its epoch and of its worker, grants', () => {
  const r = twoChildren();
  expect(decideGrantHold(r, grant('h3', 'c', { executionSessionId: 'child-1' }), NOW, 1000)).toMatchObject({ code: 'not_owner' });
  expect(decideGrantHold(r, grant('h3', 'c', { epoch: 2 }), NOW, 1000)).toMatchObject({ code: 'stale_epoch' });
  expect(decideGrantHold(r, grant('h3', 'c', { principal: exec('w9') }), NOW, 1000)).toMatchObject({ code: 'worker_mismatch' });
});

test(`at most ${MAX_HOLDS} holds per ownership`, () => {
  let r = run(null, decideClaim(null, claim('parent'), null));
  for (let i = 0; i < MAX_HOLDS; i++) r = run(r, decideGrantHold(r, grant(`h${i}`, `c${i}`), NOW, 1000));
  expect(decideGrantHold(r, grant('one-more', 'c-last'), NOW, 1000)).toMatchObject({ code: 'holds_exhausted', details: { max: MAX_HOLDS } });
});

test("the parent's release is refused naming the children; once they end their holds it is released", () => {
  let r = twoChildren();
  const release = { executionSessionId: 'parent', epoch: 1, principal: exec('w1') };
  expect(decideRelease(r, release)).toMatchObject({
    code: 'holds_live',
    details: {
      children: [
        { holdId: 'h1', executionSessionId: 'child-1' },
        { holdId: 'h2', executionSessionId: 'child-2', runtime: 'codex-cli' },
      ],
    },
  });
  // The child ends its own hold (its session, the epoch it holds under); the parent ends the other.
  r = run(r, decideEndHold(r, { executionSessionId: 'child-1', epoch: 1, principal: exec('w1'), holdId: 'h1' }));
  expect(decideRelease(r, release)).toMatchObject({ code: 'holds_live', details: { children: [{ holdId: 'h2' }] } });
  r = run(r, decideEndHold(r, { executionSessionId: 'parent', epoch: 1, principal: exec('w1'), holdId: 'h2' }));
  expect(run(r, decideRelease(r, release)).state).toBe('released');
});

test('a hold is ended by its child, its parent or an admin with a reason; nobody else', () => {
  const r = twoChildren();
  expect(decideEndHold(r, { executionSessionId: 'stranger', epoch: 1, principal: exec('w1'), holdId: 'h1' })).toMatchObject({ code: 'not_owner' });
  expect(decideEndHold(r, { executionSessionId: 'child-1', epoch: 2, principal: exec('w1'), holdId: 'h1' })).toMatchObject({ code: 'stale_epoch' });
  expect(decideEndHold(r, { executionSessionId: 'x', epoch: 1, principal: exec('w1'), holdId: 'h1', force: true, reason: 'r' })).toMatchObject({
    code: 'force_requires_admin',
  });
  expect(decideEndHold(r, { executionSessionId: 'x', epoch: 1, principal: admin, holdId: 'h1', force: true })).toMatchObject({ code: 'force_requires_reason' });
  const forced = decideEndHold(r, { executionSessionId: 'ops-session', epoch: 1, principal: admin, holdId: 'h1', force: true, reason: 'child wedged' });
  expect(forced).toMatchObject({ events: [{ type: 'ownership.hold_ended', principal: 'admin:ops', data: { reason: 'forced', detail: 'child wedged' } }] });
  expect(decideEndHold(r, { executionSessionId: 'child-1', epoch: 1, principal: exec('w1'), holdId: 'nope' })).toMatchObject({ code: 'not_found' });
});

test("a child's lease ends its hold alone: the parent stays active and keeps its epoch", () => {
  let r = twoChildren();
  r = run(r, { events: decideHoldExpired(r, 'h2') });
  expect(r).toMatchObject({ state: 'active', epoch: 1, owner: { executionSessionId: 'parent' } });
  expect(r.holds?.map((h) => h.holdId)).toEqual(['h1']);
  expect(decideHoldExpired(r, 'h2')).toEqual([]);
});

test("the parent's handoff ends every hold with its tenure, recorded before the new owner's claim", () => {
  let r = twoChildren();
  r = run(
    r,
    decideHandoff(r, { executionSessionId: 'parent', epoch: 1, principal: exec('w1'), toExecutionSessionId: 'next' }, 'hf1', '2026-01-01T01:00:00.000Z'),
  );
  const accept = decideAcceptHandoff(
    r,
    { handoffId: 'hf1', executionSessionId: 'next', runtime: 'x', worker: { runId: null, workerId: 'w1' }, principal: exec('w1') },
    null,
  );
  expect(typesOf(accept)).toEqual(['ownership.hold_ended', 'ownership.hold_ended', 'ownership.claimed']);
  expect(accept).toMatchObject({ events: [{ data: { reason: 'epoch_ended' } }, { data: { reason: 'epoch_ended' } }, {}] });
  r = run(r, accept);
  expect(r).toMatchObject({ epoch: 2, holds: [] });
  // The children's old standing is gone: they cannot end, nor be granted under, the ended epoch.
  expect(decideEndHold(r, { executionSessionId: 'child-1', epoch: 1, principal: exec('w1'), holdId: 'h1' })).toMatchObject({ code: 'not_found' });
});

test("a dead parent's children keep the worktree from a reclaim; an admin's forced reclaim ends their holds", () => {
  const r = twoChildren();
  const input = { executionSessionId: 'taker', runtime: 'x', worker: { runId: null, workerId: 'w2' }, principal: exec('w2') };
  const stale = run(r, {
    events: [
      {
        type: 'ownership.stale',
        actorSessionId: null,
        principal: 'system:liveness',
        data: { executionSessionId: 'parent', epoch: 1, verdict: 'dead', detail: null },
      },
    ],
  });
  expect(stale.holds).toHaveLength(2);
  expect(checkReclaim(stale, input, { status: 'stale', verdict: 'dead' })).toMatchObject({ code: 'holds_live', details: { children: [{}, {}] } });
  const forced = decideReclaim(stale, { ...input, principal: admin, force: true, reason: 'children wedged' }, { status: 'stale', verdict: 'dead' }, null);
  expect(typesOf(forced)).toEqual(['ownership.hold_ended', 'ownership.hold_ended', 'ownership.reclaimed']);
  expect(run(stale, forced)).toMatchObject({ epoch: 2, holds: [] });
});

test('a landing ends the holds with the tenure', () => {
  let r = twoChildren();
  const landed = decideLanded(r, {
    sourceHead: 'a'.repeat(40),
    landedBranch: 'main',
    landedHead: 'b'.repeat(40),
    landedAt: NOW,
    principal: { kind: 'landing', id: 'l' },
  });
  expect(typesOf(landed)).toEqual(['ownership.hold_ended', 'ownership.hold_ended', 'ownership.landed']);
  r = run(r, landed);
  expect(r).toMatchObject({ state: 'landed', holds: [] });
});

test('a record folded before holds has none, and parses', () => {
  const r = run(null, decideClaim(null, claim('parent'), null));
  expect(r.holds).toBeUndefined();
  expect(decideRelease(r, { executionSessionId: 'parent', epoch: 1, principal: exec('w1') })).toMatchObject({ events: [{ type: 'ownership.released' }] });
});
