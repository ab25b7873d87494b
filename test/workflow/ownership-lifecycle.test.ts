import { OwnershipError, type BindRequest } from '../../src/client';
import type { Principal } from '../../src/domain/identity';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { startOwnershipEnv, type OwnershipEnv } from './ownership-env';

/**
 * The ownership workflow's lifecycle as its callers see it (claim, refusal of a second owner,
 * handoff and accept, a handoff nobody accepts, release), on the time-skipping test server with
 * in-memory activities: what the workflow answers, what it makes durable, and what it projects.
 */
const HANDOFF_TIMEOUT_MS = 5 * 60_000;
let o: OwnershipEnv;
let repo: RepoFixture;

beforeAll(async () => {
  o = await startOwnershipEnv({ handoffTimeoutMs: HANDOFF_TIMEOUT_MS });
  repo = makeRepo(5, o.root);
});
afterAll(async () => {
  await o?.stop();
});

const executor = (workerId: string): Principal => ({ kind: 'executor', id: `exec-${workerId}`, workerId });
const worker = (workerId: string) => ({ runId: null, workerId });
const bindReq = (i: number, session: string, workerId = 'w-a'): BindRequest => ({
  worktreePath: repo.worktrees[i]!.path,
  branch: repo.worktrees[i]!.branch,
  executionSessionId: session,
  runtime: 'codex-cli',
  worker: worker(workerId),
  principal: executor(workerId),
});
const ref = (i: number) => ({ worktreePath: repo.worktrees[i]!.path });

async function refusal(p: Promise<unknown>): Promise<string | null> {
  try {
    await p;
    return null;
  } catch (err) {
    if (err instanceof OwnershipError) return err.code;
    throw err;
  }
}

test('a claim makes the session the active owner at epoch 1, durable and projected before the answer', async () => {
  const view = await o.client.bind(bindReq(0, 's-claim'));
  expect({ state: view.state, epoch: view.epoch, owner: view.owner?.executionSessionId, projection: view.projection }).toEqual({
    state: 'active',
    epoch: 1,
    owner: 's-claim',
    projection: 'applied',
  });
  expect(o.fakes.log(view.ownershipId).map((e) => e.type)).toEqual(['ownership.claimed']);
  expect(o.fakes.projections.filter((r) => r.ownershipId === view.ownershipId).map((r) => [r.state, r.owner?.executionSessionId])).toEqual([
    ['active', 's-claim'],
  ]);
});

test('a second session is refused while the worktree is held, and nothing is written for it', async () => {
  const view = await o.client.bind(bindReq(1, 's-first'));
  expect(await refusal(o.client.bind(bindReq(1, 's-second')))).toBe('worktree_owned');
  expect(o.fakes.log(view.ownershipId).map((e) => e.type)).toEqual(['ownership.claimed']);
  expect((await o.client.projection(ref(1)))?.owner?.executionSessionId).toBe('s-first');
});

test('a handoff accepted by the named successor makes it the owner at the next epoch; the old epoch is fenced out', async () => {
  const bound = await o.client.bind(bindReq(2, 's-from'));
  const offered = await o.client.handoff(ref(2), {
    executionSessionId: 's-from',
    epoch: 1,
    principal: executor('w-a'),
    toExecutionSessionId: 's-to',
    toWorkerId: 'w-b',
  });
  expect({ state: offered.state, to: offered.handoff?.toExecutionSessionId }).toEqual({ state: 'handoff_pending', to: 's-to' });
  // Only the worker the offer names may accept it: another worker's accept does not match the pending handoff.
  expect(
    await refusal(
      o.client.acceptHandoff(ref(2), {
        handoffId: offered.handoff!.handoffId,
        executionSessionId: 's-to',
        runtime: 'codex-cli',
        worker: worker('w-a'),
        principal: executor('w-a'),
      }),
    ),
  ).toBe('handoff_mismatch');
  const accepted = await o.client.acceptHandoff(ref(2), {
    handoffId: offered.handoff!.handoffId,
    executionSessionId: 's-to',
    runtime: 'codex-cli',
    worker: worker('w-b'),
    principal: executor('w-b'),
  });
  expect({ state: accepted.state, epoch: accepted.epoch, owner: accepted.owner?.executionSessionId, handoff: accepted.handoff }).toEqual({
    state: 'active',
    epoch: 2,
    owner: 's-to',
    handoff: null,
  });
  // The old owner is fenced out: it is no longer the owner.
  expect(await refusal(o.client.release(ref(2), { executionSessionId: 's-from', epoch: 1, principal: executor('w-a') }))).toBe('not_owner');
  expect(o.fakes.log(bound.ownershipId).map((e) => e.type)).toEqual(['ownership.claimed', 'ownership.handoff_started', 'ownership.claimed']);
});

test('a handoff nobody accepts expires at its timeout, not before, and the owner keeps the worktree', async () => {
  const bound = await o.client.bind(bindReq(3, 's-keeps'));
  const offered = await o.client.handoff(ref(3), {
    executionSessionId: 's-keeps',
    epoch: 1,
    principal: executor('w-a'),
    toExecutionSessionId: 's-never',
    toWorkerId: 'w-a',
  });
  await o.advance(HANDOFF_TIMEOUT_MS - 60_000);
  expect((await o.client.projection(ref(3)))?.state).toBe('handoff_pending');
  await o.advance(2 * 60_000);
  const after = await o.client.projection(ref(3));
  expect({ state: after?.state, owner: after?.owner?.executionSessionId, epoch: after?.epoch, handoff: after?.handoff }).toEqual({
    state: 'active',
    owner: 's-keeps',
    epoch: 1,
    handoff: null,
  });
  const cancelled = o.fakes.log(bound.ownershipId).find((e) => e.type === 'ownership.handoff_cancelled');
  expect(cancelled?.data).toEqual({ handoffId: offered.handoff!.handoffId, reason: 'timeout' });
  // The expired offer can no longer be taken.
  expect(
    await refusal(
      o.client.acceptHandoff(ref(3), {
        handoffId: offered.handoff!.handoffId,
        executionSessionId: 's-never',
        runtime: 'codex-cli',
        worker: worker('w-a'),
        principal: executor('w-a'),
      }),
    ),
  ).toBe('no_pending_handoff');
});

test('a release frees the worktree (projected free) and another session may claim it after', async () => {
  const bound = await o.client.bind(bindReq(4, 's-leaves'));
  const released = await o.client.release(ref(4), { executionSessionId: 's-leaves', epoch: 1, principal: executor('w-a') });
  expect(released.state).toBe('released');
  expect(o.fakes.projections.filter((r) => r.ownershipId === bound.ownershipId).at(-1)?.state).toBe('released');
  const next = await o.client.bind(bindReq(4, 's-next'));
  expect({ state: next.state, owner: next.owner?.executionSessionId, epoch: next.epoch }).toEqual({ state: 'active', owner: 's-next', epoch: 2 });
  expect(o.fakes.log(bound.ownershipId).map((e) => e.type)).toEqual(['ownership.claimed', 'ownership.released', 'ownership.claimed']);
});
