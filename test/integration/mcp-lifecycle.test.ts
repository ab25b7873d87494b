import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { OwnershipViewOut } from '../../src/contract/http';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';

/**
 * A whole lifecycle through the MCP tools alone, with the official SDK client, in both tool
 * spellings: the contract's (`ownership.bind`) and the host-safe one (`ownership_bind`, from
 * `/mcp?toolNames=host-safe` and from the stdio server with OD_MCP_TOOL_NAMES=host-safe).
 * Every successful answer is checked by the SDK client against the tool's output schema.
 */

let s: ApiStack;
let repo: RepoFixture;
const clients: Client[] = [];

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(3);
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await s?.stop();
});

async function connect(transport: StreamableHTTPClientTransport | StdioClientTransport): Promise<Client> {
  const client = new Client({ name: 'mcp-lifecycle-test', version: '1.0.0' });
  clients.push(client);
  await client.connect(transport);
  await client.listTools();
  return client;
}

function http(token: string, query = ''): Promise<Client> {
  return connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp${query}`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
}

type Result = { ok: true; value: Record<string, unknown> } | { ok: false; code: string };

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Result> {
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (res.isError) {
    const text = res.content[0];
    return { ok: false, code: String((JSON.parse(text?.type === 'text' ? text.text : '{}') as { code?: unknown }).code) };
  }
  return { ok: true, value: res.structuredContent as Record<string, unknown> };
}

async function ok(client: Client, name: string, args: Record<string, unknown>): Promise<OwnershipViewOut> {
  const r = await call(client, name, args);
  if (!r.ok) throw new Error(`${name} refused: ${r.code}`);
  return r.value as unknown as OwnershipViewOut;
}

const bindArgs = (i: number, session: string) => ({
  worktreePath: repo.worktrees[i]!.path,
  branch: repo.worktrees[i]!.branch,
  executionSessionId: session,
  runtime: 'claude-code',
});

test.each([
  ['contract names', '', (n: string) => n],
  ['host-safe names', '?toolNames=host-safe', (n: string) => n.replace(/\./g, '_')],
])('bind, handoff, cancel, handoff again, accept, submit, landing, provenance, history: %s', async (_label, query, name) => {
  const i = query ? 1 : 0;
  const exec = await http(s.tokens.executor, query);
  const listed = (await exec.listTools()).tools.map((t) => t.name);
  expect(listed).toContain(name('ownership.accept_handoff'));
  expect(listed.every((n) => (query ? !n.includes('.') : n.startsWith('ownership.')))).toBe(true);

  const a = `mcp-life-a-${i}`;
  const b = `mcp-life-b-${i}`;
  const bound = await ok(exec, name('ownership.bind'), bindArgs(i, a));
  expect(bound).toMatchObject({ state: 'active', epoch: 1 });
  const id = bound.ownershipId;

  const offered = await ok(exec, name('ownership.handoff'), { ownershipId: id, executionSessionId: a, epoch: 1, toExecutionSessionId: b, reason: 'over to b' });
  expect(offered.state).toBe('handoff_pending');
  const cancelled = await ok(exec, name('ownership.cancel_handoff'), { ownershipId: id, executionSessionId: a, epoch: 1 });
  expect(cancelled).toMatchObject({ state: 'active', handoff: null });
  expect(await call(exec, name('ownership.cancel_handoff'), { ownershipId: id, executionSessionId: a, epoch: 1 })).toEqual({
    ok: false,
    code: 'no_pending_handoff',
  });

  const again = await ok(exec, name('ownership.handoff'), { ownershipId: id, executionSessionId: a, epoch: 1, toExecutionSessionId: b });
  const handoffId = again.handoff!.handoffId;
  // Only the named successor of the named worker may take it; nobody names a conversation.
  const other = await http(s.tokens.otherExecutor, query);
  expect(await call(other, name('ownership.accept_handoff'), { ownershipId: id, executionSessionId: b, handoffId })).toEqual({
    ok: false,
    code: 'handoff_mismatch',
  });
  expect(await call(exec, name('ownership.accept_handoff'), { ownershipId: id, executionSessionId: b, handoffId, conversation: {} })).toEqual({
    ok: false,
    code: 'conversation_forbidden',
  });
  const accepted = await ok(exec, name('ownership.accept_handoff'), { ownershipId: id, executionSessionId: b, handoffId, runtime: 'claude-code' });
  expect(accepted).toMatchObject({ state: 'active', epoch: 2, owner: { executionSessionId: b } });
  expect(await call(exec, name('ownership.heartbeat'), { ownershipId: id, executionSessionId: a, epoch: 1 })).toEqual({ ok: false, code: 'not_owner' });

  // B commits, submits; the landing controller merges and records the landing.
  const wt = repo.worktrees[i]!;
  writeFileSync(path.join(wt.path, `f${i}.txt`), `work ${i}\n`);
  git(wt.path, 'add', '.');
  git(wt.path, 'commit', '-q', '-m', `work ${i}`);
  const sourceHead = git(wt.path, 'rev-parse', 'HEAD');
  const submitted = await ok(exec, name('ownership.submit'), { ownershipId: id, executionSessionId: b, epoch: 2, head: sourceHead });
  expect(submitted.state).toBe('submitted');
  expect((await ok(exec, name('ownership.submit'), { ownershipId: id, executionSessionId: b, epoch: 2, head: sourceHead })).state).toBe('submitted');
  git(repo.repoRoot, 'merge', '-q', '--no-ff', '-m', `land ${wt.branch}`, wt.branch);
  const landedHead = git(repo.repoRoot, 'rev-parse', 'HEAD');
  const landed = await s.api(s.tokens.landing).land({ ownershipId: id, sourceHead, landedBranch: 'main', landedHead, landedAt: new Date().toISOString() });
  expect(landed.status).toBe('recorded');

  const reader = await http(s.tokens.reader, query);
  const prov = await call(reader, name('ownership.provenance'), { commit: landedHead.slice(0, 12), repo: repo.repoRoot });
  expect(prov.ok && prov.value).toMatchObject({ ownershipId: id, landedHead, sourceHead, executionSessionId: b, via: 'landed_head' });
  const bySource = await call(reader, name('ownership.provenance'), { commit: sourceHead, repo: repo.repoRoot });
  expect(bySource.ok && bySource.value).toMatchObject({ ownershipId: id, commit: sourceHead });
  expect(await call(reader, name('ownership.provenance'), { commit: 'zz', repo: repo.repoRoot })).toEqual({ ok: false, code: 'invalid_input' });

  const hist = await call(reader, name('ownership.history'), { ownershipId: id });
  const events = hist.ok ? (hist.value.ownerships as Array<{ events: Array<{ type: string }> }>)[0]!.events.map((e) => e.type) : [];
  expect(events).toEqual([
    'ownership.claimed',
    'ownership.handoff_started',
    'ownership.handoff_cancelled',
    'ownership.handoff_started',
    'ownership.claimed',
    'ownership.submitted',
    'ownership.landed',
  ]);
  // The other spelling is still accepted on a call: a host may have cached either.
  const other_ = query ? 'ownership.get' : 'ownership_get';
  expect((await call(reader, other_, { ownershipId: id })).ok).toBe(true);
});

test('reclaim: refused while the owner is not proven dead; an admin forces it with a reason, and the new owner has the next epoch', async () => {
  const exec = await http(s.tokens.executor);
  const admin = await http(s.tokens.admin);
  const bound = await ok(exec, 'ownership.bind', bindArgs(2, 'mcp-owner-c'));
  const id = bound.ownershipId;
  writeFileSync(path.join(repo.worktrees[2]!.path, 'unsaved.txt'), 'wip of c\n');
  const refused = await call(exec, 'ownership.reclaim', { ownershipId: id, executionSessionId: 'mcp-successor-d' });
  expect(refused.ok ? 'ok' : refused.code).toMatch(/^(owner_alive|liveness_unknown)$/);
  expect(await call(exec, 'ownership.reclaim', { ownershipId: id, executionSessionId: 'mcp-successor-d', force: true, reason: 'x' })).toEqual({
    ok: false,
    code: 'force_requires_admin',
  });
  expect(
    await call(admin, 'ownership.reclaim', { ownershipId: id, executionSessionId: 'mcp-successor-d', force: true, worker: { workerId: s.workerId } }),
  ).toEqual({
    ok: false,
    code: 'force_requires_reason',
  });
  const taken = await ok(admin, 'ownership.reclaim', {
    ownershipId: id,
    executionSessionId: 'mcp-successor-d',
    force: true,
    reason: 'owner unreachable',
    worker: { workerId: s.workerId },
  });
  expect(taken).toMatchObject({ state: 'active', epoch: 2, owner: { executionSessionId: 'mcp-successor-d' } });
  expect(taken.latestWip?.ref).toMatch(new RegExp(`^refs/overdeck/wip/${id}/`));
  const released = await ok(exec, 'ownership.release', { ownershipId: id, executionSessionId: 'mcp-successor-d', epoch: 2 });
  expect(released.state).toBe('released');
});

test('stdio with OD_MCP_TOOL_NAMES=host-safe: host-safe names listed, either spelling called; a bare host:port OD_API_URL is accepted', async () => {
  const client = await connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [require.resolve('tsx/cli'), path.join(__dirname, '../../src/mcp/stdio.ts')],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        OD_API_URL: s.url.replace(/^http:\/\//, ''),
        OD_TOKEN: s.tokens.reader,
        OD_MCP_TOOL_NAMES: 'host-safe',
      },
      stderr: 'pipe',
    }),
  );
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toContain('ownership_bind');
  expect(tools.some((t) => t.name.includes('.'))).toBe(false);
  expect(await call(client, 'ownership_list', { repoRoot: repo.repoRoot })).toMatchObject({ ok: true });
  expect(await call(client, 'ownership.get', { branch: 'wt/none' })).toEqual({ ok: false, code: 'not_found' });
});

test('a toolNames the server does not know is refused, like any bad input', async () => {
  const res = await s.raw('POST', '/mcp?toolNames=shouty', {
    token: s.tokens.reader,
    body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    headers: { accept: 'application/json, text/event-stream' },
  });
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ code: 'invalid_input', details: { fields: ['toolNames'] } });
});
