import { readBinding } from '../../src/store/bindings';
import type { OwnershipViewOut } from '../../src/contract/http';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { snapshotOwnership } from '../support/fuzz/world';

/**
 * Every string that can reach PostgreSQL (or git, or a worktree's config) is refused at the schema
 * when it holds NUL or another control character, and every timestamp the schema accepts is one
 * PostgreSQL and JavaScript both hold: `invalid_input` naming the field, never a 500, never a
 * wedged workflow, and nothing stored. The first case is the body an outside fuzzer, generating
 * from /openapi.json, found answered 500 `internal`.
 */

let s: ApiStack;
let repo: RepoFixture;

beforeAll(async () => {
  s = await startApiStack({ landingWaitMs: 2_000 });
  repo = makeRepo(2);
});
afterAll(async () => s?.stop());

const CONV = '5d0c2a8e-1f3b-4c6d-8e9f-0a1b2c3d4e5f';

function observation(conversation: Record<string, unknown>, sequence = 1) {
  return {
    executor: 'chatgpt-web',
    executorInstanceId: 'ext-bounds',
    sessionGeneration: 'gen-bounds',
    sequence,
    conversation: { conversationId: CONV, conversationUrl: `https://chatgpt.com/c/${CONV}`, observedAt: new Date().toISOString(), ...conversation },
  };
}

function expectInvalid(res: { status: number; body: unknown }, field: string): void {
  const b = res.body as { code?: string; details?: { fields?: string[] } };
  expect({ status: res.status, code: b.code, named: b.details?.fields?.includes(field) ?? false }).toEqual({ status: 400, code: 'invalid_input', named: true });
}

test('the outside fuzzer’s body (a conversation id with control characters and NUL, a year-482 time at -16:42) is invalid_input, not 500, and binds nothing', async () => {
  const res = await s.raw('POST', '/v1/executor/conversation', {
    token: s.tokens.executor,
    body: observation({
      conversationId: '\u0007\u001b[31m\u0000',
      conversationUrl: `https://chatgpt.com/c/${CONV}`,
      observedAt: '0482-11-18T11:30:45.3-16:42',
    }),
  });
  expectInvalid(res, 'conversation.conversationId');
  expectInvalid(res, 'conversation.observedAt');
  expect(await readBinding(s.h.pool, s.workerId)).toBeNull();
});

test('a conversation id with NUL alone, with a valid time, is invalid_input and binds nothing', async () => {
  expectInvalid(
    await s.raw('POST', '/v1/executor/conversation', { token: s.tokens.executor, body: observation({ conversationId: `${CONV.slice(0, 35)}\u0000` }) }),
    'conversation.conversationId',
  );
  expect(await readBinding(s.h.pool, s.workerId)).toBeNull();
});

test('times outside what PostgreSQL and JavaScript hold (offsets past ±14:00, years before 1970) are refused at the schema', async () => {
  for (const observedAt of ['2026-01-01T00:00:00-16:42', '0000-01-01T00:00:00Z', '1969-12-31T23:59:59Z', '2026-01-01T00:00:00.1234567890123Z']) {
    expectInvalid(await s.raw('POST', '/v1/executor/conversation', { token: s.tokens.executor, body: observation({ observedAt }) }), 'conversation.observedAt');
  }
  expect(await readBinding(s.h.pool, s.workerId)).toBeNull();
});

