import { execFile, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createHostActivities, createStoreActivities } from '../../src/activities';
import { noAuthority } from '../../src/activities/liveness';
import { OwnershipClient, type BindRequest, type OwnershipView } from '../../src/client';
import { gitWorktreeResolver } from '../../src/adapters/worktree-resolver';
import { hostTaskQueue } from '../../src/domain/queues';
import { cleanGitEnv } from '../../src/git/exec';
import { guardCheck } from '../../src/git/guard';
import { readProjection } from '../../src/git/projection';
import { reconcile, type ReconcilePort, type ReconciliationEntry } from '../../src/reconcile';
import { createServicePort } from '../../src/reconcile/service-port';
import { readEvents } from '../../src/store/event-store';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { executorPrincipal as executor, startHarness, testKeyring, type Harness, waitForView } from '../support/harness';
import { tenureSecretFor, withTenureSecret } from '../support/tenure-env';

/**
 * The git side end to end: real repositories and worktrees, the real service (Temporal dev server,
 * PostgreSQL, the host agent's activities), the real hooks and the real od-worktree CLI.
 */
let h: Harness;
let port: ReconcilePort;
let logged: ReconciliationEntry[];
const TMP = (): string => process.env.OD_TEST_TMP!;

beforeAll(async () => {
  h = await startHarness();
  port = createServicePort({ client: h.client, pool: h.pool, onReconciled: (e) => void logged.push(e) });
});
beforeEach(() => {
  logged = [];
});
afterAll(async () => h?.shutdown());

const BIN = path.resolve(__dirname, '../../bin/od-worktree.js');
const IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' };

