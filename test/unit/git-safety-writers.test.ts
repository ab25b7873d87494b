/**
 * Several real processes write one worktree's projection at once, many rounds: with the
 * cross-process writer lock the highest seq is what stays on disk (config, lock JSON and git lock
 * agree on it), and a provisional claim replaced by a durable projection is always stashed.
 */
import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import { readLock, worktreeLockReason } from '../../src/git/lock';
import { applyLocalProjection, clearSupersededProvisional, readProjection, readSupersededProvisional } from '../../src/git/projection';
import { makeRepo, projection, type Fixture } from './git-fixture';

const WRITERS = 4;
const ROUNDS = 30;

interface Answer {
  id: number;
  ok: boolean;
  result?: string;
  idempotencyKey?: string | null;
  error?: string;
}

let fx: Fixture;
let children: ChildProcess[] = [];
const pending = new Map<number, (a: Answer) => void>();
let nextId = 0;

beforeAll(async () => {
  fx = makeRepo();
  const helper = path.join(__dirname, 'git-safety-writer.ts');
  children = Array.from({ length: WRITERS }, () =>
    fork(helper, [], { execArgv: ['--require', require.resolve('tsx/cjs')], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  );
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve, reject) => {
          c.once('error', reject);
          c.on('message', (m: Answer | { ready: true }) => {
            if ('ready' in m) resolve();
            else pending.get(m.id)?.(m);
          });
        }),
    ),
  );
}, 60_000);

afterAll(async () => {
  // Gone before the file ends: the guard stops (and reports) a child still exiting then.
  await Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null ? undefined : new Promise((resolve) => c.once('exit', resolve).kill()))));
  fx.cleanup();
});

function ask(child: ChildProcess, job: Record<string, unknown>): Promise<Answer> {
  const id = nextId++;
  return new Promise((resolve) => {
    pending.set(id, resolve);
    child.send({ id, ...job });
  });
}

it(`${WRITERS} processes, ${ROUNDS} rounds: the max seq wins and a provisional claim is never erased unstashed`, async () => {
  const roots = [fx.root];
  let claimedRounds = 0;
  for (let round = 0; round < ROUNDS; round++) {
    // Start each round from nothing: no projection, no stash.
    await applyLocalProjection(fx.wt1, null, { gitLock: false, force: true });
    await clearSupersededProvisional(fx.wt1);

    const claimer = round % WRITERS;
    const seqs = new Set<number>();
    while (seqs.size < WRITERS - 1) seqs.add(1 + Math.floor(Math.random() * 60));
    const order = [...seqs];
    // Every third round the claim lands first for sure, so the "claimed, then stashed" path is
    // exercised whatever the machine's scheduling; the other rounds race all four writers.
    const claimFirst = round % 3 === 0;
    const claimJob = () =>
      ask(children[claimer]!, { kind: 'claim', wt: fx.wt1, roots, delayMs: claimFirst ? 0 : Math.floor(Math.random() * 12), session: 'session_P' });
    const first = claimFirst ? await claimJob() : null;
    const jobs = children.map((child, i) => {
      const delayMs = Math.floor(Math.random() * 12);
      if (i === claimer) return first ? Promise.resolve(first) : claimJob();
      const seq = order.pop()!;
      // One durable ownership, its seqs racing (retries, two host agents); epoch = seq so the lock JSON shows which write it came from.
      return ask(child, {
        kind: 'durable',
        wt: fx.wt1,
        roots,
        delayMs,
        projection: projection(`D${seq}`, seq, { ownershipId: 'own_D', executionSessionId: 'session_D' }),
      });
    });
    const answers = await Promise.all(jobs);
    for (const a of answers) expect(a).toMatchObject({ ok: true });

    const max = Math.max(...seqs);
    const onDisk = await readProjection(fx.wt1);
    expect({ round, seq: onDisk?.seq, ownershipId: onDisk?.ownershipId }).toEqual({ round, seq: max, ownershipId: 'own_D' });
    expect(await readLock(fx.wt1)).toMatchObject({ ownership_id: 'own_D', epoch: max });
    expect(await worktreeLockReason(fx.wt1)).toBe(`overdeck: owned by session session_D (ownership own_D, epoch ${max})`);

    const claim = answers[claimer]!;
    const stash = await readSupersededProvisional(fx.wt1);
    if (claim.result === 'claimed') {
      claimedRounds++;
      expect({ round, stashed: stash?.idempotencyKey }).toEqual({ round, stashed: claim.idempotencyKey });
    } else {
      expect({ round, claim: claim.result, stash }).toEqual({ round, claim: 'refused', stash: null });
    }
  }
  // The claim-first rounds always claim; a run where none did means the claim path broke.
  expect(claimedRounds).toBeGreaterThanOrEqual(Math.ceil(ROUNDS / 3));
}, 180_000);