test('a reconciliation entry: a time PostgreSQL cannot store and a path with control characters are invalid_input; nothing is recorded', async () => {
  const wt = repo.worktrees[0]!;
  const entry = (extra: Record<string, unknown>) => ({
    worktreePath: wt.path,
    kind: 'stale',
    reason: 'projection_stale',
    repaired: false,
    ownershipId: null,
    localOwnershipId: null,
    localSeq: null,
    durableSeq: null,
    provisional: null,
    at: new Date().toISOString(),
    ...extra,
  });
  const count = async () =>
    (await s.h.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM reconciliations WHERE worktree_path LIKE $1', [`${repo.repoRoot}%`])).rows[0]!.n;
  const post = (body: unknown) => s.raw('POST', '/v1/reconciliations', { token: s.tokens.admin, body });
  expectInvalid(await post(entry({ at: '2026-01-01T00:00:00-16:42' })), 'at');
  expectInvalid(await post(entry({ at: '0000-01-01T00:00:00Z' })), 'at');
  expectInvalid(await post(entry({ worktreePath: `${wt.path}\u0001` })), 'worktreePath');
  expectInvalid(
    await post(entry({ provisional: { executionSessionId: 's', runtime: 'r', idempotencyKey: null, claimedAt: '2026-01-01T00:00:00+23:59' } })),
    'provisional.claimedAt',
  );
  expect(await count()).toBe(0);
  // The same entry with a time at an offset is recorded, at that instant.
  const ok = await post(entry({ at: '2026-01-01T09:30:00+09:30' }));
  expect(ok.status).toBe(201);
  const row = await s.h.pool.query<{ at: Date }>('SELECT at FROM reconciliations WHERE worktree_path = $1', [wt.path]);
  expect(row.rows.map((r) => r.at.toISOString())).toEqual(['2026-01-01T00:00:00.000Z']);
});

test('a crafted list cursor (a NUL in its id, a time PostgreSQL cannot hold) is invalid_input, not 500', async () => {
  const cursor = (c: unknown) => Buffer.from(JSON.stringify(c), 'utf8').toString('base64url');
  for (const c of [
    { u: '2026-01-01T00:00:00.000000Z', i: 'own_\u0000' },
    { u: '2026-01-01T00:00:00-16:42', i: 'own_x' },
    { u: '0000-01-01T00:00:00Z', i: 'own_x' },
  ]) {
    expectInvalid(await s.raw('GET', `/v1/ownerships?cursor=${cursor(c)}`, { token: s.tokens.reader }), 'cursor');
  }
});

test('a landing scan naming a branch or a repository with NUL is invalid_input (it was answered path_not_found)', async () => {
  for (const body of [{ repo: repo.repoRoot, branch: 'main\u0000' }, { repo: repo.repoRoot, since: 'HEAD\u0000' }, { repo: `${repo.repoRoot}\u0000` }]) {
    const res = await s.raw('POST', '/v1/landings/scan', { token: s.tokens.landing, body });
    expect({ status: res.status, code: (res.body as { code?: string }).code }).toEqual({ status: 400, code: 'invalid_input' });
  }
});

test('a bind whose process start time holds NUL is refused before the workflow: no ownership, no event', async () => {
  const wt = repo.worktrees[1]!;
  const res = await s.raw('POST', '/v1/bind', {
    token: s.tokens.executor,
    body: { worktreePath: wt.path, branch: wt.branch, executionSessionId: 'bounds-s1', process: { hostId: 'h', bootId: 'b', pid: 42, startTime: '1\u0000' } },
  });
  expectInvalid(res, 'process.startTime');
  const rows = await s.h.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM ownerships WHERE worktree_path = $1', [wt.path]);
  expect(rows.rows[0]!.n).toBe(0);
});

test('a landing receipt whose time PostgreSQL cannot store is refused at the schema: the ownership is unchanged and still lands', async () => {
  const wt = repo.worktrees[0]!;
  const bound = await s.raw('POST', '/v1/bind', {
    token: s.tokens.executor,
    body: { worktreePath: wt.path, branch: wt.branch, executionSessionId: 'bounds-s0' },
  });
  expect(bound.status).toBe(200);
  const v = bound.body as OwnershipViewOut;
  const head = git(wt.path, 'rev-parse', 'HEAD');
  const before = await snapshotOwnership(s.h.pool, v.ownershipId);
  const landed = (landedAt: string) =>
    s.raw('POST', `/v1/ownerships/${v.ownershipId}/landed`, {
      token: s.tokens.landing,
      body: { sourceHead: head, landedBranch: 'main', landedHead: head, landedAt },
    });
  expectInvalid(await landed('2026-01-01T00:00:00-16:42'), 'landedAt');
  expectInvalid(await landed('0000-02-29T00:00:00Z'), 'landedAt');
  expect(await snapshotOwnership(s.h.pool, v.ownershipId)).toEqual(before);
  // A valid receipt at an offset is recorded at its instant, in UTC.
  const ok = await landed('2026-03-01T12:00:00.5+05:45');
  expect(ok.status).toBe(200);
  expect((ok.body as { receipt?: { landedAt?: string } }).receipt?.landedAt).toBe('2026-03-01T06:15:00.500Z');
});
