import { execFileSync } from 'node:child_process';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { OwnershipViewOut } from '../../src/contract/http';
import { OwnershipError } from '../../src/client';
import type { LivenessAuthority } from '../../src/activities/liveness';
import { readEvents } from '../../src/store/event-store';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { executorPrincipal, startHarness, waitForView, type Harness } from '../support/harness';

/**
 * "One live owner per worktree, and everyone else is told so", attacked the way a careless or
 * hostile caller would: each test is a scenario that broke the promise before it was fixed.
 * Real HTTP API, real Temporal, real PostgreSQL, real git.
 */

let s: ApiStack;
let repo: RepoFixture;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(8);
});
afterAll(async () => s?.stop());

type Res = { status: number; body: unknown };
const code = (r: Res) => (r.body as { code?: string }).code;
const expectError = (r: Res, status: number, c: string) => expect({ status: r.status, code: code(r) }).toEqual({ status, code: c });

function bindBody(i: number, session: string, extra: Record<string, unknown> = {}) {
  const wt = repo.worktrees[i]!;
  return { repoRoot: repo.repoRoot, worktreePath: wt.path, branch: wt.branch, executionSessionId: session, runtime: 'codex-cli', ...extra };
}

async function bind(i: number, session: string, token = s.tokens.executor, extra: Record<string, unknown> = {}): Promise<OwnershipViewOut> {
  const res = await s.raw('POST', '/v1/bind', { token, body: bindBody(i, session, extra) });
  expect({ status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({ status: 200, body: 'ok' });
  return res.body as OwnershipViewOut;
}

const post = (id: string, what: string, token: string, body: unknown) => s.raw('POST', `/v1/ownerships/${id}/${what}`, { token, body });

async function liveRows(worktreePath: string): Promise<{ ownership_id: string; owner_session_id: string | null }[]> {
  const res = await s.h.pool.query(
    `SELECT ownership_id, owner_session_id FROM ownerships WHERE worktree_path = $1 AND state NOT IN ('released', 'landed', 'closed')`,
    [worktreePath],
  );
  return res.rows;
}

describe('1. one worktree is one ownership, however its repository root or path is spelled', () => {
  test('a bind naming a parent directory as the repository root is refused, nothing is created', async () => {
    const a = await bind(0, 'sp-a');
    const spoofed = await s.raw('POST', '/v1/bind', { token: s.tokens.otherExecutor, body: bindBody(0, 'sp-b', { repoRoot: path.dirname(repo.repoRoot) }) });
    expectError(spoofed, 400, 'repo_root_mismatch');
    expect(await liveRows(repo.worktrees[0]!.path)).toEqual([{ ownership_id: a.ownershipId, owner_session_id: 'sp-a' }]);
  });

  test('without a repository root, or through a symlinked path, the second caller meets the first owner', async () => {
    const a = await bind(1, 'sp-c');
    const { repoRoot: _omit, ...noRoot } = bindBody(1, 'sp-d');
    expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.otherExecutor, body: noRoot }), 409, 'worktree_owned');
    const linkDir = mkdtempSync(path.join(process.env.OD_TEST_TMP!, 'link-'));
    const link = path.join(linkDir, 'alias');
    symlinkSync(repo.worktrees[1]!.path, link);
    expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.otherExecutor, body: { ...noRoot, worktreePath: link } }), 409, 'worktree_owned');
    expectError(
      await s.raw('POST', '/v1/bind', { token: s.tokens.otherExecutor, body: { ...noRoot, worktreePath: `${repo.worktrees[1]!.path}/.` } }),
      409,
      'worktree_owned',
    );
    expect((await liveRows(repo.worktrees[1]!.path)).map((r) => r.ownership_id)).toEqual([a.ownershipId]);
  });

  test('a --separate-git-dir repository: the root is what git reports from every worktree (its git dir), whoever asks', async () => {
    const dir = mkdtempSync(path.join(process.env.OD_TEST_TMP!, 'sep-'));
    const main = path.join(dir, 'product');
    execFileSync('git', ['init', '-q', '-b', 'main', '--separate-git-dir', path.join(dir, 'gitdir'), main]);
    writeFileSync(path.join(main, 'a.txt'), 'a\n');
    git(main, 'add', '.');
    git(main, 'commit', '-q', '-m', 'initial');
    const wt = path.join(dir, 'wt');
    git(main, 'worktree', 'add', '-q', '-b', 'wt/sep', wt);
    const body = { worktreePath: wt, branch: 'wt/sep', executionSessionId: 'sep-a', runtime: 'codex-cli' };
    const res = await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body });
    expect(res.status).toBe(200);
    // A linked worktree has no pointer back to the main one: git names the repository by its git dir.
    expect((res.body as OwnershipViewOut).repoRoot).toBe(path.join(dir, 'gitdir'));
    expectError(
      await s.raw('POST', '/v1/bind', { token: s.tokens.otherExecutor, body: { ...body, executionSessionId: 'sep-b', repoRoot: main } }),
      400,
      'repo_root_mismatch',
    );
    expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.otherExecutor, body: { ...body, executionSessionId: 'sep-b' } }), 409, 'worktree_owned');
  });
});

