import { decideRemoval, type RemovalFacts } from '../../src/domain/removal';
import { standingOf } from '../../src/domain/tenure';
import { holdTenureHashWords, holdTenureSecret, tenureHashWords, tenureSecret, tenureSecretHash } from '../../src/keys/tenure';

/** Child holds' standing in a worktree (src/domain/tenure.ts standingOf) and in the removal rule (holds_live). */
const key = new Uint8Array(32).fill(7);
const other = new Uint8Array(32).fill(9);
const owner = { ownershipId: 'own_1', epoch: 3, executionSessionId: 'parent' };
const child = { ownershipId: 'own_1', epoch: 3, holdId: 'hld_a', executionSessionId: 'child-a' };
const projected = {
  owner: { executionSessionId: 'parent', tenureHash: tenureHashWords([key, other], owner) },
  holds: [{ holdId: 'hld_a', executionSessionId: 'child-a', tenureHash: holdTenureHashWords([key, other], child) }],
};

test('the owner passes as owner, the child as the child of its hold; neither secret passes for the other', () => {
  const ownerHash = tenureSecretHash(tenureSecret(key, owner));
  const childHash = tenureSecretHash(holdTenureSecret(key, child));
  expect(standingOf(projected, 'parent', ownerHash)).toEqual({ as: 'owner' });
  expect(standingOf(projected, 'child-a', childHash)).toEqual({ as: 'child', holdId: 'hld_a' });
  // A key rotated to second still proves.
  expect(standingOf(projected, 'child-a', tenureSecretHash(holdTenureSecret(other, child)))).toEqual({ as: 'child', holdId: 'hld_a' });
  expect(standingOf(projected, 'child-a', ownerHash)).toBeNull();
  expect(standingOf(projected, 'parent', childHash)).toBeNull();
  expect(standingOf(projected, 'child-b', childHash)).toBeNull();
  expect(standingOf({ ...projected, holds: [] }, 'child-a', childHash)).toBeNull();
  expect(standingOf(projected, 'parent', 'not-a-hash')).toBeNull();
  // Scoped to its hold and the parent's epoch: another hold or epoch derives another secret.
  expect(holdTenureSecret(key, { ...child, holdId: 'hld_b' })).not.toBe(holdTenureSecret(key, child));
  expect(holdTenureSecret(key, { ...child, epoch: 4 })).not.toBe(holdTenureSecret(key, child));
  expect(holdTenureSecret(key, child)).not.toBe(tenureSecret(key, { ...owner, executionSessionId: 'child-a' }));
});

test('a worktree whose ownership has live holds is not removed, even by its owner: holds_live names the children', () => {
  const facts: RemovalFacts = {
    worktreePath: '/w',
    branch: 'wt/a',
    head: null,
    ownership: {
      ownershipId: 'own_1',
      state: 'released',
      executionSessionId: 'parent',
      source: 'service',
      holds: [{ holdId: 'hld_a', executionSessionId: 'child-a', runtime: 'codex-cli' }],
    },
    callerIsOwner: true,
    liveness: 'unknown',
    headLandedOn: null,
    accounted: [],
    unlanded: [],
    unlandedTruncated: false,
    dirtyFiles: [],
    unpreservable: [],
    snapshot: { status: 'not_needed' },
  };
  const d = decideRemoval(facts);
  expect(d.verdict === 'refuse' && d.refusal).toMatchObject({
    code: 'holds_live',
    details: { children: [{ holdId: 'hld_a', executionSessionId: 'child-a' }] },
  });
  expect(decideRemoval({ ...facts, ownership: { ...facts.ownership!, holds: [] } }).verdict).toBe('remove');
});
