/**
 * The host-side half of keeping the service key off agent hosts (src/host/carried-tenure.ts): a
 * host agent without the key writes the tenure hash the control plane carried in the activity's
 * input, the very words a keyed host derives, and only for the record's own tenure. Real git, a
 * real worktree; the projection read back as the hooks read it.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { createHostActivities } from '../../src/activities';
import { noAuthority } from '../../src/activities/liveness';
import { emptyRecord, type OwnershipRecord } from '../../src/domain/projection';
import { readProjection } from '../../src/git/projection';
import { keyringKeys, parseKeyring } from '../../src/keys/message-seal';
import { tenureHashWords } from '../../src/keys/tenure';
import { makeRepo, type Fixture } from './git-fixture';

let fx: Fixture;
beforeEach(() => {
  fx = makeRepo();
});
afterEach(() => fx.cleanup());

const keyring = parseKeyring(Buffer.alloc(32, 9).toString('base64'), 'test key');
const tenure = { ownershipId: 'own_K', epoch: 2, executionSessionId: 'session_K' };

function record(): OwnershipRecord {
  return {
    ...emptyRecord({ ownershipId: tenure.ownershipId, repoRoot: fx.repo, worktreePath: fx.wt1, branch: 'wt1', hostId: 'h' }),
    owner: {
      executionSessionId: tenure.executionSessionId,
      runtime: 'codex-cli',
      parentExecutionSessionId: null,
      conversation: null,
      worker: { runId: null, workerId: 'w' },
      process: null,
    },
    worker: { runId: null, workerId: 'w' },
    state: 'active',
    epoch: tenure.epoch,
    seq: 5,
    claimedAt: '2026-08-20T00:00:00.000Z',
    lastSeenAt: '2026-08-20T00:01:00.000Z',
  };
}

async function failureOf(p: Promise<unknown>): Promise<{ type: string | null | undefined; nonRetryable: boolean }> {
  try {
    await p;
  } catch (err) {
    if (!(err instanceof ApplicationFailure)) throw err;
    return { type: err.type, nonRetryable: err.nonRetryable === true };
  }
  throw new Error('expected the activity to fail');
}

test('a keyless host agent writes the carried hash: the words a keyed host derives', async () => {
  const words = tenureHashWords(keyringKeys(keyring), tenure);
  const keyless = createHostActivities({ allowedRoots: [fx.root], authority: noAuthority, keyring: null });
  await keyless.applyLocalProjection(record(), { ...tenure, tenureHash: words });
  expect((await readProjection(fx.wt1))?.tenureHash).toBe(words);

  // The same record through a keyed host (an old workflow's input, no hash carried): the same words.
  const keyed = createHostActivities({ allowedRoots: [fx.root], authority: noAuthority, keyring });
  await keyed.applyLocalProjection({ ...record(), seq: 6 });
  expect((await readProjection(fx.wt1))?.tenureHash).toBe(words);
});

test('a keyless host refuses what it cannot write truthfully, and writes nothing', async () => {
  const keyless = createHostActivities({ allowedRoots: [fx.root], authority: noAuthority, keyring: null });
  // An old workflow's input: no hash to write, and no key to derive one; retryable until the control plane carries it.
  expect(await failureOf(keyless.applyLocalProjection(record()))).toEqual({ type: 'tenure_hash_missing', nonRetryable: false });
  // A hash carried for another tenure (another epoch), or one that is not a digest.
  const words = tenureHashWords(keyringKeys(keyring), tenure);
  expect(await failureOf(keyless.applyLocalProjection(record(), { ...tenure, epoch: 1, tenureHash: words }))).toEqual({
    type: 'invalid_input',
    nonRetryable: true,
  });
  expect(await failureOf(keyless.applyLocalProjection(record(), { ...tenure, tenureHash: 'not-a-digest' }))).toEqual({
    type: 'invalid_input',
    nonRetryable: true,
  });
  expect(await readProjection(fx.wt1)).toBeNull();
});