describe('2. a handoff goes to the worker it names', () => {
  test('another worker accepting as the named successor session is refused; the real successor then accepts', async () => {
    const a = await bind(2, 'ho-a');
    const started = await post(a.ownershipId, 'handoff', s.tokens.executor, { executionSessionId: 'ho-a', epoch: 1, toExecutionSessionId: 'ho-b' });
    expect(started.status).toBe(200);
    const handoffId = (started.body as OwnershipViewOut).handoff!.handoffId;
    // Not derivable from what every reader sees (the ownership id and seq).
    expect(handoffId).not.toContain(a.ownershipId.slice(4));
    const before = await readEvents(s.h.pool, a.ownershipId);
    const hijack = await post(a.ownershipId, 'handoff/accept', s.tokens.otherExecutor, { handoffId, executionSessionId: 'ho-b', runtime: 'codex-cli' });
    expectError(hijack, 409, 'handoff_mismatch');
    expect(await readEvents(s.h.pool, a.ownershipId)).toEqual(before);
    const accepted = await post(a.ownershipId, 'handoff/accept', s.tokens.executor, { handoffId, executionSessionId: 'ho-b', runtime: 'codex-cli' });
    expect(accepted.status).toBe(200);
    expect((accepted.body as OwnershipViewOut).worker?.workerId).toBe(s.workerId);
    // A replay by the other worker is not a replay: it is refused too.
    expectError(
      await post(a.ownershipId, 'handoff/accept', s.tokens.otherExecutor, { handoffId, executionSessionId: 'ho-b', runtime: 'codex-cli' }),
      409,
      'no_pending_handoff',
    );
  });

  test('a handoff to another worker can only be accepted by that worker', async () => {
    const a = await bind(3, 'ho-c');
    const started = await post(a.ownershipId, 'handoff', s.tokens.executor, {
      executionSessionId: 'ho-c',
      epoch: 1,
      toExecutionSessionId: 'ho-d',
      toWorkerId: s.otherWorkerId,
    });
    const handoffId = (started.body as OwnershipViewOut).handoff!.handoffId;
    expectError(
      await post(a.ownershipId, 'handoff/accept', s.tokens.executor, { handoffId, executionSessionId: 'ho-d', runtime: 'codex-cli' }),
      409,
      'handoff_mismatch',
    );
    const ok = await post(a.ownershipId, 'handoff/accept', s.tokens.otherExecutor, { handoffId, executionSessionId: 'ho-d', runtime: 'codex-cli' });
    expect(ok.status).toBe(200);
    expect((ok.body as OwnershipViewOut).worker?.workerId).toBe(s.otherWorkerId);
    expect((ok.body as OwnershipViewOut).epoch).toBe(2);
  });

  test("a bind naming the owner's session from another worker is not a replay", async () => {
    const a = await bind(4, 'rp-a');
    const res = await s.raw('POST', '/v1/bind', { token: s.tokens.otherExecutor, body: bindBody(4, 'rp-a') });
    expectError(res, 409, 'worktree_owned');
    expect((await readEvents(s.h.pool, a.ownershipId)).length).toBe(a.seq);
  });
});