interface Ran {
  status: number;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): Ran {
  const base = cleanGitEnv(IDENTITY);
  delete base.OVERDECK_EXECUTION_SESSION_ID;
  delete base.OVERDECK_EPOCH;
  // Each session runs git with the secret of its own tenure, when it has one (docs/agent-gate.md).
  const res = spawnSync(cmd, args, { cwd, env: cmd === 'git' ? withTenureSecret(cwd, { ...base, ...env }) : { ...base, ...env }, encoding: 'utf8' });
  if (res.error) throw res.error;
  return { status: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

const as = (session: string | null, epoch?: number): Record<string, string> => ({
  ...(session === null ? {} : { OVERDECK_EXECUTION_SESSION_ID: session }),
  ...(epoch === undefined ? {} : { OVERDECK_EPOCH: String(epoch) }),
});

function gitOk(cwd: string, ...args: string[]): string {
  const r = run('git', args, cwd);
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout.trim();
}

function commit(cwd: string, env: Record<string, string>): Ran {
  writeFileSync(path.join(cwd, 'work.txt'), `${Math.random()}\n`);
  run('git', ['add', 'work.txt'], cwd, env);
  return run('git', ['commit', '-q', '-m', 'work'], cwd, env);
}

/** The CLI, asynchronously: a spawnSync would block the event loop this test's worker runs on. */
function cli(cwd: string, args: string[], env: Record<string, string> = {}): Promise<Ran> {
  const base = cleanGitEnv({ OD_ALLOWED_ROOTS: TMP() });
  delete base.OVERDECK_EXECUTION_SESSION_ID;
  delete base.OVERDECK_EPOCH;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [BIN, ...args], { cwd, env: { ...base, ...env }, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ status: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}

const head = (cwd: string): string => gitOk(cwd, 'rev-parse', 'HEAD');

function bindReq(repo: RepoFixture, wt: { path: string; branch: string }, session: string, workerId: string): BindRequest {
  return {
    repoRoot: repo.repoRoot,
    worktreePath: wt.path,
    branch: wt.branch,
    executionSessionId: session,
    runtime: 'codex-cli',
    worker: { runId: null, workerId },
    principal: executor(workerId),
    lane: 'lane-e2e',
  };
}

const localCaughtUp = (v: OwnershipView): boolean => v.projectionSync.localSeq >= v.seq && v.projectionSync.error === null;

test('one live owner, end to end: the hooks refuse another session naming the owner, the owner commits, and a handoff reverses it', async () => {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0];
  const ref = { repoRoot: repo.repoRoot, worktreePath: wt.path };
  expect(commit(wt.path, as(null)).status).toBe(0); // so HEAD~1 exists on the branch

  const a = await h.client.bind(bindReq(repo, wt, 'session-A', 'worker-a'));
  // bind waits (up to projectionWaitMs) for the host agent: the local projection is already there.
  expect(a.projectionSync.localSeq).toBeGreaterThanOrEqual(a.seq);
  expect(gitOk(wt.path, 'config', '--worktree', '--includes', 'overdeck.owner.execution-session-id')).toBe('session-A');
  expect(gitOk(wt.path, 'status', '--porcelain')).toBe(''); // docs/git-projection.md: never in product git status

  const installed = await cli(repo.repoRoot, ['install-hooks', '--json']);
  expect(installed.status).toBe(0);
  expect(JSON.parse(installed.stdout)).toMatchObject({ hooks: expect.arrayContaining(['reference-transaction']) });

  // Session B: commit refused, and the message names A.
  const before = head(wt.path);
  const bCommit = commit(wt.path, as('session-B'));
  expect(bCommit.status).not.toBe(0);
  expect(bCommit.stderr).toContain('owned by session session-A');
  expect(bCommit.stderr).toContain('you are session session-B');
  expect(head(wt.path)).toBe(before);

  // Session B: reset --hard moving the branch is refused; the branch stays where A left it.
  const reset = run('git', ['reset', '-q', '--hard', 'HEAD~1'], wt.path, as('session-B'));
  expect(reset.status).not.toBe(0);
  expect(reset.stderr).toContain('session-A');
  expect(gitOk(wt.path, 'rev-parse', `refs/heads/${wt.branch}`)).toBe(before);

  // od-worktree guard says the same thing, with the documented exit codes.
  const guardB = await cli(wt.path, ['guard'], as('session-B'));
  expect(guardB.status).toBe(1);
  expect(guardB.stderr).toContain('owned by session session-A');
  // The owner's session id and epoch, copied by anyone from git config, prove nothing; its secret does.
  const copied = await cli(wt.path, ['guard', '--json', '--session', 'session-A', '--epoch', '1']);
  expect([copied.status, JSON.parse(copied.stdout).reason]).toEqual([1, 'tenure_unproven']);
  const guardA = await cli(wt.path, ['guard', '--json', '--session', 'session-A', '--epoch', '1'], {
    OVERDECK_TENURE_SECRET: tenureSecretFor(wt.path, 'session-A')!,
  });
  expect(guardA.status).toBe(0);
  expect(JSON.parse(guardA.stdout)).toMatchObject({ allowed: true });
  const guardBJson = await cli(wt.path, ['guard', '--json', '--session', 'session-B']);
  expect(guardBJson.status).toBe(1);
  expect(JSON.parse(guardBJson.stdout)).toMatchObject({ allowed: false, reason: 'not_owner' });

  // Session A commits.
  const aCommit = commit(wt.path, as('session-A', 1));
  expect(aCommit.status).toBe(0);
  expect(head(wt.path)).not.toBe(before);

  // Handoff A -> B through the service: the reverse holds once the projection follows.
  const started = await h.client.handoff(ref, {
    executionSessionId: 'session-A',
    epoch: 1,
    principal: executor('worker-a'),
    toExecutionSessionId: 'session-B',
    toWorkerId: 'worker-b',
  });
  const accepted = await h.client.acceptHandoff(ref, {
    handoffId: started.handoff!.handoffId,
    executionSessionId: 'session-B',
    runtime: 'codex-cli',
    parentExecutionSessionId: 'session-A',
    worker: { runId: null, workerId: 'worker-b' },
    principal: executor('worker-b'),
  });
  expect(accepted.epoch).toBe(2);
  await waitForView(h.client, ref, localCaughtUp);
  expect(gitOk(wt.path, 'config', '--worktree', '--includes', 'overdeck.owner.execution-session-id')).toBe('session-B');

  const afterHandoff = head(wt.path);
  const aAgain = commit(wt.path, as('session-A', 1));
  expect(aAgain.status).not.toBe(0);
  expect(aAgain.stderr).toContain('owned by session session-B');
  expect(aAgain.stderr).toContain('you are session session-A');
  expect(run('git', ['reset', '-q', '--hard', 'HEAD~1'], wt.path, as('session-A')).status).not.toBe(0);
  expect(head(wt.path)).toBe(afterHandoff);
  // The old owner's tenure is fenced by the epoch too.
  expect(commit(wt.path, as('session-B', 1)).status).not.toBe(0);
  expect(commit(wt.path, as('session-B', 2)).status).toBe(0);
  expect(head(wt.path)).not.toBe(afterHandoff);
});

test('git worktree remove fails while the worktree is owned, and succeeds after release and after landing', async () => {
  const repo = makeRepo(2);
  const [w1, w2] = repo.worktrees;
  const ref1 = { repoRoot: repo.repoRoot, worktreePath: w1.path };
  const ref2 = { repoRoot: repo.repoRoot, worktreePath: w2.path };

  await h.client.bind(bindReq(repo, w1, 'session-R', 'worker-r'));
  const locked = run('git', ['worktree', 'remove', w1.path], repo.repoRoot);
  expect(locked.status).not.toBe(0);
  expect(locked.stderr).toMatch(/locked/);
  expect(gitOk(repo.repoRoot, 'worktree', 'list', '--porcelain')).toContain('locked overdeck: owned by session session-R');
  expect(existsSync(w1.path)).toBe(true);

  const released = await h.client.release(ref1, { executionSessionId: 'session-R', epoch: 1, principal: executor('worker-r') });
  expect(released.state).toBe('released');
  await waitForView(h.client, ref1, localCaughtUp);
  expect(run('git', ['worktree', 'remove', w1.path], repo.repoRoot).status).toBe(0);
  expect(existsSync(w1.path)).toBe(false);

  await h.client.bind(bindReq(repo, w2, 'session-L', 'worker-l'));
  expect(run('git', ['worktree', 'remove', w2.path], repo.repoRoot).status).not.toBe(0);
  const sha = head(w2.path);
  await h.client.landed(ref2, {
    sourceHead: sha,
    landedBranch: 'main',
    landedHead: sha,
    landedAt: new Date().toISOString(),
    principal: { kind: 'landing', id: 'lander' },
  });
  const landed = await waitForView(h.client, ref2, (v) => v.state === 'landed' && localCaughtUp(v));
  expect(landed.landings).toHaveLength(1);
  const removed = run('git', ['worktree', 'remove', w2.path], repo.repoRoot);
  expect(removed.stderr).toBe('');
  expect(removed.status).toBe(0);
  expect(existsSync(w2.path)).toBe(false);
});

test('offline claim, then reconcile: a free worktree is submitted and the projection becomes durable', async () => {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0];
  expect((await cli(repo.repoRoot, ['install-hooks'])).status).toBe(0);

  // No service involved: only git.
  const claimed = await cli(wt.path, [
    'claim',
    '--offline',
    '--session',
    'session-P',
    '--runtime',
    'codex-cli',
    '--worker',
    'worker-p',
    '--lane',
    'lane-p',
    '--plan',
    'docs/p.md',
    '--json',
  ]);
  expect(claimed.status).toBe(0);
  const body = JSON.parse(claimed.stdout);
  expect(body.status).toBe('claimed');
  expect(body.projection).toMatchObject({
    provisional: true,
    state: 'provisional',
    seq: 0,
    epoch: 0,
    conversationId: null,
    conversationUrl: null,
    executionSessionId: 'session-P',
  });
  expect(body.projection.idempotencyKey).toMatch(/^idem_[0-9A-HJKMNP-TV-Z]{26}$/);
  // Never a conversation (docs/git-projection.md#offline-claims): not even an empty key.
  expect(run('git', ['config', '--worktree', '--includes', '--get-regexp', 'conversation'], wt.path).status).toBe(1);
  expect(await port.durable(wt.path)).toBeNull();

  // The guard treats the provisional owner as the owner.
  const q = commit(wt.path, as('session-Q'));
  expect(q.status).not.toBe(0);
  expect(q.stderr).toContain('owned by session session-P');
  expect(commit(wt.path, as('session-P')).status).toBe(0);
  // Replaying the offline claim is idempotent (same key); another session cannot claim over it.
  const replay = await cli(wt.path, ['claim', '--offline', '--session', 'session-P', '--runtime', 'codex-cli', '--json']);
  expect(JSON.parse(replay.stdout)).toMatchObject({ status: 'already_provisional', projection: { idempotencyKey: body.projection.idempotencyKey } });
  expect((await cli(wt.path, ['claim', '--offline', '--session', 'session-Q', '--runtime', 'codex-cli'])).status).toBe(1);

  const res = await reconcile(wt.path, port);
  expect(res).toMatchObject({ kind: 'submitted', changed: true, durable: { executionSessionId: 'session-P', epoch: 1 } });
  const local = await readProjection(wt.path);
  expect(local).toMatchObject({ executionSessionId: 'session-P', lane: 'lane-p', planRef: 'docs/p.md', conversationId: null, epoch: 1 });
  expect(local?.provisional).toBeUndefined();
  expect(local?.ownershipId).toMatch(/^own_/);
  const durable = await port.durable(wt.path);
  expect(durable).toMatchObject({
    ownershipId: local!.ownershipId,
    owner: { executionSessionId: 'session-P', conversation: null },
    worker: { workerId: 'worker-p' },
  });
  expect(local!.seq).toBe(durable!.seq);
  expect(logged).toEqual([
    expect.objectContaining({
      kind: 'submitted',
      ownershipId: local!.ownershipId,
      provisional: expect.objectContaining({ idempotencyKey: body.projection.idempotencyKey }),
    }),
  ]);

  expect((await reconcile(wt.path, port)).kind).toBe('in_sync');
  expect(commit(wt.path, as('session-Q')).status).not.toBe(0);
  expect(commit(wt.path, as('session-P', 1)).status).toBe(0);
});

test('offline claim, then reconcile: another session bound meanwhile, so the provisional claim is a conflict the guard refuses', async () => {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0];
  expect((await cli(repo.repoRoot, ['install-hooks'])).status).toBe(0);
  expect((await cli(wt.path, ['claim', '--offline', '--session', 'session-P2', '--runtime', 'codex-cli', '--worker', 'worker-p2'])).status).toBe(0);

  // Meanwhile session Q binds through the service; its host's agent is not running, so the
  // provisional projection is still what this worktree carries.
  const elsewhere = new OwnershipClient({
    client: h.temporal,
    resolver: gitWorktreeResolver,
    taskQueue: h.taskQueue,
    hostId: `absent-${Math.random().toString(36).slice(2, 8)}`,
    allowedRoots: [TMP()],
    settings: { projectionWaitMs: 200 },
  });
  const q = await elsewhere.bind(bindReq(repo, wt, 'session-Q', 'worker-q'));
  expect(q.projectionSync.localSeq).toBeLessThan(q.seq);
  expect((await readProjection(wt.path))?.provisional).toBe(true);

  const res = await reconcile(wt.path, port);
  expect(res).toMatchObject({ kind: 'conflict', reason: 'worktree_owned', changed: true, repaired: false, durable: { executionSessionId: 'session-Q' } });
  expect(logged).toEqual([
    expect.objectContaining({ kind: 'conflict', ownershipId: q.ownershipId, provisional: expect.objectContaining({ executionSessionId: 'session-P2' }) }),
  ]);
  expect(await readProjection(wt.path)).toMatchObject({ state: 'provisional-conflict', executionSessionId: 'session-P2', provisional: true });

  // The guard refuses the provisional owner (and, failing closed, everyone else) until repaired.
  expect(await guardCheck(wt.path, as('session-P2'))).toMatchObject({ allowed: false, reason: 'provisional_conflict' });
  const p2 = commit(wt.path, as('session-P2'));
  expect(p2.status).not.toBe(0);
  expect(p2.stderr).toContain('the provisional claim of session session-P2');
  expect(p2.stderr).toContain('conflicts with the durable record');
  expect(await guardCheck(wt.path, as('session-Q'))).toMatchObject({ allowed: false, reason: 'provisional_conflict' });
  // Re-running without --repair changes nothing and logs nothing new.
  expect(await reconcile(wt.path, port)).toMatchObject({ kind: 'conflict', changed: false });
  expect(logged).toHaveLength(1);

  // Explicit repair: the durable owner's projection replaces the lost claim.
  const fixed = await reconcile(wt.path, port, { repair: true });
  expect(fixed).toMatchObject({ kind: 'conflict', repaired: true });
  expect(await readProjection(wt.path)).toMatchObject({ ownershipId: q.ownershipId, executionSessionId: 'session-Q', seq: q.seq });
  expect(await guardCheck(wt.path, as('session-Q'))).toEqual({ allowed: true });
  expect(await guardCheck(wt.path, as('session-P2'))).toMatchObject({ allowed: false, reason: 'not_owner' });
  expect((await reconcile(wt.path, port)).kind).toBe('in_sync');
});

