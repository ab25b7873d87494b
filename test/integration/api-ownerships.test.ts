import { readEvents } from '../../src/store/event-store';
import type { OwnershipViewOut } from '../../src/contract/http';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';

/**
 * The HTTP API over real HTTP (a listening server, fetch) on the run's Temporal and PostgreSQL:
 * bind and every per-ownership message, each with its refusals, each refusal changing nothing.
 */

let s: ApiStack;
let repo: RepoFixture;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(7);
});
afterAll(async () => s?.stop());

const OWN_ID_UNKNOWN = 'own_01JZZZZZZZZZZZZZZZZZZZZZZZ';

function bindBody(i: number, session: string, extra: Record<string, unknown> = {}) {
  const wt = repo.worktrees[i]!;
  return {
    repoRoot: repo.repoRoot,
    worktreePath: wt.path,
    branch: wt.branch,
    executionSessionId: session,
    runtime: 'codex-cli',
    lane: `lane-${i}`,
    planRef: `docs/plans/${i}.md`,
    ...extra,
  };
}

async function bind(i: number, session: string, token = s.tokens.executor, extra: Record<string, unknown> = {}): Promise<OwnershipViewOut> {
  const res = await s.raw('POST', '/v1/bind', { token, body: bindBody(i, session, extra) });
  expect(res.status).toBe(200);
  return res.body as OwnershipViewOut;
}

function expectError(res: { status: number; body: unknown }, status: number, code: string): void {
  expect({ status: res.status, code: (res.body as { code?: string }).code }).toEqual({ status, code });
  expect(typeof (res.body as { message?: unknown }).message).toBe('string');
}

async function snapshot(ownershipId: string) {
  const events = await readEvents(s.h.pool, ownershipId);
  const row = await s.h.pool.query('SELECT state, epoch, seq, record FROM ownerships WHERE ownership_id = $1', [ownershipId]);
  return { events, row: row.rows[0] };
}

async function rowsFor(worktreePath: string): Promise<number> {
  const res = await s.h.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM ownerships WHERE worktree_path = $1', [worktreePath]);
  return res.rows[0]!.n;
}

test('POST /v1/bind: the executor binds for its own worker; a replay returns the same ownership', async () => {
  const view = await bind(0, 'api-s0');
  expect(view.ownershipId).toMatch(/^own_[0-9A-Z]{26}$/);
  expect(view.state).toBe('active');
  expect(view.epoch).toBe(1);
  expect(view.worker).toEqual({ workerId: s.workerId, runId: null });
  expect(view.owner).toMatchObject({ executionSessionId: 'api-s0', runtime: 'codex-cli', conversation: null });
  expect(view.lane).toBe('lane-0');
  expect(view.liveness?.status).toBe('live');
  const again = await bind(0, 'api-s0');
  expect(again.ownershipId).toBe(view.ownershipId);
  expect(again.seq).toBe(view.seq);
  expect((await readEvents(s.h.pool, view.ownershipId)).length).toBe(1);

  // The flat spelling of docs/operations.md#bind: the executor may name its own worker.
  const named = await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: bindBody(0, 'api-s0', { workerId: s.workerId, runId: 'run-1' }) });
  expect(named.status).toBe(200);
  expect((named.body as OwnershipViewOut).ownershipId).toBe(view.ownershipId);
});