describe('4. the loser of an ownership learns it on its next call', () => {
  test('after a handoff the old session heartbeats into 409 not_owner; a stale epoch into stale_epoch', async () => {
    const a = await bind(5, 'st-a');
    expect((await post(a.ownershipId, 'heartbeat', s.tokens.executor, { executionSessionId: 'st-a', epoch: 1 })).status).toBe(202);
    const started = await post(a.ownershipId, 'handoff', s.tokens.executor, { executionSessionId: 'st-a', epoch: 1, toExecutionSessionId: 'st-b' });
    const handoffId = (started.body as OwnershipViewOut).handoff!.handoffId;
    expect((await post(a.ownershipId, 'handoff/accept', s.tokens.executor, { handoffId, executionSessionId: 'st-b', runtime: 'codex-cli' })).status).toBe(200);
    expectError(await post(a.ownershipId, 'heartbeat', s.tokens.executor, { executionSessionId: 'st-a', epoch: 1 }), 409, 'not_owner');
    expectError(await post(a.ownershipId, 'heartbeat', s.tokens.executor, { executionSessionId: 'st-b', epoch: 1 }), 409, 'stale_epoch');
    expect((await post(a.ownershipId, 'heartbeat', s.tokens.executor, { executionSessionId: 'st-b', epoch: 2 })).status).toBe(202);
  });

  test('after a forced reclaim the old owner is told too', async () => {
    const a = await bind(6, 'st-c');
    const reclaimed = await post(a.ownershipId, 'reclaim', s.tokens.admin, {
      executionSessionId: 'st-d',
      runtime: 'codex-cli',
      force: true,
      reason: 'test',
      worker: { workerId: s.otherWorkerId },
    });
    expect(reclaimed.status).toBe(200);
    expect(['applied', 'pending', 'failed']).toContain((reclaimed.body as OwnershipViewOut).projection);
    expectError(await post(a.ownershipId, 'heartbeat', s.tokens.executor, { executionSessionId: 'st-c', epoch: 1 }), 409, 'not_owner');
    // The new owner's session through the old owner's worker is still not allowed.
    expectError(await post(a.ownershipId, 'heartbeat', s.tokens.executor, { executionSessionId: 'st-d', epoch: 2 }), 403, 'worker_mismatch');
    expect((await post(a.ownershipId, 'heartbeat', s.tokens.otherExecutor, { executionSessionId: 'st-d', epoch: 2 })).status).toBe(202);
  });
});

