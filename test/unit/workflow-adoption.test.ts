import { decideClaim } from '../../src/domain/decide';
import type { EventDraft, OwnershipEvent } from '../../src/domain/events';
import type { Principal } from '../../src/domain/identity';
import { applyEvent, project, type OwnershipRecord } from '../../src/domain/projection';
import { adopt } from '../../src/workflows/adoption';

/**
 * The log wins (adoption.ts): a retried workflow task that meets other events at its seqs adopts
 * them; when they are other decisions, its own events from there on are lost and re-decided.
 */

const OWN = 'own_01JAAAAAAAAAAAAAAAAAAAAAAA';
const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();
const principal = (workerId: string): Principal => ({ kind: 'executor', id: `e-${workerId}`, workerId });

function stamp(r: OwnershipRecord | null, d: EventDraft, t: number): OwnershipEvent {
  return {
    ownershipId: OWN,
    seq: (r?.seq ?? 0) + 1,
    at: at(t),
    actor: { executionSessionId: d.actorSessionId, principal: d.principal },
    repoRoot: '/r',
    worktreePath: '/r/w',
    branch: 'wt/a',
    hostId: 'h',
    type: d.type,
    data: d.data,
  } as OwnershipEvent;
}

function claim(r: OwnershipRecord | null, session: string, worker: string, t: number): OwnershipEvent {
  const d = decideClaim(
    r,
    { executionSessionId: session, runtime: 'x', worker: { workerId: worker, runId: null }, principal: principal(worker), branch: 'wt/a' },
    null,
  );
  if ('code' in d) throw new Error(d.code);
  return stamp(r, d.events[0]!, t);
}

test('the same decision with another clock is adopted; nothing is lost', () => {
  const mine = claim(null, 's1', 'w1', 1);
  const recorded = { ...mine, at: at(0) };
  const a = adopt(null, applyEvent(null, mine), [mine], [recorded], []);
  expect(a.lost).toEqual([]);
  expect(a.durableRecord).toEqual(project([recorded]));
  expect(a.record).toEqual(project([recorded]));
});

test('another decision at our seq: our event and everything after it are lost, the record is the log', () => {
  const theirs = claim(null, 's2', 'w2', 0);
  const mine = claim(null, 's1', 'w1', 1);
  const rec = applyEvent(null, mine);
  const hb = stamp(
    rec,
    { type: 'ownership.heartbeat', actorSessionId: 's1', principal: null, data: { executionSessionId: 's1', epoch: 1, transition: 'periodic' } },
    2,
  );
  const a = adopt(null, applyEvent(rec, hb), [mine], [theirs], [hb]);
  expect(a.lost).toEqual([mine, hb]);
  expect(a.pending).toEqual([]);
  expect(a.record?.owner?.executionSessionId).toBe('s2');
  expect(a.durableRecord).toEqual(project([theirs]));
  // Re-deciding the lost claim on the adopted record refuses it: the answer is about the log.
  const again = decideClaim(
    a.record,
    { executionSessionId: 's1', runtime: 'x', worker: { workerId: 'w1', runId: null }, principal: principal('w1'), branch: 'wt/a' },
    null,
  );
  expect('code' in again && again.code).toBe('worktree_owned');
});

test('the log tail beyond our batch is folded in, so durable state matches PostgreSQL', () => {
  const c1 = claim(null, 's1', 'w1', 0);
  const r1 = applyEvent(null, c1);
  const rel = stamp(
    r1,
    { type: 'ownership.released', actorSessionId: 's1', principal: 'executor:e-w1', data: { executionSessionId: 's1', epoch: 1, reason: null } },
    1,
  );
  const r2 = applyEvent(r1, rel);
  const theirs = claim(r2, 's3', 'w3', 2);
  const tail = stamp(
    applyEvent(r2, theirs),
    { type: 'ownership.heartbeat', actorSessionId: 's3', principal: null, data: { executionSessionId: 's3', epoch: 2, transition: 'periodic' } },
    3,
  );
  const mine = claim(r2, 's2', 'w2', 4);
  const a = adopt(r2, applyEvent(r2, mine), [mine], [theirs, tail], []);
  expect(a.canonical).toEqual([theirs, tail]);
  expect(a.durableRecord?.seq).toBe(4);
  expect(a.lost).toEqual([mine]);
});
