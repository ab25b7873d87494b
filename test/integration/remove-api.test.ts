import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiError } from '../../src/api/client';
import type { OwnershipViewOut } from '../../src/contract/http';
import { RemoveOutputSchema, RemoveWorktreeResponseSchema, type RemoveWorktreeResponse } from '../../src/contract/removal';
import { readEvents } from '../../src/store/event-store';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { runCli } from '../support/cli';

/**
 * Removal through the service (POST /v1/worktrees/remove, the `ownership.remove_worktree` tool;
 * docs/cleanup.md#through-the-api) on the real stack: the worktree's host agent decides under the
 * removal rule and removes, the ownership records `worktree_removed` with the receipt. An owner
 * naming its session is released first; anyone else meets the rule; two removals of one worktree
 * at once remove it once.
 */

let s: ApiStack;
let repo: RepoFixture;
let mcp: Client | null = null;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(6);
});
afterAll(async () => {
  await mcp?.close().catch(() => undefined);
  await s?.stop();
});

const wt = (i: number) => repo.worktrees[i]!.path;
const bind = (i: number, session: string) =>
  s.api(s.tokens.executor).bind({ repoRoot: repo.repoRoot, worktreePath: wt(i), executionSessionId: session, worker: { workerId: s.workerId } });
const remove = async (token: string, body: Record<string, unknown>): Promise<RemoveWorktreeResponse> =>
  RemoveWorktreeResponseSchema.parse(await s.api(token).removeWorktree(body as never));
const refusedWith = async (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'answered',
    (err: unknown) => (err instanceof ApiError ? err.code : String(err)),
  );

