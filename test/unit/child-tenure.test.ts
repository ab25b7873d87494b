/**
 * A child hold's tenure in the worktree's local projection (docs/ownership-record.md#child-holds):
 * the host agent writes each live hold's hash words beside the owner's (carried from the control
 * plane to a keyless host, derived on a keyed one), and the TypeScript gate (src/gate/guard.ts,
 * what od-gate and the PATH gate run) lets the child's session through with its own secret only.
 * The hold's end or the parent's change of epoch drops the child's words at the next projection,
 * and the gate refuses it at once. Real git, real worktrees, the host activity as the agent runs it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { createHostActivities } from '../../src/activities';
import { noAuthority } from '../../src/activities/liveness';
import type { Hold } from '../../src/domain/events';
import { emptyRecord, type OwnershipRecord } from '../../src/domain/projection';
import { guardAt } from '../../src/gate/guard';
import { readProjection } from '../../src/git/projection';
import { worktreeDirs } from '../../src/git/repo';
import { keyringKeys, parseKeyring } from '../../src/keys/message-seal';
import { holdTenureHashWords, holdTenureSecret, tenureHashWords, tenureSecret } from '../../src/keys/tenure';
import { g, GATE_DIR, makeRepo, run, type Fixture } from './git-fixture';

let fx: Fixture;
beforeEach(() => {
  fx = makeRepo();
});
afterEach(() => fx.cleanup());

const keyring = parseKeyring(Buffer.alloc(32, 9).toString('base64'), 'test key');
const keys = keyringKeys(keyring);
const REAL_GIT = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
const owner = { ownershipId: 'own_K', epoch: 2, executionSessionId: 'parent' };
const holdA = { ...owner, holdId: 'hld_A', executionSessionId: 'child-a' };
const holdB = { ...owner, holdId: 'hld_B', executionSessionId: 'child-b' };

function hold(t: typeof holdA, epoch = t.epoch): Hold {
  return {
    holdId: t.holdId,
    executionSessionId: t.executionSessionId,
    parentExecutionSessionId: 'parent',
    epoch,
    grantedAt: '2026-08-20T00:00:30.000Z',
    leaseTtlMs: 60_000,
    runtime: 'codex-cli',
  };
}

function record(seq: number, holds: Hold[], over: Partial<OwnershipRecord> = {}): OwnershipRecord {
  return {
    ...emptyRecord({ ownershipId: owner.ownershipId, repoRoot: fx.repo, worktreePath: fx.wt1, branch: 'wt1', hostId: 'h' }),
    owner: {
      executionSessionId: owner.executionSessionId,
      runtime: 'claude-code',
      parentExecutionSessionId: null,
      conversation: null,
      worker: { runId: null, workerId: 'w' },
      process: null,
    },
    worker: { runId: null, workerId: 'w' },
    state: 'active',
    epoch: owner.epoch,
    seq,
    claimedAt: '2026-08-20T00:00:00.000Z',
    lastSeenAt: '2026-08-20T00:01:00.000Z',
    holds,
    ...over,
  };
}

/** What the control plane carries for a record (src/activities createStoreActivities): the owner's words and each hold's. */
function carried(holds: readonly (typeof holdA)[]) {
  return {
    ...owner,
    tenureHash: tenureHashWords(keys, owner),
    holds: holds.map((h) => ({ holdId: h.holdId, executionSessionId: h.executionSessionId, tenureHash: holdTenureHashWords(keys, h) })),
  };
}

const envOf = (session: string, secret: string | null, epoch = owner.epoch): Record<string, string> => ({
  OVERDECK_EXECUTION_SESSION_ID: session,
  OVERDECK_EPOCH: String(epoch),
  ...(secret === null ? {} : { OVERDECK_TENURE_SECRET: secret }),
});

async function judged(env: Record<string, string>): Promise<{ status: number; reason: string | null; holdId: string | null }> {
  const gd = (await worktreeDirs(fx.wt1)).privateDir;
  const v = guardAt(gd, env, REAL_GIT);
  return { status: v.status, reason: v.reason ?? null, holdId: v.holdId ?? null };
}

const ALLOWED_CHILD = (holdId: string) => ({ status: 0, reason: null, holdId });
const secretA = holdTenureSecret(keys[0]!, holdA);
const secretB = holdTenureSecret(keys[0]!, holdB);
const ownerSecret = tenureSecret(keys[0]!, owner);

