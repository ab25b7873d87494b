/**
 * The removal rule (src/domain/removal.ts): every branch of the decision, each refusal with the
 * reason code naming what would be lost, and the receipt of an allowed removal.
 */
import { decideRemoval, LISTED_SHAS, mergeOwnership, removedReceipt, type OwnershipFact, type RemovalFacts } from '../../src/domain/removal';
import { EventDataSchemas } from '../../src/domain/events';

const sha = (n: number) => n.toString(16).padStart(40, '0');
const HEAD = sha(0xabc);

const ownership = (o: Partial<OwnershipFact> = {}): OwnershipFact => ({
  ownershipId: 'own_01JRULE',
  state: 'released',
  executionSessionId: 'sess-a',
  source: 'projection',
  ...o,
});

function facts(f: Partial<RemovalFacts> = {}): RemovalFacts {
  return {
    worktreePath: '/w/x',
    branch: 'wt/x',
    head: HEAD,
    ownership: ownership(),
    callerIsOwner: false,
    liveness: 'unknown',
    headLandedOn: 'refs/heads/main',
    accounted: [],
    unlanded: [],
    unlandedTruncated: false,
    dirtyFiles: [],
    unpreservable: [],
    snapshot: { status: 'not_needed' },
    ...f,
  };
}

const codes = (f: RemovalFacts) => {
  const d = decideRemoval(f);
  return d.verdict === 'refuse' ? d.refusals.map((r) => r.code) : [];
};

describe('who may remove', () => {
  test.each(['released', 'landed', 'closed'])('nobody holds a %s worktree: removed', (state) => {
    expect(decideRemoval(facts({ ownership: ownership({ state }) })).verdict).toBe('remove');
  });

  test('no ownership known at all: removed when nothing would be lost', () => {
    expect(decideRemoval(facts({ ownership: null })).verdict).toBe('remove');
  });

  test.each(['active', 'handoff_pending', 'stale', 'submitted', 'provisional'])(
    'a %s ownership holds it: another caller is refused, owner_alive when the owner is alive',
    (state) => {
      expect(codes(facts({ ownership: ownership({ state }), liveness: 'alive' }))).toEqual(['owner_alive']);
      expect(codes(facts({ ownership: ownership({ state }), liveness: 'unknown' }))).toEqual(['worktree_owned']);
      expect(codes(facts({ ownership: ownership({ state }), liveness: 'dead' }))).toEqual(['worktree_owned']);
    },
  );

  test('the owner itself may remove its held worktree (the other checks still apply)', () => {
    expect(decideRemoval(facts({ ownership: ownership({ state: 'active' }), callerIsOwner: true, liveness: 'alive' })).verdict).toBe('remove');
    expect(codes(facts({ ownership: ownership({ state: 'active' }), callerIsOwner: true, unlanded: [sha(1)] }))).toEqual(['unlanded_commits']);
  });

  test('the refusal names the holder and where its state was read, never more', () => {
    const d = decideRemoval(facts({ ownership: ownership({ state: 'active', source: 'both' }), liveness: 'alive' }));
    expect(d.verdict === 'refuse' && d.refusal.details).toEqual({
      ownershipId: 'own_01JRULE',
      executionSessionId: 'sess-a',
      state: 'active',
      liveness: 'alive',
      source: 'both',
    });
  });
});

describe('what would be lost', () => {
  test('unlanded commits refuse with their shas and count; a long list is cut, its count is not', () => {
    const many = Array.from({ length: LISTED_SHAS + 5 }, (_, i) => sha(i + 1));
    const d = decideRemoval(facts({ unlanded: many, unlandedTruncated: true }));
    expect(d.verdict).toBe('refuse');
    if (d.verdict !== 'refuse') return;
    expect(d.refusal.code).toBe('unlanded_commits');
    expect(d.refusal.details).toEqual({ count: many.length, truncated: true, commits: many.slice(0, LISTED_SHAS) });
    expect(d.refusal.message).toContain(`${many.length}+ commits`);
  });

  test('dirty files are removed only with a snapshot: taken or (dry run) planned', () => {
    const dirty = { dirtyFiles: ['a.txt', 'new.txt'] };
    const taken = decideRemoval(facts({ ...dirty, snapshot: { status: 'taken', ref: 'refs/overdeck/wip/own_01JRULE/tree-x', sha: sha(9) } }));
    expect(taken.verdict === 'remove' && taken.receipt.preserved).toEqual([{ ref: 'refs/overdeck/wip/own_01JRULE/tree-x', sha: sha(9), files: 2 }]);
    const planned = decideRemoval(facts({ ...dirty, snapshot: { status: 'planned', ownershipId: 'own_01JRULE' } }));
    expect(planned.verdict === 'remove' && planned.receipt).toMatchObject({ preserved: [], snapshotPlanned: true });
  });

  test('dirty files with no snapshot possible: dirty_files; with a failed one: snapshot_failed', () => {
    const dirty = { dirtyFiles: ['a.txt'] };
    expect(codes(facts({ ...dirty, snapshot: { status: 'unavailable', why: 'no ownership' } }))).toEqual(['dirty_files']);
    expect(codes(facts({ ...dirty, snapshot: { status: 'failed', detail: 'git_failed' } }))).toEqual(['snapshot_failed']);
    // Dirty files but no snapshot asked for: refused, never a silent loss.
    expect(codes(facts({ ...dirty, snapshot: { status: 'not_needed' } }))).toEqual(['dirty_files']);
  });

  test('content no snapshot can hold (a nested repository) refuses even with a snapshot taken', () => {
    const d = decideRemoval(
      facts({ dirtyFiles: ['a.txt'], unpreservable: ['vendor/'], snapshot: { status: 'taken', ref: 'refs/overdeck/wip/o/tree-y', sha: sha(3) } }),
    );
    expect(d.verdict === 'refuse' && d.refusal).toMatchObject({ code: 'dirty_files', details: { files: ['vendor/'], unpreservable: true } });
  });

  test('every reason is listed (the sweeper shows them all); the first is the answer', () => {
    const d = decideRemoval(
      facts({
        ownership: ownership({ state: 'stale' }),
        unlanded: [sha(1)],
        dirtyFiles: ['a'],
        snapshot: { status: 'failed', detail: 'x' },
      }),
    );
    expect(d.verdict === 'refuse' && [d.refusal.code, ...d.refusals.map((r) => r.code)]).toEqual([
      'worktree_owned',
      'worktree_owned',
      'unlanded_commits',
      'snapshot_failed',
    ]);
  });
});

