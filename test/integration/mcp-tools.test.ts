import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { OwnershipViewOut } from '../../src/contract/http';
import { readEvents } from '../../src/store/event-store';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';

/**
 * The MCP tools through the official SDK client: streamable HTTP at /mcp on the real API server,
 * and the stdio server (`tsx src/mcp/stdio.ts`) in both its modes. Same rules, same reason codes.
 */

let s: ApiStack;
let repo: RepoFixture;
const clients: Client[] = [];

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(4);
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await s?.stop();
});

async function httpClient(token: string | null): Promise<Client> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers } });
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  // Listing caches the tools' output schemas: from then on the SDK client checks every structured answer against them.
  await client.listTools();
  return client;
}

type Result = { ok: true; value: Record<string, unknown> } | { ok: false; code: string; message: string };

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Result> {
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
  // The text content is the answer's JSON, for clients that read only text; a success also has it
  // as structuredContent (checked by the SDK client against the tool's output schema), a refusal not.
  const text = res.content[0];
  const value = (text?.type === 'text' ? JSON.parse(text.text) : null) as Record<string, unknown>;
  if (res.isError) {
    expect(res.structuredContent).toBeUndefined();
    return { ok: false, code: String(value.code), message: String(value.message) };
  }
  expect(res.structuredContent).toEqual(value);
  return { ok: true, value };
}

async function refused(client: Client, name: string, args: Record<string, unknown>, code: string): Promise<void> {
  const r = await call(client, name, args);
  expect({ tool: name, code: r.ok ? 'ok' : r.code }).toEqual({ tool: name, code });
}

function bindArgs(i: number, session: string, extra: Record<string, unknown> = {}) {
  const wt = repo.worktrees[i]!;
  return { repoRoot: repo.repoRoot, worktreePath: wt.path, branch: wt.branch, executionSessionId: session, runtime: 'claude-code', lane: `mcp-${i}`, ...extra };
}

const TOOL_NAMES = [
  'ownership.accept_handoff',
  'ownership.bind',
  'ownership.cancel_handoff',
  'ownership.get',
  'ownership.handoff',
  'ownership.heartbeat',
  'ownership.history',
  'ownership.hold.end',
  'ownership.hold.grant',
  'ownership.hold.heartbeat',
  'ownership.list',
  'ownership.observe',
  'ownership.provenance',
  'ownership.reclaim',
  'ownership.release',
  'ownership.remove_worktree',
  'ownership.submit',
  'ownership.tenure',
];

test('tools/list: the lifecycle tools with titles, annotations, object input and output schemas, and server instructions; no conversation field anywhere', async () => {
  const client = await httpClient(s.tokens.reader);
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
  for (const t of tools) {
    expect(t.inputSchema.type).toBe('object');
    expect(t.outputSchema?.type).toBe('object');
    expect(t.title).toEqual(expect.any(String));
    expect(t.annotations?.title).toBe(t.title);
    // Agents cannot open this repository's documents: descriptions must not send them there.
    expect(t.description).not.toMatch(/docs\/|\.md\b|spec|\u00a7/i);
    for (const key of Object.keys(t.inputSchema.properties ?? {})) expect(key).not.toMatch(/conversation|principal/i);
  }
  const hints = Object.fromEntries(tools.map((t) => [t.name, [t.annotations?.readOnlyHint, t.annotations?.destructiveHint, t.annotations?.idempotentHint]]));
  for (const read of ['ownership.get', 'ownership.list', 'ownership.history', 'ownership.provenance', 'ownership.tenure'])
    expect(hints[read]).toEqual([true, false, true]);
  expect(hints['ownership.bind']).toEqual([false, false, true]);
  expect(hints['ownership.release']).toEqual([false, true, true]);
  expect(hints['ownership.reclaim']).toEqual([false, true, false]);
  expect(hints['ownership.handoff']).toEqual([false, false, false]);
  const bind = tools.find((t) => t.name === 'ownership.bind')!;
  expect(Object.keys(bind.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['repoRoot', 'worktreePath', 'branch', 'executionSessionId']));
  expect(bind.inputSchema.required).toEqual(expect.arrayContaining(['worktreePath', 'executionSessionId']));
  // The repository root and the branch are derived on the worktree's host; a caller may name them, only to have them checked.
  expect(bind.inputSchema.required).not.toContain('repoRoot');
  expect(bind.inputSchema.required).not.toContain('branch');
  expect(client.getInstructions()).toMatch(/ownership\.bind.*ownership\.heartbeat.*ownership\.submit/s);
  expect(client.getServerVersion()).toMatchObject({ name: 'worktree-ownership' });
});

test('/mcp requires the bearer token like /v1', async () => {
  await expect(httpClient(null)).rejects.toThrow(/unauthenticated/);
  await expect(httpClient('nope')).rejects.toThrow(/unauthenticated/);
  const raw = await s.raw('POST', '/mcp', {
    body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    headers: { accept: 'application/json, text/event-stream' },
  });
  expect(raw.status).toBe(401);
  expect(raw.body).toEqual({ code: 'unauthenticated', message: expect.any(String) });
  expect((await s.raw('GET', '/mcp', { token: s.tokens.reader })).status).toBe(405);
});