test('rehydrate: a worktree removed by accident and recreated on its branch gets its projection back from the durable record', async () => {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0];
  expect((await cli(repo.repoRoot, ['install-hooks'])).status).toBe(0);
  const owned = await h.client.bind(bindReq(repo, wt, 'session-H', 'worker-h'));

  // The accident: git's lock is lifted by hand and the worktree force-removed; the branch survives.
  expect(run('git', ['worktree', 'remove', '--force', wt.path], repo.repoRoot).status).not.toBe(0);
  gitOk(repo.repoRoot, 'worktree', 'unlock', wt.path);
  gitOk(repo.repoRoot, 'worktree', 'remove', '--force', wt.path);
  expect(existsSync(wt.path)).toBe(false);
  expect(await port.durable(wt.path)).toMatchObject({ state: 'active', owner: { executionSessionId: 'session-H' } });

  gitOk(repo.repoRoot, 'worktree', 'add', '-q', wt.path, wt.branch);
  expect(await readProjection(wt.path)).toBeNull();
  expect(await guardCheck(wt.path, as('session-X'))).toEqual({ allowed: true }); // the gap reconcile closes

  const res = await reconcile(wt.path, port);
  expect(res).toMatchObject({ kind: 'rehydrated', reason: 'missing', changed: true, local: null, durable: { ownershipId: owned.ownershipId, seq: owned.seq } });
  expect(logged).toEqual([expect.objectContaining({ kind: 'rehydrated', localSeq: null, durableSeq: owned.seq })]);
  expect(await readProjection(wt.path)).toMatchObject({ ownershipId: owned.ownershipId, executionSessionId: 'session-H', seq: owned.seq, epoch: 1 });

  expect(await guardCheck(wt.path, as('session-X'))).toMatchObject({ allowed: false, reason: 'not_owner' });
  const x = commit(wt.path, as('session-X'));
  expect(x.status).not.toBe(0);
  expect(x.stderr).toContain('owned by session session-H');
  expect(commit(wt.path, as('session-H', 1)).status).toBe(0);
  expect(run('git', ['worktree', 'remove', wt.path], repo.repoRoot).status).not.toBe(0); // git-locked again
  expect((await reconcile(wt.path, port)).kind).toBe('in_sync');
});