test('POST /v1/bind: refusals carry their code and change nothing', async () => {
  const owned = await bind(1, 'api-s1');
  const before = await snapshot(owned.ownershipId);
  const free = repo.worktrees[2]!.path;

  // authentication and authorization come first
  let res = await s.raw('POST', '/v1/bind', { body: bindBody(2, 'x') });
  expectError(res, 401, 'unauthenticated');
  expect(res.headers.get('www-authenticate')).toBe('Bearer');
  expectError(await s.raw('POST', '/v1/bind', { token: 'not-a-known-token', body: bindBody(2, 'x') }), 401, 'unauthenticated');
  expectError(await s.raw('POST', '/v1/bind', { headers: { authorization: 'Basic Zm9vOmJhcg==' }, body: bindBody(2, 'x') }), 401, 'unauthenticated');
  expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.reader, body: bindBody(2, 'x') }), 403, 'forbidden');
  expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.landing, body: bindBody(2, 'x') }), 403, 'forbidden');
  // a 401 says nothing about the input, even a bad one
  expectError(await s.raw('POST', '/v1/bind', { body: { conversation: {} } }), 401, 'unauthenticated');

  // the conversation is never the caller's to name
  const conv = { conversationId: '6f1c2a34-9b7d-4e21-8c55-0d3e4f5a6b7c', conversationUrl: 'https://chatgpt.com/c/6f1c2a34-9b7d-4e21-8c55-0d3e4f5a6b7c' };
  expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: bindBody(2, 'x', { conversation: conv }) }), 400, 'conversation_forbidden');
  expectError(
    await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: bindBody(2, 'x', { conversationId: conv.conversationId }) }),
    400,
    'conversation_forbidden',
  );
  expectError(
    await s.raw('POST', '/v1/bind', { token: s.tokens.admin, body: bindBody(2, 'x', { worker: { workerId: 'w' }, conversationUrl: conv.conversationUrl }) }),
    400,
    'conversation_forbidden',
  );

  // schema: unknown fields, wrong types, missing fields, malformed JSON
  res = await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: bindBody(2, 'x', { principal: { kind: 'admin', id: 'me' } }) });
  expectError(res, 400, 'unknown_field');
  expect((res.body as { details?: { fields?: string[] } }).details?.fields).toEqual(['principal']);
  expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: bindBody(2, 'x', { bogus: 1 }) }), 400, 'unknown_field');
  expectError(
    await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: bindBody(2, 'x', { worker: { workerId: s.workerId, extra: 1 } }) }),
    400,
    'unknown_field',
  );
  expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: bindBody(2, 'x', { branch: 42 }) }), 400, 'invalid_input');
  expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: bindBody(2, 'has spaces') }), 400, 'invalid_input');
  expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: bindBody(2, 'x', { leaseTtlMs: 5 }) }), 400, 'invalid_input');
  const { executionSessionId: _drop, ...missing } = bindBody(2, 'x');
  expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: missing }), 400, 'invalid_input');
  expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.executor, rawBody: '{"repoRoot": ' }), 400, 'invalid_input');
  expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.executor, rawBody: '[]' }), 400, 'invalid_input');
  expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.executor }), 400, 'invalid_input');
  expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.executor, rawBody: 'x'.repeat(70_000) }), 413, 'invalid_input');

  // paths are checked against the allowed roots before anything starts
  expectError(
    await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: bindBody(2, 'x', { worktreePath: '/etc' }) }),
    400,
    'path_outside_allowed_roots',
  );
  expectError(
    await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: bindBody(2, 'x', { worktreePath: `${free}/../../../../../../../../etc` }) }),
    400,
    'path_outside_allowed_roots',
  );

  // the worker: an executor only its own; an admin must name one
  expectError(
    await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: bindBody(2, 'x', { worker: { workerId: s.otherWorkerId } }) }),
    403,
    'worker_mismatch',
  );
  expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: bindBody(2, 'x', { workerId: s.otherWorkerId }) }), 403, 'worker_mismatch');
  expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.admin, body: bindBody(2, 'x') }), 400, 'invalid_input');
  expectError(
    await s.raw('POST', '/v1/bind', { token: s.tokens.admin, body: bindBody(2, 'x', { worker: { workerId: 'a' }, workerId: 'b' }) }),
    400,
    'invalid_input',
  );

  // another live session on an owned worktree
  res = await s.raw('POST', '/v1/bind', { token: s.tokens.otherExecutor, body: bindBody(1, 'api-intruder') });
  expectError(res, 409, 'worktree_owned');
  expect((res.body as { details: { owner: Record<string, unknown> } }).details.owner).toMatchObject({
    ownershipId: owned.ownershipId,
    executionSessionId: 'api-s1',
    epoch: 1,
  });

  expect(await snapshot(owned.ownershipId)).toEqual(before);
  expect(await rowsFor(free)).toBe(0);
});