test('ownership.bind / get / list / history / heartbeat / release: the HTTP rules and reason codes, refusals changing nothing', async () => {
  const exec = await httpClient(s.tokens.executor);
  const other = await httpClient(s.tokens.otherExecutor);
  const reader = await httpClient(s.tokens.reader);

  // bind and its refusals
  const bound = await call(exec, 'ownership.bind', bindArgs(0, 'mcp-s0'));
  if (!bound.ok) throw new Error(`bind refused: ${bound.code}`);
  const view = bound.value as unknown as OwnershipViewOut;
  expect(view).toMatchObject({ state: 'active', epoch: 1, worker: { workerId: s.workerId }, owner: { executionSessionId: 'mcp-s0', runtime: 'claude-code' } });
  const replay = await call(exec, 'ownership.bind', bindArgs(0, 'mcp-s0'));
  expect(replay.ok && replay.value.ownershipId).toBe(view.ownershipId);
  // The tenure proof: in the bind's answer (checked by the SDK client against the output schema), the same again from ownership.tenure.
  const tenure = bound.value.tenure as { secret: string; epoch: number; env: Record<string, string> };
  expect(tenure).toMatchObject({
    epoch: 1,
    executionSessionId: 'mcp-s0',
    env: { OVERDECK_EXECUTION_SESSION_ID: 'mcp-s0', OVERDECK_EPOCH: '1', OVERDECK_TENURE_SECRET: tenure.secret },
  });
  expect(replay.ok && replay.value.tenure).toEqual(tenure);
  expect(await call(exec, 'ownership.tenure', { ownershipId: view.ownershipId, executionSessionId: 'mcp-s0' })).toEqual({ ok: true, value: tenure });
  await refused(exec, 'ownership.tenure', { ownershipId: view.ownershipId, executionSessionId: 'mcp-other' }, 'not_owner');
  await refused(other, 'ownership.tenure', { ownershipId: view.ownershipId, executionSessionId: 'mcp-s0' }, 'worker_mismatch');
  await refused(reader, 'ownership.tenure', { ownershipId: view.ownershipId, executionSessionId: 'mcp-s0' }, 'forbidden');
  const before = await readEvents(s.h.pool, view.ownershipId);

  await refused(
    exec,
    'ownership.bind',
    bindArgs(1, 'x', { conversation: { conversationId: '6f1c2a34-9b7d-4e21-8c55-0d3e4f5a6b7c' } }),
    'conversation_forbidden',
  );
  await refused(exec, 'ownership.bind', bindArgs(1, 'x', { bogus: 1 }), 'unknown_field');
  await refused(exec, 'ownership.bind', bindArgs(1, 'x', { branch: 5 }), 'invalid_input');
  await refused(exec, 'ownership.bind', { repoRoot: repo.repoRoot }, 'invalid_input');
  await refused(exec, 'ownership.bind', bindArgs(1, 'x', { worktreePath: '/etc' }), 'path_outside_allowed_roots');
  await refused(exec, 'ownership.bind', bindArgs(1, 'x', { worker: { workerId: s.otherWorkerId } }), 'worker_mismatch');
  await refused(reader, 'ownership.bind', bindArgs(1, 'x'), 'forbidden');
  await refused(other, 'ownership.bind', bindArgs(0, 'mcp-intruder'), 'worktree_owned');

  // get
  const got = await call(reader, 'ownership.get', { worktreePath: repo.worktrees[0]!.path });
  expect(got.ok && got.value.ownershipId).toBe(view.ownershipId);
  const byBranch = await call(reader, 'ownership.get', { branch: repo.worktrees[0]!.branch, repoRoot: repo.repoRoot });
  expect(byBranch.ok && byBranch.value.ownershipId).toBe(view.ownershipId);
  await refused(reader, 'ownership.get', {}, 'invalid_input');
  await refused(reader, 'ownership.get', { worktreePath: repo.worktrees[0]!.path, branch: 'x' }, 'invalid_input');
  await refused(reader, 'ownership.get', { worktreePath: 7 }, 'invalid_input');
  await refused(reader, 'ownership.get', { worktreePath: repo.worktrees[0]!.path, colour: 'blue' }, 'unknown_field');
  await refused(reader, 'ownership.get', { branch: 'wt/none' }, 'not_found');

  // list
  const listed = await call(reader, 'ownership.list', { repoRoot: repo.repoRoot, state: ['active'], limit: 10, liveness: true });
  expect(listed.ok).toBe(true);
  const items = (listed.ok ? listed.value.items : []) as Array<{ ownershipId: string; liveness: { status: string } | null }>;
  expect(items.map((i) => i.ownershipId)).toEqual([view.ownershipId]);
  expect(items[0]!.liveness?.status).toBe('live');
  await refused(reader, 'ownership.list', { state: 'sleeping' }, 'invalid_input');
  await refused(reader, 'ownership.list', { limit: 0 }, 'invalid_input');
  await refused(reader, 'ownership.list', { owner: 'me' }, 'unknown_field');

  // history
  const hist = await call(reader, 'ownership.history', { ownershipId: view.ownershipId });
  expect(hist.ok && (hist.value.ownerships as unknown[]).length).toBe(1);
  await refused(reader, 'ownership.history', { landedCommit: 'zz' }, 'invalid_input');
  await refused(reader, 'ownership.history', {}, 'invalid_input');

  // heartbeat
  const hb = { ownershipId: view.ownershipId, executionSessionId: 'mcp-s0', epoch: 1 };
  expect(await call(exec, 'ownership.heartbeat', hb)).toEqual({ ok: true, value: { accepted: true } });
  await refused(other, 'ownership.heartbeat', hb, 'worker_mismatch');
  await refused(reader, 'ownership.heartbeat', hb, 'forbidden');
  await refused(exec, 'ownership.heartbeat', { ...hb, extra: 1 }, 'unknown_field');
  await refused(exec, 'ownership.heartbeat', { ...hb, epoch: 'x' }, 'invalid_input');
  await refused(exec, 'ownership.heartbeat', { executionSessionId: 'mcp-s0', epoch: 1 }, 'invalid_input');
  await refused(exec, 'ownership.heartbeat', { ...hb, ownershipId: 'own_01JZZZZZZZZZZZZZZZZZZZZZZZ' }, 'not_found');

  // release: refusals first, then the real one
  await refused(exec, 'ownership.release', { ...hb, epoch: 2 }, 'stale_epoch');
  await refused(exec, 'ownership.release', { ...hb, executionSessionId: 'mcp-other' }, 'not_owner');
  await refused(other, 'ownership.release', hb, 'worker_mismatch');
  await refused(reader, 'ownership.release', hb, 'forbidden');
  await refused(exec, 'ownership.release', { ...hb, principal: { kind: 'admin', id: 'x' } }, 'unknown_field');
  expect(await readEvents(s.h.pool, view.ownershipId)).toEqual(before);

  const released = await call(exec, 'ownership.release', { ...hb, reason: 'done' });
  expect(released.ok && released.value.state).toBe('released');

  await refused(exec, 'ownership.nothing', {}, 'not_found');
  const metrics = String((await s.raw('GET', '/metrics')).body);
  expect(metrics).toMatch(/od_mcp_tool_calls_total\{tool="ownership.bind",code="conversation_forbidden"\} 1/);
  expect(metrics).toMatch(/od_mcp_tool_calls_total\{tool="ownership.release",code="ok"\} 1/);
});