test('with the host agent down a bind is still durable; the projection catches up when the agent starts', async () => {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0];
  const ref = { repoRoot: repo.repoRoot, worktreePath: wt.path };
  const suffix = Math.random().toString(36).slice(2, 10);
  const taskQueue = `lag-${suffix}`;
  const hostId = `lag-host-${suffix}`;
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  const workers: Worker[] = [];
  const running: Promise<void>[] = [];
  try {
    // The workflow worker and its store activities only: nobody polls this host's queue yet.
    const store = await Worker.create({
      connection,
      namespace: 'default',
      taskQueue,
      workflowBundle: { codePath: process.env.OD_TEST_WORKFLOW_BUNDLE! },
      dataConverter: h.workers.dataConverter,
      activities: createStoreActivities({ pool: h.pool }),
    });
    workers.push(store);
    running.push(store.run());
    const client = new OwnershipClient({
      client: h.temporal,
      resolver: gitWorktreeResolver,
      taskQueue,
      hostId,
      allowedRoots: [TMP()],
      settings: { projectionWaitMs: 1_000 },
    });

    const view = await client.bind(bindReq(repo, wt, 'session-lag', 'worker-lag'));
    expect(view.projectionSync.durableSeq).toBe(view.seq);
    expect(view.projectionSync.localSeq).toBeLessThan(view.projectionSync.durableSeq);
    expect((await readEvents(h.pool, view.ownershipId)).map((e) => e.type)).toEqual(['ownership.claimed']);
    expect(await readProjection(wt.path)).toBeNull();
    expect(gitOk(repo.repoRoot, 'worktree', 'list', '--porcelain')).not.toContain('locked');

    // The host agent for that host starts: the pending projection activity runs.
    const agent = await Worker.create({
      connection,
      namespace: 'default',
      taskQueue: hostTaskQueue(hostId),
      activities: createHostActivities({ allowedRoots: [TMP()], authority: noAuthority, keyring: testKeyring() }),
    });
    workers.push(agent);
    running.push(agent.run());
    const caught = await waitForView(client, ref, (v) => v.projectionSync.localSeq === v.projectionSync.durableSeq && v.projectionSync.localSeq >= view.seq);
    expect(caught.projectionSync.error).toBeNull();
    expect(gitOk(wt.path, 'config', '--worktree', '--includes', 'overdeck.owner.execution-session-id')).toBe('session-lag');
    expect(gitOk(wt.path, 'config', '--worktree', '--includes', 'overdeck.owner.seq')).toBe(String(view.seq));
    expect(gitOk(repo.repoRoot, 'worktree', 'list', '--porcelain')).toContain('locked overdeck: owned by session session-lag');
  } finally {
    workers.forEach((w) => w.getState() === 'RUNNING' && w.shutdown());
    await Promise.allSettled(running);
    await connection.close();
  }
});