test('POST /v1/bind by an admin acts for the named worker', async () => {
  const view = await bind(2, 'api-admin-s2', s.tokens.admin, { worker: { workerId: 'admin-chosen-worker', runId: 'run-x' } });
  expect(view.worker).toEqual({ workerId: 'admin-chosen-worker', runId: 'run-x' });
});

interface RouteCase {
  path: string;
  token: () => string;
  body: (v: OwnershipViewOut) => Record<string, unknown>;
  /** a body of the right shape with one wrongly typed field */
  wrongType: (v: OwnershipViewOut) => Record<string, unknown>;
  /** owner-only routes: an executor of another worker is refused at the API */
  ownerOnly?: boolean;
  /** accept/reclaim: a new owner, whose body may name a worker */
  newOwner?: boolean;
}

const owner = (v: OwnershipViewOut) => ({ executionSessionId: v.owner!.executionSessionId, epoch: v.epoch });
const sha = (c: string) => c.repeat(40);

const ROUTES: RouteCase[] = [
  { path: 'heartbeat', token: () => s.tokens.executor, body: owner, wrongType: (v) => ({ ...owner(v), epoch: 'one' }), ownerOnly: true },
  {
    path: 'handoff',
    token: () => s.tokens.executor,
    body: (v) => ({ ...owner(v), toExecutionSessionId: 'next' }),
    wrongType: (v) => ({ ...owner(v), toExecutionSessionId: 7 }),
    ownerOnly: true,
  },
  {
    path: 'handoff/accept',
    token: () => s.tokens.executor,
    body: () => ({ handoffId: 'h-1', executionSessionId: 'next', runtime: 'codex-cli' }),
    wrongType: () => ({ handoffId: 1, executionSessionId: 'next' }),
    newOwner: true,
  },
  { path: 'handoff/cancel', token: () => s.tokens.executor, body: owner, wrongType: (v) => ({ ...owner(v), epoch: -1 }), ownerOnly: true },
  { path: 'release', token: () => s.tokens.executor, body: owner, wrongType: (v) => ({ ...owner(v), reason: 5 }), ownerOnly: true },
  {
    path: 'reclaim',
    token: () => s.tokens.executor,
    body: () => ({ executionSessionId: 'next', runtime: 'codex-cli' }),
    wrongType: () => ({ executionSessionId: 'next', force: 'yes' }),
    newOwner: true,
  },
  { path: 'submit', token: () => s.tokens.executor, body: owner, wrongType: (v) => ({ ...owner(v), head: 'not-a-sha' }), ownerOnly: true },
  {
    path: 'plan',
    token: () => s.tokens.executor,
    body: (v) => ({ ...owner(v), lane: 'other-lane' }),
    wrongType: (v) => ({ ...owner(v), lane: ['x'] }),
    ownerOnly: true,
  },
  {
    path: 'rename-branch',
    token: () => s.tokens.executor,
    body: (v) => ({ ...owner(v), from: v.branch, to: 'wt/renamed' }),
    wrongType: (v) => ({ ...owner(v), from: v.branch, to: '' }),
    ownerOnly: true,
  },
  {
    path: 'landed',
    token: () => s.tokens.landing,
    body: () => ({ sourceHead: sha('a'), landedBranch: 'main', landedHead: sha('b'), landedAt: new Date().toISOString() }),
    wrongType: () => ({ sourceHead: sha('a'), landedBranch: 'main', landedHead: sha('b'), landedAt: 'yesterday' }),
  },
  { path: 'worktree-removed', token: () => s.tokens.landing, body: () => ({}), wrongType: () => ({ reason: 5 }) },
];

