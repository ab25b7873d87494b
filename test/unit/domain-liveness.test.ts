import type { ClaimInput } from '../../src/domain/commands';
import { decideClaim, decideRelease } from '../../src/domain/decide';
import type { EventDraft, OwnershipEvent } from '../../src/domain/events';
import { decideHeartbeat, decideStale, livenessAfter, livenessOfRecord } from '../../src/domain/liveness';
import { applyEvent, type OwnershipRecord } from '../../src/domain/projection';

/** The workflow's liveness rules, pure: which heartbeat counts and is logged, when a verdict marks stale. */
const OWNERSHIP = 'own_01J00000000000000000000000';
const exec = { kind: 'executor' as const, id: 'e-w1', workerId: 'w1' };
const claim: ClaimInput = { executionSessionId: 'a', runtime: 'codex-cli', worker: { runId: null, workerId: 'w1' }, principal: exec, branch: 'wt/x' };
const base = { ownershipId: OWNERSHIP, repoRoot: '/r', worktreePath: '/r/wt', branch: 'wt/x', hostId: 'h' };

function apply(r: OwnershipRecord | null, drafts: EventDraft[]): OwnershipRecord {
  let out = r;
  for (const d of drafts) {
    const e = {
      ...base,
      seq: (out?.seq ?? 0) + 1,
      at: '2026-01-01T00:00:00.000Z',
      actor: { executionSessionId: d.actorSessionId, principal: d.principal },
      type: d.type,
      data: d.data,
    } as OwnershipEvent;
    out = applyEvent(out, e);
  }
  return out!;
}
const events = (d: ReturnType<typeof decideClaim>) => ('code' in d ? [] : d.events);
const claimed = () => apply(null, events(decideClaim(null, claim, null)));
const clock = { status: 'live' as const, nowMs: 10_000, lastLoggedMs: 5_000, logIntervalMs: 300_000 };

test('a heartbeat of the current tenure is accepted; it is logged once per interval, and at once when it revives', () => {
  const r = claimed();
  expect(decideHeartbeat(r, OWNERSHIP, { executionSessionId: 'a', epoch: 1 }, clock)).toEqual({ accepted: true, event: null });
  const periodic = decideHeartbeat(r, OWNERSHIP, { executionSessionId: 'a', epoch: 1 }, { ...clock, nowMs: 305_000 });
  expect(periodic).toMatchObject({ accepted: true, event: { type: 'ownership.heartbeat', data: { transition: 'periodic' } } });
  const revived = decideHeartbeat(r, OWNERSHIP, { executionSessionId: 'a', epoch: 1 }, { ...clock, status: 'silent' });
  expect(revived).toMatchObject({ accepted: true, event: { data: { transition: 'revived' } } });
});

test('a heartbeat of another session, epoch or lifecycle, or on a free worktree, counts for nothing', () => {
  const r = claimed();
  expect(decideHeartbeat(r, OWNERSHIP, { executionSessionId: 'b', epoch: 1 }, clock)).toEqual({ accepted: false });
  expect(decideHeartbeat(r, OWNERSHIP, { executionSessionId: 'a', epoch: 2 }, clock)).toEqual({ accepted: false });
  expect(decideHeartbeat(r, OWNERSHIP, { executionSessionId: 'a', epoch: 1, ownershipId: 'own_01J00000000000000000000001' }, clock)).toEqual({
    accepted: false,
  });
  const released = decideRelease(r, { executionSessionId: 'a', epoch: 1, principal: exec });
  expect(decideHeartbeat(apply(r, 'code' in released ? [] : released.events), OWNERSHIP, { executionSessionId: 'a', epoch: 1 }, clock)).toEqual({
    accepted: false,
  });
  expect(decideHeartbeat(null, OWNERSHIP, { executionSessionId: 'a', epoch: 1 }, clock)).toEqual({ accepted: false });
});

test('only a dead verdict on the tenure asked about, still active, marks it stale; liveness follows the events', () => {
  const r = claimed();
  expect(decideStale(r, { executionSessionId: 'a', epoch: 1 }, 'alive', null)).toEqual([]);
  expect(decideStale(r, { executionSessionId: 'a', epoch: 0 }, 'dead', null)).toEqual([]);
  const stale = decideStale(r, { executionSessionId: 'a', epoch: 1 }, 'dead', 'gone');
  expect(stale).toMatchObject([{ type: 'ownership.stale', data: { executionSessionId: 'a', epoch: 1, detail: 'gone' } }]);
  const after = apply(r, stale);
  expect(decideStale(after, { executionSessionId: 'a', epoch: 1 }, 'dead', null)).toEqual([]);
  const e = { ...base, seq: 2, at: 't', actor: { executionSessionId: null, principal: null }, ...stale[0]! } as unknown as OwnershipEvent;
  expect(livenessAfter(e, after)).toEqual({ status: 'stale', verdict: 'dead' });
  const hb = decideHeartbeat(after, OWNERSHIP, { executionSessionId: 'a', epoch: 1 }, clock);
  expect(hb).toMatchObject({ accepted: true, event: { data: { transition: 'revived' } } });
});

test('a view moves a memo that trails the log by the events it has not seen: stale carries its verdict, a new owner its lease', () => {
  const r = claimed();
  const memo = { seq: 1, liveness: { status: 'live' as const, verdict: null, lastHeartbeatAt: 't0', checkedAt: null, leaseTtlMs: 3000 } };
  const stale = decideStale(r, { executionSessionId: 'a', epoch: 1 }, 'dead', 'gone');
  const after = apply(r, stale);
  const e = { ...base, seq: 2, at: 't1', actor: { executionSessionId: null, principal: null }, ...stale[0]! } as unknown as OwnershipEvent;
  expect(livenessOfRecord(memo, [e], after)).toEqual({ status: 'stale', verdict: 'dead', lastHeartbeatAt: 't0', checkedAt: 't1', leaseTtlMs: 3000 });
  // a memo already at the record's seq is the view; events it has seen move nothing
  expect(livenessOfRecord({ ...memo, seq: 2 }, [e], after)).toEqual(memo.liveness);
  // no memo: null, but a stale record still says it was proven dead
  expect(livenessOfRecord(null, [], r)).toBeNull();
  expect(livenessOfRecord(null, [], after)).toMatchObject({ status: 'stale', verdict: 'dead' });
  // a reclaim's owner is live, heard at the reclaim
  const reclaim = { ...e, seq: 3, at: 't2', type: 'ownership.reclaimed' } as unknown as OwnershipEvent;
  expect(livenessOfRecord(memo, [e, reclaim], { ...after, seq: 3, state: 'active' })).toMatchObject({ status: 'live', verdict: null, lastHeartbeatAt: 't2' });
});
