import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { refusal, requests, types, until } from './decision-helpers';
import { startOwnershipEnv, type OwnershipEnv } from './ownership-env';

/**
 * Submit, plan, rename, landing and removal decisions: owner-only updates refuse other sessions
 * and ended epochs; a landing receipt reported twice is one landing; a landing reported by
 * someone who may not is refused; the worktree's removal ends a landed lifecycle as closed (the
 * workflow completes) and a closed lifecycle lands nothing more.
 */
let o: OwnershipEnv;
let repo: RepoFixture;
const { bindReq, ref, owner } = requests(() => repo);

beforeAll(async () => {
  o = await startOwnershipEnv();
  repo = makeRepo(2, o.root);
});
afterAll(async () => {
  await o?.stop();
});

const landing = (head: string, kind: 'landing' | 'executor' = 'landing') => ({
  sourceHead: 'a'.repeat(40),
  landedBranch: 'main',
  landedHead: head.repeat(40),
  landedAt: new Date(0).toISOString(),
  principal: { kind, id: 'lander' },
});

test('plan, rename and submit are the owner’s at its epoch: not_owner, stale_epoch, worktree_mismatch; the owner’s are recorded', async () => {
  const bound = await o.client.bind(bindReq(0, 's-works'));
  const branch = repo.worktrees[0]!.branch;
  expect(await refusal(o.client.bindPlan(ref(0), { ...owner('s-else', 1), planRef: 'docs/p.md' }))).toBe('not_owner');
  expect(await refusal(o.client.submit(ref(0), { ...owner('s-works', 2), head: 'a'.repeat(40) }))).toBe('stale_epoch');
  expect(await refusal(o.client.renameBranch(ref(0), { ...owner('s-works', 1), from: 'not-the-branch', to: 'renamed' }))).toBe('worktree_mismatch');
  expect(types(o, bound.ownershipId)).toEqual(['ownership.claimed']);

  const planned = await o.client.bindPlan(ref(0), { ...owner('s-works', 1), planRef: 'docs/p.md' });
  expect(planned.planRef).toBe('docs/p.md');
  // The same plan again changes nothing.
  await o.client.bindPlan(ref(0), { ...owner('s-works', 1), planRef: 'docs/p.md' });
  const renamed = await o.client.renameBranch(ref(0), { ...owner('s-works', 1), from: branch, to: `${branch}-2` });
  expect(renamed.branch).toBe(`${branch}-2`);
  const submitted = await o.client.submit(ref(0), { ...owner('s-works', 1), head: 'a'.repeat(40) });
  expect(submitted.state).toBe('submitted');
  expect(types(o, bound.ownershipId)).toEqual(['ownership.claimed', 'ownership.plan_bound', 'ownership.branch_renamed', 'ownership.submitted']);
});

test('a landing is one receipt however often reported; removal closes the landed lifecycle and its workflow completes', async () => {
  const bound = await o.client.bind(bindReq(1, 's-lands'));
  await o.client.submit(ref(1), { ...owner('s-lands', 1), head: 'a'.repeat(40) });
  // Reported by an executor: refused (forbidden), nothing landed.
  await o.client.landed(ref(1), landing('b', 'executor'));
  await o.client.landed(ref(1), landing('b'));
  await o.client.landed(ref(1), landing('b'));
  await o.client.landed(ref(1), landing('c'));
  const landed = await until(
    () => o.client.projection(ref(1)),
    (v) => (v?.landings.length ?? 0) >= 2,
  );
  expect({ state: landed?.state, heads: landed?.landings.map((l) => l.landedHead) }).toEqual({ state: 'landed', heads: ['b'.repeat(40), 'c'.repeat(40)] });
  expect(types(o, bound.ownershipId).filter((t) => t === 'ownership.landed')).toHaveLength(2);

  const wf = await o.client.workflowIdOf(ref(1));
  await o.client.worktreeRemoved(ref(1), { principal: { kind: 'system', id: 'host' } });
  const result = await o.env.client.workflow.getHandle(wf).result();
  expect(result?.state).toBe('closed');
  expect(types(o, bound.ownershipId).slice(-1)).toEqual(['ownership.worktree_removed']);
  expect(o.fakes.projections.filter((r) => r.ownershipId === bound.ownershipId).at(-1)?.state).not.toBe('active');
});