test('every per-ownership route refuses bad input, bad ids, missing auth and the wrong principal, changing nothing', async () => {
  const v = await bind(3, 'api-s3');
  const before = await snapshot(v.ownershipId);
  const url = (id: string, p: string) => `/v1/ownerships/${id}/${p}`;
  for (const r of ROUTES) {
    const tag = (res: { status: number; body: unknown }) => ({ route: r.path, ...res });
    const body = r.body(v);
    const call = (o: { token?: string | null; body?: unknown; id?: string }) =>
      s.raw('POST', url(o.id ?? v.ownershipId, r.path), { token: o.token === undefined ? r.token() : o.token, body: o.body ?? body }).then(tag);

    expectError(await call({ token: null }), 401, 'unauthenticated');
    expectError(await call({ token: s.tokens.reader }), 403, 'forbidden');
    expectError(await call({ token: r.path === 'landed' || r.path === 'worktree-removed' ? s.tokens.executor : s.tokens.landing }), 403, 'forbidden');
    expectError(await call({ body: { ...body, bogus: true } }), 400, 'unknown_field');
    expectError(await call({ body: { ...body, principal: { kind: 'admin', id: 'x' } } }), 400, 'unknown_field');
    expectError(await call({ body: r.wrongType(v) }), 400, 'invalid_input');
    expectError(await call({ id: 'not-an-id' }), 400, 'invalid_input');
    expectError(await call({ id: OWN_ID_UNKNOWN }), 404, 'not_found');
    if (r.ownerOnly) expectError(await call({ token: s.tokens.otherExecutor }), 403, 'worker_mismatch');
    if (r.newOwner) {
      expectError(await call({ body: { ...body, conversation: { conversationId: 'x' } } }), 400, 'conversation_forbidden');
      expectError(await call({ body: { ...body, worker: { workerId: s.otherWorkerId } } }), 403, 'worker_mismatch');
    }
  }
  // worktree-removed: the caller's word is checked with git on the host, and force is an admin's with a reason.
  const removed = (token: string, body: Record<string, unknown>) => s.raw('POST', url(v.ownershipId, 'worktree-removed'), { token, body }).then((res) => res);
  expectError(await removed(s.tokens.landing, { reason: 'cleanup' }), 409, 'worktree_present');
  expectError(await removed(s.tokens.landing, { reason: 'cleanup', force: true }), 403, 'force_requires_admin');
  expectError(await removed(s.tokens.admin, { force: true }), 400, 'force_requires_reason');
  expectError(await removed(s.tokens.admin, { reason: ' ', force: true }), 400, 'force_requires_reason');
  expect(await snapshot(v.ownershipId)).toEqual(before);
});

test('worktree-removed forced by an admin over the host: recorded as forced, naming the admin', async () => {
  const v = await bind(6, 'api-f6');
  const res = await s.raw('POST', `/v1/ownerships/${v.ownershipId}/worktree-removed`, {
    token: s.tokens.admin,
    body: { reason: 'the disk was replaced; the host still lists it', force: true },
  });
  expect({ status: res.status, body: res.body }).toEqual({ status: 202, body: { accepted: true, status: 'recorded' } });
  const removal = (await readEvents(s.h.pool, v.ownershipId)).find((e) => e.type === 'ownership.worktree_removed');
  expect(removal).toMatchObject({
    actor: { principal: expect.stringMatching(/^admin:/) },
    data: { reason: 'the disk was replaced; the host still lists it', forced: true },
  });
});