function stdioClient(env: Record<string, string>): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [require.resolve('tsx/cli'), path.join(__dirname, '../../src/mcp/stdio.ts')],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'silent', ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'mcp-stdio-test', version: '1.0.0' });
  clients.push(client);
  return client.connect(transport).then(() => client);
}

test('stdio, through the HTTP API (OD_API_URL + OD_TOKEN): same answers, same codes', async () => {
  const client = await stdioClient({ OD_API_URL: s.url, OD_TOKEN: s.tokens.executor });
  expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
  const bound = await call(client, 'ownership.bind', bindArgs(2, 'mcp-stdio-s2'));
  expect(bound.ok && bound.value.state).toBe('active');
  await refused(client, 'ownership.bind', bindArgs(2, 'x', { conversation: {} }), 'conversation_forbidden');
  await refused(client, 'ownership.bind', bindArgs(2, 'mcp-stdio-other'), 'worktree_owned');
  await refused(client, 'ownership.bind', bindArgs(3, 'x', { bogus: true }), 'unknown_field');
  await refused(client, 'ownership.get', { branch: 'wt/none' }, 'not_found');
});

test('stdio, direct config (Temporal + PostgreSQL + principals file): the token is authenticated in-process', async () => {
  const client = await stdioClient({
    OD_TOKEN: s.tokens.executor,
    TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS!,
    OD_SERVICE_KEY_FILE: process.env.OD_SERVICE_KEY_FILE!,
    DATABASE_URL: process.env.OD_TEST_DATABASE_URL!,
    TEMPORAL_TASK_QUEUE: s.h.taskQueue,
    OD_HOST_ID: s.h.hostId,
    OD_ALLOWED_ROOTS: process.env.OD_TEST_TMP!,
    OD_TOKENS_FILE: s.tokensFile,
  });
  const bound = await call(client, 'ownership.bind', bindArgs(3, 'mcp-direct-s3'));
  expect(bound.ok && bound.value).toMatchObject({ state: 'active', worker: { workerId: s.workerId } });
  await refused(client, 'ownership.bind', bindArgs(3, 'x', { workerId: s.otherWorkerId }), 'worker_mismatch');
  const got = await call(client, 'ownership.get', { worktreePath: repo.worktrees[3]!.path });
  expect(got.ok && got.value.ownershipId).toBe(bound.ok && bound.value.ownershipId);
});

test('stdio refuses to start with a token nobody configured', async () => {
  await expect(
    stdioClient({
      OD_TOKEN: 'unknown-token',
      TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS!,
      DATABASE_URL: process.env.OD_TEST_DATABASE_URL!,
      OD_TOKENS_FILE: s.tokensFile,
    }),
  ).rejects.toThrow();
});
