import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ConversationReportResponse, HistoryResponse, LandingResponse, ListResponse, OwnershipViewOut, WireRecord } from '../../src/contract/http';
import { readBinding } from '../../src/store/bindings';
import { readEvents } from '../../src/store/event-store';
import type { Provenance } from '../../src/provenance/provenance';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';

/**
 * Executor conversation reports, landings, lookups and provenance over real HTTP, plus the public
 * routes (health, metrics, OpenAPI, docs), with redaction by principal.
 */

let s: ApiStack;
let repo: RepoFixture;
const CONV = '3b2f6c1e-7d4a-4c8e-9f01-2a3b4c5d6e7f';
const OTHER_CONV = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(4);
  // Branch names of this file's own: a lookup by branch alone (no repoRoot) answers the most recent
  // ownership of that name in the whole database, which other files share (their fixtures name
  // their branches wt/feature-N too).
  const tag = path.basename(path.dirname(repo.repoRoot)).replace(/[^A-Za-z0-9]/g, '');
  for (const w of repo.worktrees) {
    const unique = `lk-${tag}/${path.basename(w.path)}`;
    git(w.path, 'branch', '-m', w.branch, unique);
    w.branch = unique;
  }
});
afterAll(async () => s?.stop());

function expectError(res: { status: number; body: unknown }, status: number, code: string): void {
  expect({ status: res.status, code: (res.body as { code?: string }).code }).toEqual({ status, code });
}

function observation(conversationId: string, sequence: number, extra: Record<string, unknown> = {}) {
  return {
    executor: 'chatgpt-web',
    executorInstanceId: 'ext-1',
    sessionGeneration: 'gen-1',
    sequence,
    conversation: {
      conversationId,
      conversationUrl: `https://chatgpt.com/c/${conversationId}?model=x`,
      title: 'Lookup lane',
      observedAt: new Date().toISOString(),
    },
    ...extra,
  };
}

const report = (token: string | null, body: unknown) => s.raw('POST', '/v1/executor/conversation', { token, body });

async function bind(i: number, session: string, token = s.tokens.executor): Promise<OwnershipViewOut> {
  const wt = repo.worktrees[i]!;
  const res = await s.raw('POST', '/v1/bind', {
    token,
    body: { repoRoot: repo.repoRoot, worktreePath: wt.path, branch: wt.branch, executionSessionId: session, lane: `lookup-${i}` },
  });
  expect(res.status).toBe(200);
  return res.body as OwnershipViewOut;
}