test('state refusals (epoch, owner, handoff, force) are 409/403/400 with their codes and change nothing', async () => {
  const v = await bind(4, 'api-s4');
  const id = v.ownershipId;
  const before = await snapshot(id);
  const post = (p: string, body: Record<string, unknown>, token = s.tokens.executor) => s.raw('POST', `/v1/ownerships/${id}/${p}`, { token, body });

  expectError(await post('release', { executionSessionId: 'api-s4', epoch: 2 }), 409, 'stale_epoch');
  expectError(await post('release', { executionSessionId: 'someone-else', epoch: 1 }), 409, 'not_owner');
  expectError(await post('submit', { executionSessionId: 'api-s4', epoch: 9 }), 409, 'stale_epoch');
  expectError(await post('handoff/cancel', { executionSessionId: 'api-s4', epoch: 1 }), 409, 'no_pending_handoff');
  expectError(await post('handoff/accept', { handoffId: 'h-x', executionSessionId: 'api-next', runtime: 'codex-cli' }), 409, 'no_pending_handoff');
  expectError(await post('handoff', { executionSessionId: 'api-s4', epoch: 1, toExecutionSessionId: 'api-s4' }), 400, 'invalid_input');
  // `to` is git's branch (a rename records what git did); `from` is not the record's.
  expectError(await post('rename-branch', { executionSessionId: 'api-s4', epoch: 1, from: 'wt/not-this-one', to: v.branch }), 409, 'worktree_mismatch');
  // a live owner is not reclaimed; force is an admin's, with a reason
  expectError(await post('reclaim', { executionSessionId: 'api-thief', runtime: 'codex-cli' }), 409, 'owner_alive');
  expectError(await post('reclaim', { executionSessionId: 'api-thief', runtime: 'codex-cli', force: true, reason: 'mine now' }), 403, 'force_requires_admin');
  expectError(
    await post('reclaim', { executionSessionId: 'api-thief', runtime: 'codex-cli', force: true, worker: { workerId: 'w' } }, s.tokens.admin),
    400,
    'force_requires_reason',
  );
  expect(await snapshot(id)).toEqual(before);

  // A forced admin reclaim is recorded with its reason and moves the epoch.
  const res = await post(
    'reclaim',
    { executionSessionId: 'api-ops', runtime: 'codex-cli', force: true, reason: 'operator takeover', worker: { workerId: s.workerId } },
    s.tokens.admin,
  );
  expect(res.status).toBe(200);
  const taken = res.body as OwnershipViewOut;
  expect(taken.epoch).toBe(2);
  expect(taken.owner?.executionSessionId).toBe('api-ops');
  expect(taken.lineage.at(-1)).toMatchObject({ via: 'forced_reclaim', executionSessionId: 'api-ops' });
});