describe('8. fencing says where it stands and messages reach the lifecycle they name', () => {
  test('owner-changing answers say whether the worktree enforces them yet', async () => {
    const a = await bind(7, 'fx-a');
    expect(a.projection).toBe('applied');
    expect(a.projectionSync?.localSeq).toBe(a.seq);
  });

  test('a message naming an ended lifecycle does not act on the next one of the same worktree', async () => {
    const r = makeRepo(1);
    const wt = r.worktrees[0]!;
    const req = {
      repoRoot: r.repoRoot,
      worktreePath: wt.path,
      branch: wt.branch,
      runtime: 'codex-cli',
      worker: { runId: null, workerId: 'fence-w' },
      principal: executorPrincipal('fence-w'),
    };
    const first = await s.h.client.bind({ ...req, executionSessionId: 'fence-1' });
    await s.h.client.release({ worktreePath: wt.path }, { executionSessionId: 'fence-1', epoch: 1, principal: executorPrincipal('fence-w') });
    const landedHead = git(r.repoRoot, 'rev-parse', 'HEAD');
    const landing = { kind: 'landing' as const, id: 'landing-test' };
    await s.h.client.landed(
      { worktreePath: wt.path },
      { sourceHead: landedHead, landedBranch: 'main', landedHead, landedAt: new Date().toISOString(), principal: landing },
    );
    await s.h.client.worktreeRemoved({ worktreePath: wt.path }, { reason: 'test', principal: landing });
    const workflowId = await s.h.client.workflowIdOf({ worktreePath: wt.path });
    await s.h.temporal.workflow.getHandle(workflowId).result();
    const second = await s.h.client.bind({ ...req, executionSessionId: 'fence-2' });
    expect(second.ownershipId).not.toBe(first.ownershipId);
    const stale = await s.h.client
      .release({ workflowId, ownershipId: first.ownershipId }, { executionSessionId: 'fence-2', epoch: 1, principal: executorPrincipal('fence-w') })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(stale).toBeInstanceOf(OwnershipError);
    expect((stale as OwnershipError).code).toBe('ownership_mismatch');
    expect((await s.h.client.projection({ workflowId }))?.state).toBe('active');
  });

  test("an executor's run is checked against its token's run", async () => {
    const r = makeRepo(1);
    const wt = r.worktrees[0]!;
    const principal = { kind: 'executor' as const, id: 'exec-run', workerId: 'run-w', runId: 'run-1' };
    const err = await s.h.client
      .bind({
        repoRoot: r.repoRoot,
        worktreePath: wt.path,
        branch: wt.branch,
        executionSessionId: 'run-s',
        runtime: 'codex-cli',
        worker: { workerId: 'run-w', runId: 'run-2' },
        principal,
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect((err as OwnershipError).code).toBe('worker_mismatch');
  });
});

describe('5. a liveness verdict lands only on the owner it was asked about', () => {
  let h: Harness;
  // The authority answers only when the test says so, the first question first.
  const waiting: ((v: 'dead') => void)[] = [];
  let asked = 0;
  const gated: LivenessAuthority = {
    async check() {
      asked++;
      const verdict = await new Promise<'dead'>((resolve) => waiting.push(resolve));
      return { verdict, detail: 'gated' };
    },
  };
  beforeAll(async () => {
    h = await startHarness({ authority: gated });
  });
  // Answer whatever is still asked (the new owner falls silent too), so the worker can shut down.
  afterAll(async () => {
    for (const answer of waiting.splice(0)) answer('dead');
    await h?.shutdown();
  });

  test('the old owner falls silent, is asked about, hands off meanwhile; the late "dead" does not make the new owner stale', async () => {
    const r = makeRepo(1);
    const wt = r.worktrees[0]!;
    const p = executorPrincipal('lv-w');
    const ref = { worktreePath: wt.path };
    await h.client.bind({
      worktreePath: wt.path,
      branch: wt.branch,
      executionSessionId: 'lv-a',
      runtime: 'codex-cli',
      worker: { workerId: 'lv-w', runId: null },
      principal: p,
      leaseTtlMs: 1_000,
    });
    const deadline = Date.now() + 20_000;
    while (asked === 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
    expect(asked).toBe(1);
    const started = await h.client.handoff(ref, { executionSessionId: 'lv-a', epoch: 1, principal: p, toExecutionSessionId: 'lv-b', toWorkerId: 'lv-w' });
    await h.client.acceptHandoff(ref, {
      handoffId: started.handoff!.handoffId,
      executionSessionId: 'lv-b',
      runtime: 'codex-cli',
      worker: { workerId: 'lv-w', runId: null },
      principal: p,
      leaseTtlMs: 1_000,
    });
    // The new owner is silent too by the time the verdict about the old one arrives.
    await new Promise((res) => setTimeout(res, 1_500));
    waiting.shift()!('dead');
    await new Promise((res) => setTimeout(res, 1_500));
    const v = await waitForView(h.client, ref, (x) => x.owner?.executionSessionId === 'lv-b');
    expect(v.state).toBe('active');
    expect(v.epoch).toBe(2);
    const events = await readEvents(h.pool, v.ownershipId);
    expect(events.filter((e) => e.type === 'ownership.stale')).toEqual([]);
  });
});