test('the receipt says what was kept where and how each commit was found landed', () => {
  const accounted = [
    { sha: sha(1), method: 'patch_id' as const, via: sha(11) },
    { sha: sha(2), method: 'squash' as const, via: sha(12) },
  ];
  const d = decideRemoval(facts({ accounted, headLandedOn: null, ownership: ownership({ state: 'landed' }) }));
  expect(d).toEqual({
    verdict: 'remove',
    receipt: {
      worktreePath: '/w/x',
      branch: 'wt/x',
      head: HEAD,
      ownershipId: 'own_01JRULE',
      ownershipState: 'landed',
      preserved: [],
      snapshotPlanned: false,
      headLandedOn: null,
      accounted,
    },
  });
});

test('malformed facts are refused by the schema, not decided', () => {
  expect(() => decideRemoval({ ...facts(), unlanded: ['not-a-sha'] })).toThrow();
});

describe('mergeOwnership: the local projection and the service, the held one wins', () => {
  const local = ownership({ state: 'active', source: 'projection' });
  const durable = ownership({ state: 'released', source: 'service' });

  test('one source alone is that source', () => {
    expect(mergeOwnership(local, null)).toEqual(local);
    expect(mergeOwnership(null, durable)).toEqual(durable);
    expect(mergeOwnership(null, null)).toBeNull();
  });

  test('the same ownership from both: held if either holds it', () => {
    expect(mergeOwnership(local, durable)).toEqual({ ...local, source: 'both' });
    expect(mergeOwnership(ownership({ state: 'landed' }), ownership({ state: 'submitted', source: 'service' }))).toMatchObject({
      state: 'submitted',
      source: 'both',
    });
  });

  test("the same ownership from both: a child hold either side names stays (the projection's alone, the service's alone, both once)", () => {
    const a = { holdId: 'hld_a', executionSessionId: 'child-a', runtime: null };
    const b = { holdId: 'hld_b', executionSessionId: 'child-b', runtime: 'codex-cli' };
    const active = ownership({ state: 'active', source: 'service' });
    expect(mergeOwnership({ ...local, holds: [a] }, active)?.holds).toEqual([a]);
    expect(mergeOwnership(local, { ...active, holds: [b] })?.holds).toEqual([b]);
    expect(mergeOwnership({ ...local, holds: [a, { ...b, runtime: null }] }, { ...active, holds: [b] })?.holds).toEqual([a, b]);
    expect(mergeOwnership(local, active)?.holds).toBeUndefined();
    expect(decideRemoval({ ...facts(), callerIsOwner: true, ownership: mergeOwnership({ ...local, holds: [a] }, active) })).toMatchObject({
      verdict: 'refuse',
      refusal: { code: 'holds_live' },
    });
  });

  test('two different ownerships: a held one wins, else the service (the newer record)', () => {
    const other = ownership({ ownershipId: 'own_OTHER', state: 'active', source: 'service' });
    expect(mergeOwnership(ownership({ state: 'released' }), other)).toEqual(other);
    expect(mergeOwnership(local, ownership({ ownershipId: 'own_OTHER', state: 'closed', source: 'service' }))).toEqual(local);
    expect(mergeOwnership(ownership({ state: 'landed' }), ownership({ ownershipId: 'own_OTHER', state: 'closed', source: 'service' }))).toMatchObject({
      ownershipId: 'own_OTHER',
    });
  });
});

describe('the receipt a worktree_removed event keeps', () => {
  const full = (c: string) => c.repeat(40);
  const receipt = {
    worktreePath: '/w/x',
    branch: 'wt/x',
    head: full('a'),
    ownershipId: 'own_1',
    ownershipState: 'landed',
    preserved: Array.from({ length: 10 }, (_, i) => ({ ref: `refs/overdeck/wip/own_1/tree-${i}`, sha: full('b'), files: i })),
    snapshotPlanned: false,
    headLandedOn: null,
    accounted: [
      { sha: full('c'), method: 'squash' as const, via: full('d') },
      { sha: full('e'), method: 'squash' as const, via: full('d') },
      { sha: full('f'), method: 'patch_id' as const, via: full('0') },
    ],
  };

  it('counts commits per method, keeps at most 8 snapshots and the branch, and is valid event data', () => {
    const kept = removedReceipt(receipt, 'deleted');
    expect(kept).toEqual({
      head: full('a'),
      headLandedOn: null,
      accounted: { squash: 2, patch_id: 1 },
      preserved: receipt.preserved.slice(0, 8),
      branch: 'deleted',
    });
    expect(EventDataSchemas['ownership.worktree_removed'].parse({ reason: null, receipt: kept })).toEqual({ reason: null, receipt: kept });
    // An event from before receipts (only a reason) is still valid.
    expect(EventDataSchemas['ownership.worktree_removed'].parse({ reason: 'told' })).toEqual({ reason: 'told' });
  });
});