test('a lifecycle over HTTP: heartbeat, plan, rename, handoff (cancel, accept), submit, landed, worktree-removed, then closed', async () => {
  const v = await bind(5, 'api-h1');
  const id = v.ownershipId;
  const post = (p: string, body: Record<string, unknown>, token = s.tokens.executor) => s.raw('POST', `/v1/ownerships/${id}/${p}`, { token, body });

  let res = await post('heartbeat', { executionSessionId: 'api-h1', epoch: 1 });
  expect(res.status).toBe(202);
  expect(res.body).toEqual({ accepted: true });

  res = await post('plan', { executionSessionId: 'api-h1', epoch: 1, lane: 'lane-b', planRef: 'docs/b.md' });
  expect(res.status).toBe(200);
  expect((res.body as OwnershipViewOut).lane).toBe('lane-b');

  // A rename records what git did (branch_mismatch otherwise).
  git(repo.worktrees[5]!.path, 'branch', '-m', 'wt/renamed-5');
  res = await post('rename-branch', { executionSessionId: 'api-h1', epoch: 1, from: v.branch, to: 'wt/renamed-5' });
  expect(res.status).toBe(200);
  expect((res.body as OwnershipViewOut).branch).toBe('wt/renamed-5');

  res = await post('handoff', { executionSessionId: 'api-h1', epoch: 1, toExecutionSessionId: 'api-h2', reason: 'restart' });
  expect(res.status).toBe(200);
  expect((res.body as OwnershipViewOut).state).toBe('handoff_pending');
  res = await post('handoff/cancel', { executionSessionId: 'api-h1', epoch: 1 });
  expect((res.body as OwnershipViewOut).state).toBe('active');
  res = await post('handoff', { executionSessionId: 'api-h1', epoch: 1, toExecutionSessionId: 'api-h2' });
  const handoffId = (res.body as OwnershipViewOut).handoff!.handoffId;
  expectError(await post('handoff/accept', { handoffId, executionSessionId: 'api-h3', runtime: 'codex-cli' }), 409, 'handoff_mismatch');
  res = await post('handoff/accept', { handoffId, executionSessionId: 'api-h2', parentExecutionSessionId: 'api-h1' });
  expect(res.status).toBe(200);
  const accepted = res.body as OwnershipViewOut;
  expect(accepted).toMatchObject({ state: 'active', epoch: 2 });
  // runtime defaulted honestly: this worker has no executor binding
  expect(accepted.owner).toMatchObject({ executionSessionId: 'api-h2', runtime: 'unknown', parentExecutionSessionId: 'api-h1' });

  // The session that handed off is told it lost the worktree, whichever executor asks.
  expectError(await post('heartbeat', { executionSessionId: 'api-h1', epoch: 1 }, s.tokens.otherExecutor), 409, 'not_owner');
  expectError(await post('heartbeat', { executionSessionId: 'api-h2', epoch: 2 }, s.tokens.otherExecutor), 403, 'worker_mismatch');
  res = await post('submit', { executionSessionId: 'api-h2', epoch: 2, head: 'c'.repeat(40) });
  expect((res.body as OwnershipViewOut).state).toBe('submitted');
  expectError(await post('release', { executionSessionId: 'api-h2', epoch: 2 }), 409, 'invalid_state');

  const landing = { sourceHead: 'c'.repeat(40), landedBranch: 'main', landedHead: 'd'.repeat(40), landedAt: new Date().toISOString() };
  res = await post('landed', landing, s.tokens.landing);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    status: 'recorded',
    ownershipId: id,
    receipt: { landedHead: 'd'.repeat(40), executionSessionId: 'api-h2', sourceBranch: 'wt/renamed-5' },
  });
  // replay: the same receipt, no second one
  res = await post('landed', landing, s.tokens.landing);
  expect(res.status).toBe(200);
  const receipts = await s.h.pool.query('SELECT count(*)::int AS n FROM landing_receipts WHERE ownership_id = $1', [id]);
  expect(receipts.rows[0].n).toBe(1);

  res = await s.raw('GET', `/v1/ownerships/${id}`, { token: s.tokens.reader });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ ownershipId: id, state: 'landed', liveness: { status: expect.any(String) } });

  // The worktree is still on disk: the caller's word is refused and nothing is written.
  expectError(await post('worktree-removed', { reason: 'cleanup' }, s.tokens.landing), 409, 'worktree_present');
  expect((await readEvents(s.h.pool, id)).some((e) => e.type === 'ownership.worktree_removed')).toBe(false);
  git(repo.repoRoot, 'worktree', 'remove', '--force', '--force', repo.worktrees[5]!.path);
  // Answered once the log holds the removal (recorded), not at the signal.
  res = await post('worktree-removed', { reason: 'cleanup' }, s.tokens.landing);
  expect({ status: res.status, body: res.body }).toEqual({ status: 202, body: { accepted: true, status: 'recorded' } });
  await waitForState(id, 'closed');
  // closed: reads come from PostgreSQL, writes are refused without reaching any workflow
  res = await s.raw('GET', `/v1/ownerships/${id}`, { token: s.tokens.reader });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ ownershipId: id, state: 'closed', liveness: null, projectionSync: null });
  expectError(await post('heartbeat', { executionSessionId: 'api-h2', epoch: 2 }), 409, 'ownership_closed');
  expectError(await post('release', { executionSessionId: 'api-h2', epoch: 2 }), 409, 'ownership_closed');
  expectError(await post('landed', { ...landing, landedHead: 'e'.repeat(40) }, s.tokens.landing), 409, 'ownership_closed');
  res = await post('worktree-removed', {}, s.tokens.landing);
  expect({ status: res.status, body: res.body }).toEqual({ status: 202, body: { accepted: true, status: 'recorded' } });

  const types = (await readEvents(s.h.pool, id)).map((e) => e.type);
  expect(types).toEqual([
    'ownership.claimed',
    'ownership.plan_bound',
    'ownership.branch_renamed',
    'ownership.handoff_started',
    'ownership.handoff_cancelled',
    'ownership.handoff_started',
    'ownership.claimed',
    'ownership.submitted',
    'ownership.landed',
    'ownership.worktree_removed',
  ]);
});

async function waitForState(id: string, state: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await s.h.pool.query<{ state: string }>('SELECT state FROM ownerships WHERE ownership_id = $1', [id]);
    if (res.rows[0]?.state === state) return;
    if (Date.now() > deadline) throw new Error(`state ${state} not reached; last ${res.rows[0]?.state}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