test('a keyless host writes the carried child words, the same a keyed host derives; the gate lets each child through with its own secret only', async () => {
  const keyless = createHostActivities({ allowedRoots: [fx.root], authority: noAuthority, keyring: null });
  await keyless.applyLocalProjection(record(5, [hold(holdA), hold(holdB)]), carried([holdA, holdB]));
  const written = await readProjection(fx.wt1);
  expect(written?.holds).toEqual([
    { holdId: 'hld_A', executionSessionId: 'child-a', tenureHash: holdTenureHashWords(keys, holdA) },
    { holdId: 'hld_B', executionSessionId: 'child-b', tenureHash: holdTenureHashWords(keys, holdB) },
  ]);
  // The same record through a keyed host, nothing carried: the very same words.
  const keyed = createHostActivities({ allowedRoots: [fx.root], authority: noAuthority, keyring });
  await keyed.applyLocalProjection(record(6, [hold(holdA), hold(holdB)]));
  expect((await readProjection(fx.wt1))?.holds).toEqual(written?.holds);

  expect(await judged(envOf('child-a', secretA))).toEqual(ALLOWED_CHILD('hld_A'));
  expect(await judged(envOf('child-b', secretB))).toEqual(ALLOWED_CHILD('hld_B'));
  expect(await judged(envOf('parent', ownerSecret))).toEqual({ status: 0, reason: null, holdId: null });
  // Each secret proves its own holder only: not the other child, not the owner, and the owner's proves no child.
  expect((await judged(envOf('child-a', secretB))).reason).toBe('tenure_unproven');
  expect((await judged(envOf('child-a', ownerSecret))).reason).toBe('tenure_unproven');
  expect((await judged(envOf('parent', secretA))).reason).toBe('tenure_unproven');
  expect((await judged(envOf('child-a', null))).reason).toBe('tenure_unproven');
  // The parent's epoch only; a session no hold names is not the owner's either.
  expect((await judged(envOf('child-a', secretA, 1))).reason).toBe('stale_epoch');
  expect((await judged(envOf('child-c', secretA))).reason).toBe('not_owner');
  // Without a session id a child's secret is measured against the owner's words: refused.
  expect((await judged({ OVERDECK_TENURE_SECRET: secretA })).reason).toBe('tenure_unproven');
});

test("the hold's end, then the parent's change of epoch, drop the child's words at the next projection: the gate refuses it at once", async () => {
  const keyless = createHostActivities({ allowedRoots: [fx.root], authority: noAuthority, keyring: null });
  await keyless.applyLocalProjection(record(5, [hold(holdA), hold(holdB)]), carried([holdA, holdB]));
  expect(await judged(envOf('child-a', secretA))).toEqual(ALLOWED_CHILD('hld_A'));

  // child-a's hold ended (seq 6): its words are gone, child-b's stay.
  await keyless.applyLocalProjection(record(6, [hold(holdB)]), carried([holdB]));
  expect((await readProjection(fx.wt1))?.holds?.map((h) => h.holdId)).toEqual(['hld_B']);
  expect((await judged(envOf('child-a', secretA))).reason).toBe('not_owner');
  expect(await judged(envOf('child-b', secretB))).toEqual(ALLOWED_CHILD('hld_B'));

  // The parent's tenure changed (a handoff accepted: epoch 3, another owner, no holds): child-b is refused too.
  const next = { ...owner, epoch: 3, executionSessionId: 'successor' };
  await keyless.applyLocalProjection(record(8, [], { epoch: 3, owner: { ...record(0, []).owner!, executionSessionId: 'successor' } }), {
    ...next,
    tenureHash: tenureHashWords(keys, next),
  });
  expect((await readProjection(fx.wt1))?.holds).toBeUndefined();
  expect((await judged(envOf('child-b', secretB))).reason).toBe('not_owner');
  expect((await judged(envOf('child-b', secretB, 3))).reason).toBe('not_owner');
});

test('a hold of an older epoch, or one whose words were not carried to a keyless host, is written without standing; a carried hold of another tenure is refused', async () => {
  const keyless = createHostActivities({ allowedRoots: [fx.root], authority: noAuthority, keyring: null });
  // A hold the record still names from epoch 1 (never written: the child's secret is of another epoch).
  await keyless.applyLocalProjection(record(5, [hold(holdA), hold(holdB, 1)]), carried([holdA, { ...holdB, epoch: 1 }]));
  expect((await readProjection(fx.wt1))?.holds?.map((h) => h.holdId)).toEqual(['hld_A']);
  // child-b's words not carried: written without it (never the owner's projection held back for it).
  await keyless.applyLocalProjection(record(6, [hold(holdA), hold(holdB)]), carried([holdA]));
  expect((await readProjection(fx.wt1))?.holds?.map((h) => h.holdId)).toEqual(['hld_A']);
  expect((await judged(envOf('child-b', secretB))).reason).toBe('not_owner');
  // Words carried under another hold's id, or for another child of the same hold, are not taken for child-b's.
  await keyless.applyLocalProjection(record(7, [hold(holdB)]), {
    ...carried([]),
    holds: [
      { holdId: 'hld_A', executionSessionId: 'child-b', tenureHash: holdTenureHashWords(keys, holdB) },
      { holdId: 'hld_B', executionSessionId: 'child-a', tenureHash: holdTenureHashWords(keys, holdB) },
    ],
  });
  expect((await readProjection(fx.wt1))?.holds).toBeUndefined();
  // Carried for another ownership's tenure: a programming error upstream, refused, nothing written.
  let failure: unknown;
  try {
    await keyless.applyLocalProjection(record(9, [hold(holdB)], { ownershipId: 'own_other' }), carried([holdB]));
  } catch (err) {
    failure = err;
  }
  expect(failure).toBeInstanceOf(ApplicationFailure);
  expect((failure as ApplicationFailure).type).toBe('invalid_input');
  expect((await readProjection(fx.wt1))?.seq).toBe(7);
});