async function settled(id: string): Promise<OwnershipViewOut> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = (await s.api(s.tokens.admin).ownership(id)) as OwnershipViewOut;
    if (v.projectionSync && v.projectionSync.localSeq >= v.seq && v.projectionSync.error === null) return v;
    if (Date.now() > deadline) throw new Error(`projection of ${id} not caught up`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('the owner removes its own dirty worktree: released first, files snapshotted, worktree_removed recorded with the receipt', async () => {
  const own = await bind(0, 's-own');
  await settled(own.ownershipId);
  writeFileSync(path.join(wt(0), 'notes.txt'), 'uncommitted\n');
  writeFileSync(path.join(wt(0), 'README.md'), '# product, edited\n');

  const dry = await remove(s.tokens.executor, { worktreePath: wt(0), executionSessionId: 's-own', epoch: own.epoch, dryRun: true });
  expect({ status: dry.result.status, released: dry.released, exists: existsSync(wt(0)) }).toEqual({ status: 'would_remove', released: null, exists: true });
  expect((await s.api(s.tokens.admin).ownership(own.ownershipId)).state).toBe('active');

  const out = await remove(s.tokens.executor, { worktreePath: wt(0), executionSessionId: 's-own', epoch: own.epoch });
  expect({ ok: out.ok, status: out.result.status, released: out.released, record: out.result.record?.status }).toEqual({
    ok: true,
    status: 'removed',
    released: own.ownershipId,
    record: 'recorded',
  });
  expect(existsSync(wt(0))).toBe(false);
  const kept = out.result.receipt!.preserved;
  expect(kept).toHaveLength(1);
  expect(git(repo.repoRoot, 'rev-parse', kept[0]!.ref)).toBe(kept[0]!.sha);
  expect(git(repo.repoRoot, 'show', `${kept[0]!.sha}:notes.txt`)).toBe('uncommitted');

  const events = await readEvents(s.h.pool, own.ownershipId);
  expect(events.map((e) => e.type).slice(-2)).toEqual(['ownership.released', 'ownership.worktree_removed']);
  const removedEvent = events.at(-1)!;
  expect(removedEvent.data).toEqual({
    reason: 'removed by executor through the service',
    receipt: {
      head: out.result.receipt!.head,
      headLandedOn: 'refs/heads/main',
      accounted: {},
      preserved: [{ ref: kept[0]!.ref, sha: kept[0]!.sha, files: 2 }],
      branch: 'kept',
    },
  });
  expect((await s.api(s.tokens.admin).ownership(own.ownershipId)).state).toBe('closed');
});

test('anyone else meets the rule: a held worktree, an unlanded commit and a dry run change nothing; a bad path is refused with its code', async () => {
  const held = await bind(1, 's-held');
  await settled(held.ownershipId);

  // Another worker's executor may not act on it at all; the landing controller meets the rule while
  // the owner holds it (its liveness as the service judges it).
  expect(await refusedWith(remove(s.tokens.otherExecutor, { worktreePath: wt(1) }))).toBe('worker_mismatch');
  const out = await remove(s.tokens.landing, { worktreePath: wt(1) });
  expect(out.ok).toBe(false);
  expect(out.result.status).toBe('refused');
  expect(['owner_alive', 'worktree_owned']).toContain(out.result.refusal!.code);
  // Naming the owner's session with a wrong epoch is the owner's release refused: nothing removed.
  expect(await refusedWith(remove(s.tokens.executor, { worktreePath: wt(1), executionSessionId: 's-held', epoch: held.epoch + 5 }))).toBe('stale_epoch');
  expect((await s.api(s.tokens.admin).ownership(held.ownershipId)).state).toBe('active');

  // Released, with a commit that landed nowhere.
  await s.api(s.tokens.executor).release(held.ownershipId, { executionSessionId: 's-held', epoch: held.epoch });
  // (A commit the hooks would refuse now: made with them off, as work a cut-off agent left behind.)
  git(wt(1), '-c', 'core.hooksPath=/dev/null', 'commit', '-q', '--allow-empty', '-m', 'work that landed nowhere');
  const before = git(repo.repoRoot, 'worktree', 'list', '--porcelain');
  const unlanded = await remove(s.tokens.landing, { worktreePath: wt(1) });
  expect(unlanded.result.refusals.map((r) => r.code)).toEqual(['unlanded_commits']);
  expect(unlanded.result.refusal!.details).toMatchObject({ count: 1, commits: [git(wt(1), 'rev-parse', 'HEAD')] });
  // A dry run with another branch holding that commit named as landed: it would go; it stays.
  git(repo.repoRoot, 'branch', 'release/keep', repo.worktrees[1]!.branch);
  const dry = await remove(s.tokens.landing, { worktreePath: wt(1), dryRun: true, targets: ['release/keep'] });
  expect({ status: dry.result.status, refusals: dry.result.refusals }).toEqual({ status: 'would_remove', refusals: [] });
  expect(git(repo.repoRoot, 'worktree', 'list', '--porcelain')).toBe(before);
  expect((await readEvents(s.h.pool, held.ownershipId)).map((e) => e.type)).not.toContain('ownership.worktree_removed');

  expect(await refusedWith(remove(s.tokens.landing, { worktreePath: repo.repoRoot }))).toBe('not_a_worktree');
  expect(await refusedWith(remove(s.tokens.landing, { worktreePath: '/etc' }))).toBe('path_outside_allowed_roots');
  expect(await refusedWith(remove(s.tokens.reader, { worktreePath: wt(1) }))).toBe('forbidden');
  expect(await refusedWith(remove(s.tokens.landing, { worktreePath: wt(1), hostId: 'nohost-remove' }))).toBe('host_unavailable');
});

test('two removals of one worktree at once remove it once and record it once', async () => {
  const own = await bind(2, 's-twice');
  await s.api(s.tokens.executor).release(own.ownershipId, { executionSessionId: 's-twice', epoch: own.epoch });
  await settled(own.ownershipId);
  const answers = await Promise.allSettled([remove(s.tokens.landing, { worktreePath: wt(2) }), remove(s.tokens.admin, { worktreePath: wt(2) })]);
  const said = answers.map((a) => (a.status === 'fulfilled' ? a.value.result.status : a.reason instanceof ApiError ? a.reason.code : String(a.reason)));
  // One removes; the other finds it running (removal_in_progress) or already gone (not_a_worktree).
  expect(said.filter((x) => x === 'removed')).toHaveLength(1);
  expect(said.filter((x) => x !== 'removed').every((x) => x === 'removal_in_progress' || x === 'not_a_worktree')).toBe(true);
  expect(existsSync(wt(2))).toBe(false);
  const types = (await readEvents(s.h.pool, own.ownershipId)).map((e) => e.type);
  expect(types.filter((t) => t === 'ownership.worktree_removed')).toHaveLength(1);
});

test('od-worktree remove by the owner with a token goes through the service: released first, removed, recorded', async () => {
  const own = await bind(4, 's-cli');
  await settled(own.ownershipId);
  writeFileSync(path.join(wt(4), 'draft.md'), 'a draft\n');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    OD_API_URL: s.url,
    OD_TOKEN: s.tokens.executor,
    OD_HOST_ID: s.h.hostId,
    OD_ALLOWED_ROOTS: process.env.OD_TEST_TMP ?? '/tmp',
    ...own.tenure!.env,
  };
  for (const k of Object.keys(env)) if (k.startsWith('GIT_')) delete env[k];
  const res = await runCli(['remove', wt(4), '--json'], { cwd: repo.repoRoot, env });
  expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: '' });
  const out = RemoveOutputSchema.parse(JSON.parse(res.stdout));
  expect({ status: out.result.status, record: out.result.record?.status, service: out.service.status }).toEqual({
    status: 'removed',
    record: 'recorded',
    service: 'used',
  });
  expect(out.service.detail).toContain(`released ${own.ownershipId} first`);
  expect(existsSync(wt(4))).toBe(false);
  expect((await s.api(s.tokens.admin).ownership(own.ownershipId)).state).toBe('closed');
});

test('the ownership.remove_worktree tool runs the same removal for an MCP client', async () => {
  const own = await bind(3, 's-mcp');
  await s.api(s.tokens.executor).release(own.ownershipId, { executionSessionId: 's-mcp', epoch: own.epoch });
  await settled(own.ownershipId);
  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${s.tokens.landing}` } } });
  mcp = new Client({ name: 'remove-test', version: '1.0.0' });
  await mcp.connect(transport);
  await mcp.listTools();
  const res = (await mcp.callTool({ name: 'ownership.remove_worktree', arguments: { worktreePath: wt(3) } })) as CallToolResult;
  expect(res.isError).toBeFalsy();
  const out = RemoveWorktreeResponseSchema.parse(res.structuredContent);
  expect({ status: out.result.status, record: out.result.record?.status }).toEqual({ status: 'removed', record: 'recorded' });
  expect(existsSync(wt(3))).toBe(false);
});
