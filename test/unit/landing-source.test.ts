import { checkNamedBranch, pickLandingSource, type BranchCandidate } from '../../src/domain/branch';

/**
 * Which ownership a landing by (repository, branch) lands on (src/domain/branch.ts): never the
 * latest of several; live holders first, then holders not closed, then names renamed away.
 */

const c = (ownershipId: string, state: string, holdsNow = true): BranchCandidate => ({ ownershipId, state, holdsNow });
const pick = (...cs: BranchCandidate[]) => {
  const p = pickLandingSource(cs);
  return p === null ? null : 'one' in p ? p.one.ownershipId : { ambiguous: p.ambiguous.map((x) => x.ownershipId) };
};

test('the one live holder wins over more recent holders that are not live', () => {
  expect(pick(c('released-newer', 'released'), c('live', 'submitted'), c('landed', 'landed'))).toBe('live');
});

test('two live holders are ambiguous, whichever is more recent', () => {
  expect(pick(c('newer', 'active'), c('older', 'stale'))).toEqual({ ambiguous: ['newer', 'older'] });
});

test('no live holder: the one not closed; two of them are ambiguous', () => {
  expect(pick(c('gone', 'closed'), c('landed', 'landed'))).toBe('landed');
  expect(pick(c('a', 'released'), c('b', 'landed'))).toEqual({ ambiguous: ['a', 'b'] });
});

test('a name renamed away counts only when nobody holds it now', () => {
  expect(pick(c('renamed', 'active', false), c('holder', 'released'))).toBe('holder');
  expect(pick(c('renamed', 'active', false))).toBe('renamed');
  expect(pick(c('r1', 'active', false), c('r2', 'released', false))).toEqual({ ambiguous: ['r1', 'r2'] });
});

test('only closed ones: the most recent (it refuses the landing itself); none: nothing', () => {
  expect(pick(c('c1', 'closed'), c('c2', 'closed'))).toBe('c1');
  expect(pick()).toBeNull();
});

test('a named branch must be git’s; a detached HEAD records nothing', () => {
  expect(checkNamedBranch(undefined, 'wt/a')).toBeNull();
  expect(checkNamedBranch('wt/a', 'wt/a')).toBeNull();
  expect(checkNamedBranch('wt/victim', 'wt/a')).toMatchObject({ code: 'branch_mismatch', details: { branch: 'wt/a' } });
  expect(checkNamedBranch('wt/a', null)).toMatchObject({ code: 'detached_head' });
  expect(checkNamedBranch(undefined, null)).toMatchObject({ code: 'detached_head' });
});