async function poll<T>(fn: () => Promise<T>, ok: (x: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const x = await fn();
    if (ok(x)) return x;
    if (Date.now() > deadline) throw new Error(`condition not reached: ${JSON.stringify(x).slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

let first: OwnershipViewOut;

test('POST /v1/executor/conversation: an executor reports for its own worker; active ownerships pick it up; refusals keep the binding', async () => {
  // Bound before any conversation was observed: conversation unknown, runtime unknown, never guessed.
  first = await bind(0, 'lk-s0');
  expect(first.owner).toMatchObject({ conversation: null, runtime: 'unknown' });

  expectError(await report(null, observation(CONV, 1)), 401, 'unauthenticated');
  expectError(await report(s.tokens.reader, observation(CONV, 1)), 403, 'forbidden');
  expectError(await report(s.tokens.landing, observation(CONV, 1)), 403, 'forbidden');
  expectError(await report(s.tokens.admin, observation(CONV, 1)), 403, 'forbidden');
  expectError(await report(s.tokens.executor, { ...observation(CONV, 1), workerId: s.otherWorkerId }), 400, 'unknown_field');
  expectError(await report(s.tokens.executor, { ...observation(CONV, 1), sequence: 'one' }), 400, 'invalid_input');
  expectError(await report(s.tokens.executor, observation('00000000-0000-0000-0000-000000000000', 1)), 400, 'nil_uuid');
  const old = observation(CONV, 1);
  old.conversation.observedAt = new Date(Date.now() - 60_000).toISOString();
  expectError(await report(s.tokens.executor, old), 400, 'observation_too_old');
  const mismatch = observation(CONV, 1);
  mismatch.conversation.conversationUrl = `https://chatgpt.com/c/${OTHER_CONV}`;
  expectError(await report(s.tokens.executor, mismatch), 400, 'conversation_mismatch');
  expect(await readBinding(s.h.pool, s.workerId)).toBeNull();

  const res = await report(s.tokens.executor, observation(CONV.toUpperCase(), 1));
  expect(res.status).toBe(200);
  const body = res.body as ConversationReportResponse;
  expect(body).toMatchObject({ workerId: s.workerId, firstBound: true, conflict: false, signalled: 1 });
  expect(body.conversation).toMatchObject({ conversationId: CONV, conversationUrl: `https://chatgpt.com/c/${CONV}`, title: 'Lookup lane' });

  // the ownership of that worker now names the conversation
  const view = await poll(
    () => s.api(s.tokens.executor).ownership(first.ownershipId),
    (v) => v.owner?.conversation?.conversationId === CONV,
  );
  expect(view.owner?.conversation?.conversationUrl).toBe(`https://chatgpt.com/c/${CONV}`);

  // the same UUID cannot become another worker's; a replayed sequence is refused
  expectError(await report(s.tokens.otherExecutor, observation(CONV, 1)), 409, 'conversation_taken');
  expectError(await report(s.tokens.executor, observation(CONV, 1)), 409, 'sequence_not_increasing');
  expect(await readBinding(s.h.pool, s.otherWorkerId)).toBeNull();

  // a different conversation later is a conflict, kept apart; the first binding never moves
  const again = await report(s.tokens.executor, observation(OTHER_CONV, 2));
  expect(again.status).toBe(200);
  expect(again.body).toMatchObject({ firstBound: false, conflict: true, conversation: { conversationId: CONV } });
});

test('a bind after the report carries the conversation and the executor runtime', async () => {
  const v = await bind(1, 'lk-s1');
  expect(v.owner).toMatchObject({ runtime: 'chatgpt-web', conversation: { conversationId: CONV, title: 'Lookup lane' } });
});

test('GET /v1/ownership by worktree path, branch (+repoRoot) and id; refusals; redaction by principal', async () => {
  const wt = repo.worktrees[1]!;
  const api = s.api(s.tokens.executor);
  const byPath = await api.get({ worktreePath: wt.path });
  expect(byPath).toMatchObject({ branch: wt.branch, owner: { executionSessionId: 'lk-s1' } });
  // a different spelling of the same path (`..`, trailing slash) finds the same record
  expect((await api.get({ worktreePath: `${wt.path}/../${path.basename(wt.path)}/` })).ownershipId).toBe(byPath.ownershipId);
  expect((await api.get({ branch: wt.branch, repoRoot: repo.repoRoot })).ownershipId).toBe(byPath.ownershipId);
  expect((await api.get({ branch: wt.branch })).ownershipId).toBe(byPath.ownershipId);
  expect((await api.get({ ownershipId: byPath.ownershipId })).worktreePath).toBe(wt.path);
  expect(byPath.owner?.conversation?.conversationUrl).toBe(`https://chatgpt.com/c/${CONV}`);

  // readers and other workers' executors see the conversation id, not its URL or title
  for (const token of [s.tokens.reader, s.tokens.otherExecutor]) {
    const res = await s.raw('GET', `/v1/ownership?worktreePath=${encodeURIComponent(wt.path)}`, { token });
    expect(res.status).toBe(200);
    const r = res.body as WireRecord;
    expect(r.owner?.conversation).toMatchObject({ conversationId: CONV, conversationUrl: '[redacted]', title: '[redacted]' });
  }
  // admin and landing see everything
  const adminView = (await s.raw('GET', `/v1/ownership?ownershipId=${byPath.ownershipId}`, { token: s.tokens.admin })).body as WireRecord;
  expect(adminView.owner?.conversation?.title).toBe('Lookup lane');

  const q = (qs: string, token: string | null = s.tokens.reader) => s.raw('GET', `/v1/ownership?${qs}`, { token });
  expectError(await q(`worktreePath=${encodeURIComponent(wt.path)}`, null), 401, 'unauthenticated');
  expectError(await q(''), 400, 'invalid_input');
  expectError(await q(`worktreePath=${encodeURIComponent(wt.path)}&branch=${wt.branch}`), 400, 'invalid_input');
  expectError(await q(`worktreePath=${encodeURIComponent(wt.path)}&repoRoot=${encodeURIComponent(repo.repoRoot)}`), 400, 'invalid_input');
  expectError(await q(`ownershipId=nope`), 400, 'invalid_input');
  expectError(await q(`worktreePath=x&colour=blue`), 400, 'unknown_field');
  expectError(await q(`worktreePath=/etc`), 400, 'path_outside_allowed_roots');
  expectError(await q(`branch=wt/never-existed`), 404, 'not_found');
  expectError(await q(`ownershipId=own_01JZZZZZZZZZZZZZZZZZZZZZZZ`), 404, 'not_found');
  expectError(await s.raw('GET', `/v1/ownerships/own_01JZZZZZZZZZZZZZZZZZZZZZZZ`, { token: s.tokens.reader }), 404, 'not_found');
  expectError(await s.raw('GET', `/v1/ownerships/not-an-id`, { token: s.tokens.reader }), 400, 'invalid_input');
  expectError(await s.raw('GET', `/v1/ownerships/${byPath.ownershipId}`), 401, 'unauthenticated');
  const liveAsReader = (await s.raw('GET', `/v1/ownerships/${byPath.ownershipId}`, { token: s.tokens.reader })).body as OwnershipViewOut;
  expect(liveAsReader.liveness?.status).toBe('live');
  expect(liveAsReader.owner?.conversation).toMatchObject({ conversationId: CONV, conversationUrl: '[redacted]', title: '[redacted]' });
});

test('GET /v1/ownerships: filters, pagination, liveness; refusals', async () => {
  await bind(2, 'lk-s2');
  const api = s.api(s.tokens.reader);
  const all = await api.list({ repoRoot: repo.repoRoot });
  expect(all.items.map((r) => r.worktreePath).sort()).toEqual([0, 1, 2].map((i) => repo.worktrees[i]!.path).sort());
  expect(all.nextCursor).toBeNull();

  const page1 = await api.list({ repoRoot: repo.repoRoot, limit: 2 });
  expect(page1.items).toHaveLength(2);
  expect(page1.nextCursor).toEqual(expect.any(String));
  const page2 = await api.list({ repoRoot: repo.repoRoot, limit: 2, cursor: page1.nextCursor! });
  expect([...page1.items, ...page2.items].map((r) => r.ownershipId).sort()).toEqual(all.items.map((r) => r.ownershipId).sort());

  const live = await s.raw('GET', `/v1/ownerships?repoRoot=${encodeURIComponent(repo.repoRoot)}&state=active,stale&liveness=true`, { token: s.tokens.reader });
  expect(live.status).toBe(200);
  const items = (live.body as ListResponse).items;
  expect(items).toHaveLength(3);
  for (const item of items) expect(item.liveness).toMatchObject({ status: 'live' });
  expect((await api.list({ repoRoot: repo.repoRoot, state: ['released'] })).items).toEqual([]);
  const repeated = await s.raw('GET', `/v1/ownerships?repoRoot=${encodeURIComponent(repo.repoRoot)}&state=active&state=released`, { token: s.tokens.reader });
  expect((repeated.body as ListResponse).items).toHaveLength(3);

  const q = (qs: string, token: string | null = s.tokens.reader) => s.raw('GET', `/v1/ownerships?${qs}`, { token });
  expectError(await q('', null), 401, 'unauthenticated');
  expectError(await q('state=sleeping'), 400, 'invalid_input');
  expectError(await q('limit=0'), 400, 'invalid_input');
  expectError(await q('limit=ten'), 400, 'invalid_input');
  expectError(await q('cursor=not-a-cursor'), 400, 'invalid_input');
  expectError(await q('owner=me'), 400, 'unknown_field');
  expectError(await q('repoRoot=/etc'), 400, 'path_outside_allowed_roots');
});

let landedSha = '';

test('POST /v1/landings by (repoRoot, sourceBranch) and by ownershipId; then history and provenance resolve the landed commit', async () => {
  const wt = repo.worktrees[1]!;
  const own = await s.api(s.tokens.reader).get({ worktreePath: wt.path });
  writeFileSync(path.join(wt.path, 'feature.txt'), 'work\n');
  // The owner session commits (the guard would refuse anyone else; no hooks are installed here).
  git(wt.path, 'add', 'feature.txt');
  git(wt.path, 'commit', '-q', '-m', 'feature work');
  const sourceHead = git(wt.path, 'rev-parse', 'HEAD');
  git(repo.repoRoot, 'merge', '-q', '--no-ff', '-m', 'land feature', wt.branch);
  landedSha = git(repo.repoRoot, 'rev-parse', 'HEAD');
  const body = {
    repoRoot: repo.repoRoot,
    sourceBranch: wt.branch,
    sourceHead,
    landedBranch: 'main',
    landedHead: landedSha,
    landedAt: new Date().toISOString(),
  };

  const post = (b: unknown, token: string | null = s.tokens.landing) => s.raw('POST', '/v1/landings', { token, body: b });
  const before = await readEvents(s.h.pool, own.ownershipId);
  expectError(await post(body, null), 401, 'unauthenticated');
  expectError(await post(body, s.tokens.executor), 403, 'forbidden');
  expectError(await post(body, s.tokens.reader), 403, 'forbidden');
  expectError(await post({ ...body, extra: 1 }), 400, 'unknown_field');
  expectError(await post({ ...body, landedHead: 'HEAD' }), 400, 'invalid_input');
  const { repoRoot: _r, sourceBranch: _b, ...neither } = body;
  expectError(await post(neither), 400, 'invalid_input');
  expectError(await post({ ...body, sourceBranch: 'wt/unknown' }), 404, 'not_found');
  expectError(await post({ ...neither, ownershipId: own.ownershipId, sourceBranch: 'wt/feature-0' }), 409, 'worktree_mismatch');
  expectError(await post({ ...neither, ownershipId: 'own_01JZZZZZZZZZZZZZZZZZZZZZZZ' }), 404, 'not_found');
  expect(await readEvents(s.h.pool, own.ownershipId)).toEqual(before);

  const res = await post(body);
  expect(res.status).toBe(200);
  const landed = res.body as LandingResponse;
  expect(landed).toMatchObject({
    status: 'recorded',
    ownershipId: own.ownershipId,
    receipt: { landedHead: landedSha, sourceHead, conversation: { conversationId: CONV } },
  });
  // the landing controller's replay, by ownershipId this time: the same receipt
  const replay = await post({ ...neither, ownershipId: own.ownershipId });
  expect(replay.status).toBe(200);
  expect((replay.body as LandingResponse).receipt).toEqual(landed.receipt);

  const hist = await s.api(s.tokens.reader).history({ landedCommit: landedSha.slice(0, 10) });
  expect(hist.ownerships.map((o) => o.ownershipId)).toEqual([own.ownershipId]);
  expect(hist.ownerships[0]!.events.map((e) => e.type)).toContain('ownership.landed');

  const prov = await s.api(s.tokens.admin).provenance(landedSha, repo.repoRoot);
  expect(prov).toMatchObject({
    commit: landedSha,
    ownershipId: own.ownershipId,
    executionSessionId: 'lk-s1',
    worker: { workerId: s.workerId },
    conversation: { conversationId: CONV, title: 'Lookup lane' },
  });
  const inRange = await s.api(s.tokens.admin).provenance(sourceHead.slice(0, 12), repo.repoRoot);
  expect(inRange).toMatchObject({ ownershipId: own.ownershipId, via: 'range' });
  const redacted = (await s.raw('GET', `/v1/provenance/${landedSha}?repo=${encodeURIComponent(repo.repoRoot)}`, { token: s.tokens.reader })).body as Provenance;
  expect(redacted.conversation).toEqual({ conversationId: CONV, conversationUrl: '[redacted]', title: '[redacted]' });
});

test('GET /v1/history and /v1/provenance refusals', async () => {
  const wt = repo.worktrees[0]!;
  const h = (qs: string, token: string | null = s.tokens.reader) => s.raw('GET', `/v1/history?${qs}`, { token });
  const res = await h(`worktreePath=${encodeURIComponent(wt.path)}`);
  expect(res.status).toBe(200);
  const body = res.body as HistoryResponse;
  expect(body.ownerships).toHaveLength(1);
  expect(body.ownerships[0]!.lineage[0]).toMatchObject({ executionSessionId: 'lk-s0', via: 'bind' });
  expect((await h(`branch=${wt.branch}&repoRoot=${encodeURIComponent(repo.repoRoot)}`)).status).toBe(200);
  expect(((await h(`landedCommit=${'f'.repeat(40)}`)).body as HistoryResponse).ownerships).toEqual([]);
  expectError(await h(`worktreePath=${encodeURIComponent(wt.path)}`, null), 401, 'unauthenticated');
  expectError(await h(''), 400, 'invalid_input');
  expectError(await h('landedCommit=xyz'), 400, 'invalid_input');
  expectError(await h(`branch=a&landedCommit=${'a'.repeat(40)}`), 400, 'invalid_input');
  expectError(await h('worktreePath=x&x=1'), 400, 'unknown_field');

  const p = (sha: string, qs: string, token: string | null = s.tokens.reader) => s.raw('GET', `/v1/provenance/${sha}?${qs}`, { token });
  const repoQ = `repo=${encodeURIComponent(repo.repoRoot)}`;
  expectError(await p(landedSha, repoQ, null), 401, 'unauthenticated');
  expectError(await p('not-hex', repoQ), 400, 'invalid_input');
  expectError(await p(landedSha, ''), 400, 'invalid_input');
  expectError(await p(landedSha, `${repoQ}&x=1`), 400, 'unknown_field');
  expectError(await p(landedSha, 'repo=/etc'), 400, 'path_outside_allowed_roots');
  const initial = git(repo.repoRoot, 'rev-list', '--max-parents=0', 'HEAD');
  expectError(await p(initial, repoQ), 404, 'not_found');
});

test('public routes: health, metrics per route and reason code, OpenAPI document, docs page; unknown routes', async () => {
  const health = await s.raw('GET', '/healthz');
  expect(health.status).toBe(200);
  expect(health.body).toMatchObject({ ok: true, temporal: 'up', postgres: 'up', worker: 'up' });

  const metrics = await s.raw('GET', '/metrics');
  expect(metrics.status).toBe(200);
  const text = String(metrics.body);
  expect(text).toMatch(/od_api_requests_total\{method="POST",route="\/v1\/bind",status="200",code="ok"\} \d+/);
  expect(text).toMatch(/od_api_requests_total\{method="GET",route="\/v1\/ownership",status="400",code="invalid_input"\} \d+/);
  expect(text).toMatch(/od_api_requests_total\{method="POST",route="\/v1\/executor\/conversation",status="409",code="conversation_taken"\} \d+/);
  expect(text).toContain('od_api_request_duration_seconds_bucket');
  // raw URLs (ids, paths) never become labels
  expect(text).not.toContain(repo.repoRoot);

  const doc = await s.raw('GET', '/openapi.json');
  expect(doc.status).toBe(200);
  const openapi = doc.body as { openapi: string; paths: Record<string, Record<string, { security?: unknown }>> };
  expect(openapi.openapi).toMatch(/^3\./);
  for (const p of [
    '/v1/bind',
    '/v1/ownerships/{id}/heartbeat',
    '/v1/ownerships/{id}/handoff/accept',
    '/v1/ownerships/{id}/worktree-removed',
    '/v1/landings',
    '/v1/executor/conversation',
    '/v1/ownership',
    '/v1/ownerships',
    '/v1/history',
    '/v1/provenance/{sha}',
    '/v1/ownerships/{id}',
  ]) {
    expect(Object.keys(openapi.paths)).toContain(p);
  }
  expect(openapi.paths['/v1/bind']!.post!.security).toEqual([{ bearer: [] }]);
  expect(Object.keys(openapi.paths)).not.toContain('/mcp');

  const docs = await fetch(`${s.url}/docs`);
  expect(docs.status).toBe(200);
  expect(await docs.text()).toMatch(/swagger/i);

  expectError(await s.raw('GET', '/v1/nothing-here', { token: s.tokens.reader }), 404, 'not_found');
  expectError(await s.raw('GET', '/v1/nothing-here'), 401, 'unauthenticated');
});
