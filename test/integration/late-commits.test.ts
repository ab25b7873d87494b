import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createHostActivities, createLocalProjector } from '../../src/activities';
import { noAuthority } from '../../src/activities/liveness';
import type { ClaimResponse, HistoryResponse, WireRecord } from '../../src/contract/http';
import { cleanGitEnv } from '../../src/git/exec';
import { installHooks } from '../../src/git/guard';
import { JOURNAL_FILE, parseJournalLine } from '../../src/git/journal';
import { preserveLateWork } from '../../src/git/late';
import { worktreeDirs } from '../../src/git/repo';
import { lateRef } from '../../src/git/wip';
import { createWorkers } from '../../src/infra/workers';
import { JournalShipper } from '../../src/provenance/attributions-shipper';
import { getOwnership } from '../../src/store/lookups';
import { apiEnv, runCli } from '../support/cli';
import { git, GIT_IDENTITY, makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { testKeyring } from '../support/harness';

/**
 * Late commits of an old tenure (docs/git-projection.md#late-work-of-an-older-tenure), on the real
 * stack: the worktrees live on a host of their own whose agent (createWorkers without a pool: the
 * host agent's activities with its journal shipper) the test starts and stops. With that agent
 * down an admin force-reclaims; the old owner, whose projection the hooks still enforce, commits
 * with its tenure secret; when the agent is back, it preserves that work under the late ref before
 * it writes the newer projection, and history, provenance and the journal say whose it is.
 */

let s: ApiStack;
let repo: RepoFixture;
let connection: NativeConnection;
const TMP = (): string => process.env.OD_TEST_TMP!;
const suffix = Math.random().toString(36).slice(2, 10);
const hostId = `late-host-${suffix}`;
let agent: { worker: Worker; running: Promise<void>; shipper: JournalShipper } | null = null;

interface Bound {
  id: string;
  wt: string;
  old: ClaimResponse;
  next: ClaimResponse;
  /** a commit of the old owner well before the newer tenure */
  early: string;
}
let late: Bound;
let retried: Bound;
let unkept: Bound;

async function startAgent(): Promise<void> {
  const shipper = new JournalShipper({ pool: s.h.pool, hostId, allowedRoots: [TMP()] });
  const workers = await createWorkers({
    connection,
    namespace: 'default',
    taskQueue: `late-unused-${suffix}`,
    hostId,
    allowedRoots: [TMP()],
    authority: noAuthority,
    dataConverter: s.h.workers.dataConverter,
    shipper,
  });
  const worker = workers[0]!;
  agent = { worker, running: worker.run(), shipper };
}

async function stopAgent(): Promise<void> {
  if (!agent) return;
  const a = agent;
  agent = null;
  if (a.worker.getState() === 'RUNNING') a.worker.shutdown();
  await a.running;
  await a.shipper.stop();
}

async function ok<T>(res: { status: number; body: unknown }): Promise<T> {
  expect({ status: res.status, body: res.status === 200 ? null : res.body }).toEqual({ status: 200, body: null });
  return res.body as T;
}

/** git as a session runs it in the worktree: the tenure's environment from its answer, through the hooks; the exit code. */
function gitWith(wt: string, t: ClaimResponse['tenure'], args: string[], extra: Record<string, string> = {}): number {
  const env = cleanGitEnv({ ...GIT_IDENTITY, ...t!.env, ...extra });
  try {
    execFileSync('git', args, { cwd: wt, env, stdio: ['ignore', 'pipe', 'pipe'] });
    return 0;
  } catch (err) {
    return (err as { status?: number }).status ?? -1;
  }
}

function commitWith(wt: string, t: ClaimResponse['tenure'], file: string, extra: Record<string, string> = {}): string {
  writeFileSync(path.join(wt, file), `${file}\n`);
  expect(gitWith(wt, t, ['add', file], extra)).toBe(0);
  expect(gitWith(wt, t, ['commit', '-q', '-m', file], extra)).toBe(0);
  return git(wt, 'rev-parse', 'HEAD');
}

const projected = (wt: string, key: string): string => {
  try {
    return git(wt, 'config', '--worktree', '--includes', `overdeck.owner.${key}`);
  } catch {
    return '';
  }
};

async function waitForEpoch(wt: string, epoch: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (projected(wt, 'epoch') !== String(epoch) || projected(wt, 'tenure-hash') === '') {
    if (Date.now() > deadline) throw new Error(`the projection of ${wt} never reached epoch ${epoch}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function journalLines(wt: string) {
  const dirs = await worktreeDirs(wt);
  let text = '';
  try {
    text = readFileSync(path.join(dirs.privateDir, JOURNAL_FILE), 'utf8');
  } catch {
    // no journal yet
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => parseJournalLine(l, 0));
}

const refSha = (wt: string, ref: string): string | null => {
  try {
    return git(wt, 'rev-parse', '-q', '--verify', ref);
  } catch {
    return null;
  }
};

async function bindOn(i: number, session: string): Promise<{ id: string; wt: string; old: ClaimResponse }> {
  const w = repo.worktrees[i]!;
  const old = await ok<ClaimResponse>(
    await s.raw('POST', '/v1/bind', {
      token: s.tokens.executor,
      body: { repoRoot: repo.repoRoot, worktreePath: w.path, branch: w.branch, executionSessionId: session, runtime: 'codex-cli', hostId },
    }),
  );
  const wt = await s.h.client.normalize(w.path);
  await waitForEpoch(wt, 1);
  return { id: old.ownershipId, wt, old };
}

const reclaim = (id: string, session: string) =>
  s.raw('POST', `/v1/ownerships/${id}/reclaim`, {
    token: s.tokens.admin,
    body: { executionSessionId: session, runtime: 'codex-cli', force: true, reason: 'host cut off', worker: { workerId: s.workerId } },
  });

beforeAll(async () => {
  s = await startApiStack();
  connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  repo = makeRepo(3);
  await installHooks(repo.repoRoot);
  await startAgent();
  const a = await bindOn(0, `late-a-${suffix}`);
  const c = await bindOn(1, `late-c-${suffix}`);
  const e = await bindOn(2, `late-e-${suffix}`);
  // The reflog dates a move by the committer's clock: this one is an hour before the newer tenure, without the test waiting.
  const hourAgo = { GIT_COMMITTER_DATE: new Date(Date.now() - 3_600_000).toISOString() };
  const early = commitWith(a.wt, a.old.tenure, 'a0.txt', hourAgo);
  const earlyC = commitWith(c.wt, c.old.tenure, 'c0.txt', hourAgo);
  const earlyE = commitWith(e.wt, e.old.tenure, 'e0.txt', hourAgo);
  await agent!.shipper.ship(a.wt);
  await agent!.shipper.ship(c.wt);

  // The host is cut off: its agent stops; an admin takes both worktrees over without it.
  await stopAgent();
  const [b, d, f] = await Promise.all([reclaim(a.id, `late-b-${suffix}`), reclaim(c.id, `late-d-${suffix}`), reclaim(e.id, `late-f-${suffix}`)]);
  late = { ...a, next: await ok<ClaimResponse>(b), early };
  retried = { ...c, next: await ok<ClaimResponse>(d), early: earlyC };
  unkept = { ...e, next: await ok<ClaimResponse>(f), early: earlyE };
}, 180_000);

afterAll(async () => {
  await stopAgent();
  await connection?.close();
  await s?.stop();
});

test("late work that cannot be kept: the host agent writes past it after its first attempts, the log write's shortcut never does", async () => {
  const { id, wt, old } = unkept;
  commitWith(wt, old.tenure, 'e1.txt');
  const record = (await getOwnership(s.h.pool, { ownershipId: id }))!;
  expect(record.epoch).toBe(2);
  // The late ref cannot be made: a file stands where its directory would be (root ignores modes).
  const common = git(wt, 'rev-parse', '--git-common-dir');
  const blocker = path.join(path.isAbsolute(common) ? common : path.join(wt, common), path.dirname(lateRef(id, 1)));
  execFileSync('mkdir', ['-p', path.dirname(blocker)]);
  writeFileSync(blocker, 'not a directory\n');
  try {
    // Inside an activity on its third attempt: the agent's own rule would write past the snapshot now.
    const third = new MockActivityEnvironment({ attempt: 3 });
    const shortcut = createLocalProjector({ hostId, allowedRoots: [TMP()], keyring: testKeyring() });
    await expect(third.run(() => shortcut.project(record))).rejects.toThrow();
    expect(projected(wt, 'epoch')).toBe('1');
    const host = createHostActivities({ allowedRoots: [TMP()], authority: noAuthority, keyring: testKeyring() });
    const written = (await third.run(() => host.applyLocalProjection(record))) as Awaited<ReturnType<typeof host.applyLocalProjection>>;
    expect(written.result).toBe('written');
    expect(projected(wt, 'epoch')).toBe('2');
  } finally {
    rmSync(blocker, { force: true });
  }
});

test('a retried projection write preserves the late work once: one ref, one journal line', async () => {
  const { id, wt, old } = retried;
  const c1 = commitWith(wt, old.tenure, 'c1.txt');
  const record = (await getOwnership(s.h.pool, { ownershipId: id }))!;
  expect(record.epoch).toBe(2);
  const ref = lateRef(id, 1);

  // A first attempt preserved and died before its projection write; the retry finds the same snapshot.
  const first = await preserveLateWork(wt, record, { allowedRoots: [TMP()] });
  const again = await preserveLateWork(wt, record, { allowedRoots: [TMP()] });
  expect(first).toMatchObject({ ref, commits: [c1], created: true, journaled: true, uncommitted: false, head: c1 });
  expect(again).toMatchObject({ ref, sha: first!.sha, commits: [c1], created: false, journaled: false });
  // Then the whole activity, twice, as a retried one would run.
  const host = createHostActivities({ allowedRoots: [TMP()], authority: noAuthority, keyring: testKeyring() });
  expect((await host.applyLocalProjection(record)).result).toBe('written');
  await host.applyLocalProjection(record);
  expect(projected(wt, 'epoch')).toBe('2');

  expect(refSha(wt, ref)).toBe(first!.sha);
  const preserved = (await journalLines(wt)).filter((l) => l?.kind === 'late_preserved');
  expect(preserved).toHaveLength(1);
  expect(preserved[0]).toMatchObject({ ref, new: first!.sha, epoch: '1', ownership: id, session: old.tenure!.executionSessionId, commits: c1, more: '0' });
});

test('late commits of the old tenure are preserved before the newer projection, shown as late attempts of that tenure, and attributed to its session', async () => {
  const { id, wt, old, next, early } = late;
  const oldSession = old.tenure!.executionSessionId;
  const newSession = next.tenure!.executionSessionId;
  expect(next.tenure!.epoch).toBe(2);
  const recorded = await ok<WireRecord>(await s.raw('GET', `/v1/ownership?ownershipId=${id}`, { token: s.tokens.reader }));
  expect(recorded.wipNotPreserved).toMatchObject({ executionSessionId: oldSession });

  // The hooks still enforce epoch 1: the old owner's proof passes, the new owner's does not yet.
  expect(projected(wt, 'epoch')).toBe('1');
  const a1 = commitWith(wt, old.tenure, 'a1.txt');
  const a2 = commitWith(wt, old.tenure, 'a2.txt');
  writeFileSync(path.join(wt, 'a1.txt'), 'changed, not committed\n');
  writeFileSync(path.join(wt, 'untracked.txt'), 'never added\n');

  // The host is back: the pending projection write runs.
  await startAgent();
  await waitForEpoch(wt, 2);
  const ref = lateRef(id, 1);
  const sha = refSha(wt, ref);
  expect(sha).not.toBeNull();
  // HEAD at that moment is the snapshot's parent: the late commits are in its history, the files on disk in its tree.
  expect(git(wt, 'rev-parse', `${sha}^1`)).toBe(a2);
  expect(git(wt, 'rev-list', sha!)).toContain(a1);
  expect(git(wt, 'show', `${sha}:a1.txt`)).toBe('changed, not committed');
  expect(git(wt, 'show', `${sha}:untracked.txt`)).toBe('never added');
  const preserved = (await journalLines(wt)).filter((l) => l?.kind === 'late_preserved');
  expect(preserved).toHaveLength(1);
  expect(preserved[0]).toMatchObject({ ref, new: sha, old: a2, epoch: '1', session: oldSession, commits: `${a1}:${a2}`, uncommitted: '1' });

  // The new owner works on under the newer projection.
  expect(gitWith(wt, next.tenure, ['checkout', '-q', '--', 'a1.txt'])).toBe(0);
  rmSync(path.join(wt, 'untracked.txt'));
  const b1 = commitWith(wt, next.tenure, 'b1.txt');
  await agent!.shipper.ship(wt);

  const h = await ok<HistoryResponse>(await s.raw('GET', `/v1/history?ownershipId=${id}`, { token: s.tokens.reader }));
  const entry = h.ownerships.find((o) => o.ownershipId === id)!;
  expect(entry.lateAttempts).toHaveLength(1);
  expect(entry.lateAttempts![0]).toMatchObject({
    ownershipId: id,
    epoch: 1,
    executionSessionId: oldSession,
    ref,
    sha,
    head: a2,
    uncommitted: true,
    moreCommits: 0,
    commits: [
      { commit: a1, status: 'attributed', ownershipId: id, epoch: 1, executionSessionId: oldSession },
      { commit: a2, status: 'attributed', ownershipId: id, epoch: 1, executionSessionId: oldSession },
    ],
  });
  // The early commit was the old tenure's in time: not late.
  expect(JSON.stringify(entry.lateAttempts)).not.toContain(early);

  const cli = (args: string[]) => runCli(args, { cwd: repo.repoRoot, env: apiEnv(s.url, s.tokens.reader) });
  const text = await cli(['history', wt]);
  expect(text).toMatchObject({ code: 0, stderr: '' });
  const lines = text.stdout.split('\n');
  const at = lines.findIndex((l) => l.startsWith('    epoch 1  '));
  expect(lines[at + 1]).toBe(
    `      late attempts of ${oldSession} (epoch 1) after the next tenure began, preserved under ${ref} (${sha!.slice(0, 12)}), with uncommitted files, reported ${entry.lateAttempts![0]!.at}:`,
  );
  expect(lines[at + 2]).toBe(`        ${a1.slice(0, 12)}  session ${oldSession}, epoch 1`);
  expect(lines[at + 3]).toBe(`        ${a2.slice(0, 12)}  session ${oldSession}, epoch 1`);
  expect(lines[at + 4]).toMatch(/^ {4}epoch 2 {2}forced reclaim from /);
  const json = JSON.parse((await cli(['history', wt, '--json'])).stdout) as HistoryResponse;
  expect(json.ownerships.find((o) => o.ownershipId === id)!.lateAttempts).toEqual(entry.lateAttempts);

  // Landed: provenance names the old session for a late commit, the new one for its own.
  git(repo.repoRoot, 'merge', '-q', '--squash', repo.worktrees[0]!.branch);
  git(repo.repoRoot, 'commit', '-q', '-m', 'squash');
  const squash = git(repo.repoRoot, 'rev-parse', 'HEAD');
  const landed = await s
    .api(s.tokens.landing)
    .land({ ownershipId: id, sourceHead: b1, landedBranch: 'main', landedHead: squash, landedAt: new Date().toISOString() });
  expect(landed.status).toBe('recorded');
  const deadline = Date.now() + 30_000;
  while ((await s.h.pool.query('SELECT 1 FROM landing_commits WHERE ownership_id = $1', [id])).rowCount === 0) {
    if (Date.now() > deadline) throw new Error('no landing commits');
    await new Promise((r) => setTimeout(r, 100));
  }
  const authorOf = async (sha1: string) => {
    const p = JSON.parse((await cli(['provenance', sha1, '--repo', repo.repoRoot, '--json'])).stdout) as {
      provenance: { authors: { commit: string; executionSessionId: string | null; epoch: number | null }[] };
    };
    return p.provenance.authors.find((x) => x.commit === sha1);
  };
  expect(await authorOf(a1)).toMatchObject({ executionSessionId: oldSession, epoch: 1 });
  expect(await authorOf(a2)).toMatchObject({ executionSessionId: oldSession, epoch: 1 });
  expect(await authorOf(b1)).toMatchObject({ executionSessionId: newSession, epoch: 2 });
});