test("a doctored projection gives no standing: the hold's section renamed, naming another session, or without its words", async () => {
  const keyed = createHostActivities({ allowedRoots: [fx.root], authority: noAuthority, keyring });
  await keyed.applyLocalProjection(record(5, [hold(holdA)]));
  const file = path.join((await worktreeDirs(fx.wt1)).privateDir, 'overdeck.config');
  const text = readFileSync(file, 'utf8');
  const words = holdTenureHashWords(keys, holdA);
  expect(text).toContain(`[overdeck "hold.hld_A"]\n\texecution-session-id = "child-a"\n\ttenure-hash = "${words}"\n`);
  const doctor = (t: string) => writeFileSync(file, t);

  // Not a hold's section: the words are nobody's.
  doctor(text.replace('[overdeck "hold.hld_A"]', '[overdeck "other"]'));
  expect((await judged(envOf('child-a', secretA))).reason).toBe('not_owner');
  // The hold names another session: child-a holds nothing.
  doctor(text.replace('execution-session-id = "child-a"', 'execution-session-id = "child-z"'));
  expect((await judged(envOf('child-a', secretA))).reason).toBe('not_owner');
  // A hold without its words is no hold; the projection's reader calls it corrupt.
  doctor(text.replace(`\ttenure-hash = "${words}"\n`, ''));
  expect((await judged(envOf('child-a', secretA))).reason).toBe('not_owner');
  await expect(readProjection(fx.wt1)).rejects.toMatchObject({ code: 'projection_corrupt' });
  // A child's words moved into the owner's section prove nothing for the child's session (it is not the owner).
  doctor(text.replace(`\ttenure-hash = "${words}"\n`, '').replace(tenureHashWords(keys, owner), words));
  expect((await judged(envOf('child-a', secretA))).reason).toBe('not_owner');
  // Anything but the exact form od-worktree writes is asked of git, whose answer is authoritative: the same hold.
  doctor(`${text}[overdeck "note"]\n\ttext = "a\\\\b"\n`);
  expect(await judged(envOf('child-a', secretA))).toEqual(ALLOWED_CHILD('hld_A'));
  expect((await judged(envOf('child-a', secretB))).reason).toBe('tenure_unproven');
});

test("the PATH gate lets a live hold's child run what git has no hook for, and refuses it once the hold has ended", async () => {
  const keyless = createHostActivities({ allowedRoots: [fx.root], authority: noAuthority, keyring: null });
  await keyless.applyLocalProjection(record(5, [hold(holdA)]), carried([holdA]));
  const gated = (env: Record<string, string>, ...args: string[]) => run('git', args, fx.wt1, { PATH: `${GATE_DIR}:${process.env.PATH ?? ''}`, ...env });
  writeFileSync(path.join(fx.wt1, 'a.txt'), 'the child edits\n');
  // Another child's secret: refused before git touches a file.
  const refused = gated(envOf('child-a', secretB), 'checkout', '--', 'a.txt');
  expect(refused.status).not.toBe(0);
  expect(refused.stderr).toContain('od-worktree: refused');
  expect(readFileSync(path.join(fx.wt1, 'a.txt'), 'utf8')).toBe('the child edits\n');
  // Its own: git runs.
  const ran = gated(envOf('child-a', secretA), 'stash', '-q');
  expect({ status: ran.status, stderr: ran.stderr }).toEqual({ status: 0, stderr: '' });
  expect(g(fx.wt1, 'stash', 'list')).toContain('stash@{0}');

  await keyless.applyLocalProjection(record(6, []), carried([]));
  const after = gated(envOf('child-a', secretA), 'stash', 'pop', '-q');
  expect(after.status).not.toBe(0);
  expect(after.stderr).toContain('you are session child-a');
  expect(g(fx.wt1, 'stash', 'list')).toContain('stash@{0}');
});
