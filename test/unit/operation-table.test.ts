/**
 * The operation table (src/contract/operations.ts) is the one description of each message to an
 * ownership: the routes, the MCP tools, the HTTP client's methods, the service's handlers and the
 * policy matrix are made from it. This holds every surface against it both ways: an operation of
 * the table missing from a surface fails, and so does a surface's operation the table does not
 * have (a route, tool or method written by hand beside it). The surfaces' other entries (lookups,
 * observers, removal, landings by branch) are named below, each once.
 */
import { ApiClient } from '../../src/api/client';
import { HANDLERS } from '../../src/api/service';
import { MATRIX } from '../../src/auth/policy';
import { loadConfig } from '../../src/config';
import { OPERATION_NAMES, OPERATION_TABLE, operation, toolInputOf } from '../../src/contract/operations';
import { TOOLS, toolInputJsonSchema, toolOutputJsonSchema } from '../../src/mcp/tools';
import { buildServer } from '../../src/server/app';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** What one surface offers, as the checker reads it. */
interface Surfaces {
  /** the table: name -> URL template (Fastify's), method, tool name or null */
  table: Record<string, { method: string; url: string; tool: string | null }>;
  /** documented routes: `POST /v1/ownerships/{id}/heartbeat` */
  routes: string[];
  /** MCP tool names */
  tools: string[];
  /** ApiClient prototype methods */
  clientMethods: string[];
  /** the service's handlers of the table */
  handlers: string[];
}

/** Routes that are messages to an ownership, and so must be the table's: bind and POST /v1/ownerships/{id}/… */
const MESSAGE_ROUTE = /^POST \/v1\/(bind$|ownerships\/\{id\}\/)/;
/** The tools outside the table: lookups, observers, removal. */
const OTHER_TOOLS = ['ownership.get', 'ownership.list', 'ownership.history', 'ownership.provenance', 'ownership.observe', 'ownership.remove_worktree'];
/** The client's methods outside the table: its plumbing, and the lookups, observers, removal, landings by branch, reconcile. */
const OTHER_METHODS = [
  'constructor',
  'request',
  'call',
  'send',
  'ownership',
  'land',
  'reportConversation',
  'get',
  'getLive',
  'removeWorktree',
  'observe',
  'leaveObserve',
  'list',
  'history',
  'provenance',
  'principal',
  'recordReconciliation',
];

const documented = (url: string) => url.replace(/:(\w+)/g, '{$1}');

/** Every disagreement between the table and a surface, as a sentence. */
function problems(s: Surfaces): string[] {
  const out: string[] = [];
  const names = Object.keys(s.table);
  const routes = new Set(s.routes);
  const tableRoutes = new Set(names.map((n) => `${s.table[n]!.method} ${documented(s.table[n]!.url)}`));
  for (const n of names) {
    const { method, url, tool } = s.table[n]!;
    if (!routes.has(`${method} ${documented(url)}`)) out.push(`${n}: no route ${method} ${url}`);
    if (tool !== null && !s.tools.includes(tool)) out.push(`${n}: no MCP tool ${tool}`);
    if (!s.clientMethods.includes(n)) out.push(`${n}: no ApiClient method`);
    if (!s.handlers.includes(n)) out.push(`${n}: no service handler`);
  }
  for (const r of s.routes) if (MESSAGE_ROUTE.test(r) && !tableRoutes.has(r)) out.push(`route ${r}: not in the operation table`);
  const tableTools = new Set(names.map((n) => s.table[n]!.tool).filter((t): t is string => t !== null));
  for (const t of s.tools) if (!tableTools.has(t) && !OTHER_TOOLS.includes(t)) out.push(`tool ${t}: not in the operation table`);
  for (const m of s.clientMethods) if (!names.includes(m) && !OTHER_METHODS.includes(m)) out.push(`ApiClient.${m}: not in the operation table`);
  for (const h of s.handlers) if (!names.includes(h)) out.push(`handler ${h}: not in the operation table`);
  return out;
}

let actual: Surfaces;

beforeAll(async () => {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', OD_HOST_ID: 'unit', OD_TOKENS_FILE: '', OD_ALLOWED_ROOTS: '/tmp', OD_PAYLOAD_KEY_FILE: '' });
  const stand = {} as never;
  const app = await buildServer({ config, temporal: stand, client: stand, pool: stand, authenticator: { authenticate: () => null } as never });
  await app.ready();
  const doc = app.swagger() as { paths: Record<string, Record<string, unknown>> };
  await app.close();
  actual = {
    table: Object.fromEntries(
      OPERATION_NAMES.map((n) => {
        const o = operation(n);
        return [n, { method: o.method, url: o.url, tool: o.tool?.name ?? null }];
      }),
    ),
    routes: Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`)),
    tools: TOOLS.map((t) => t.name),
    clientMethods: Object.getOwnPropertyNames(ApiClient.prototype),
    handlers: Object.keys(HANDLERS),
  };
});

test('every surface offers exactly the operations of the table', () => {
  expect(problems(actual)).toEqual([]);
});

test('a doctored table or surface is caught, each way', () => {
  // An operation added to the table that no surface offers.
  const added = { ...actual, table: { ...actual.table, frobnicate: { method: 'POST', url: '/v1/ownerships/:id/frobnicate', tool: 'ownership.frobnicate' } } };
  expect(problems(added)).toEqual([
    'frobnicate: no route POST /v1/ownerships/:id/frobnicate',
    'frobnicate: no MCP tool ownership.frobnicate',
    'frobnicate: no ApiClient method',
    'frobnicate: no service handler',
  ]);
  // A table operation whose tool the tool list forgot (TOOLS names the table's tools one by one, for their order).
  expect(problems({ ...actual, tools: actual.tools.filter((t) => t !== 'ownership.hold.end') })).toEqual(['endHold: no MCP tool ownership.hold.end']);
  // Surfaces with an operation the table does not have: a route, a tool, a client method, a handler written beside it.
  const extra = {
    ...actual,
    routes: [...actual.routes, 'POST /v1/ownerships/{id}/frobnicate'],
    tools: [...actual.tools, 'ownership.frobnicate'],
    clientMethods: [...actual.clientMethods, 'frobnicate'],
    handlers: [...actual.handlers, 'frobnicate'],
  };
  expect(problems(extra)).toEqual([
    'route POST /v1/ownerships/{id}/frobnicate: not in the operation table',
    'tool ownership.frobnicate: not in the operation table',
    'ApiClient.frobnicate: not in the operation table',
    'handler frobnicate: not in the operation table',
  ]);
});

test('a table tool is the table entry: its arguments are the body and the address, its answer the response', () => {
  for (const name of OPERATION_NAMES) {
    const o = OPERATION_TABLE[name];
    const tool = o.tool ? TOOLS.find((t) => t.name === o.tool?.name) : undefined;
    if (!tool) continue;
    expect([name, toolInputJsonSchema(tool.schema)]).toEqual([name, toolInputJsonSchema(toolInputOf(name))]);
    expect([name, toolOutputJsonSchema(tool.output)]).toEqual([name, toolOutputJsonSchema(o.response)]);
    expect([name, tool.title, tool.annotations]).toEqual([name, o.tool?.title, o.tool?.annotations]);
  }
});

test('the policy matrix takes each table operation’s roles from the table', () => {
  for (const name of OPERATION_NAMES) expect([name, MATRIX[name]]).toEqual([name, OPERATION_TABLE[name].roles]);
});

test('a table operation’s ApiClient method puts its address in the URL and sends its body', async () => {
  const sent: Array<[string, string, unknown]> = [];
  const client = new ApiClient({ baseUrl: 'http://127.0.0.1:1' });
  client.request = (async (method: string, path: string, opts: { body?: unknown }) => {
    sent.push([method, path, opts.body]);
    return { status: 200, body: {} };
  }) as ApiClient['request'];
  await client.bind({ worktreePath: '/w', executionSessionId: 's' });
  await client.heartbeat('own_1', { executionSessionId: 's', epoch: 1 });
  await client.endHold('own_1', 'h/1', { executionSessionId: 's', epoch: 1 });
  await client.worktreeRemoved('own_1');
  expect(sent).toEqual([
    ['POST', '/v1/bind', { worktreePath: '/w', executionSessionId: 's' }],
    ['POST', '/v1/ownerships/own_1/heartbeat', { executionSessionId: 's', epoch: 1 }],
    ['POST', '/v1/ownerships/own_1/holds/h%2F1/end', { executionSessionId: 's', epoch: 1 }],
    ['POST', '/v1/ownerships/own_1/worktree-removed', {}],
  ]);
});

/** Code (comments left out) that spells a table operation's URL itself: a wire call beside the table's. */
function handWrittenCalls(files: Record<string, string>): string[] {
  const actions = OPERATION_NAMES.map((n) => operation(n).url)
    .filter((u) => u.startsWith('/v1/ownerships/:id/'))
    .map((u) => u.slice('/v1/ownerships/:id/'.length).split('/')[0]!);
  // `{id}` is the documents' spelling (prose in strings); a call builds the id in.
  const url = new RegExp(`/v1/bind\\b|/v1/ownerships/(?!\\{id\\})[^'"\`\\s]*/(${[...new Set(actions)].join('|')})\\b`);
  const out: string[] = [];
  for (const [file, text] of Object.entries(files)) {
    if (file === 'src/contract/operation-paths.ts') continue;
    const code = text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/\/\/[^\n]*/g, '');
    code.split('\n').forEach((line, i) => {
      if (url.test(line)) out.push(`${file}:${i + 1}`);
    });
  }
  return out;
}

test('no code outside the table spells an operation’s URL (the CLI, the hooks and the MCP proxy call the ApiClient’s method)', () => {
  const root = path.resolve(__dirname, '../..');
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((f) => (statSync(path.join(d, f)).isDirectory() ? walk(path.join(d, f)) : /\.ts$/.test(f) ? [path.join(d, f)] : []));
  const files = Object.fromEntries(walk(path.join(root, 'src')).map((f) => [path.relative(root, f), readFileSync(f, 'utf8')]));
  expect(handWrittenCalls(files)).toEqual([]);
  const planted = { 'src/cli/commands/planted.ts': "await api().request('POST', `/v1/ownerships/${id}/heartbeat`, { body });\n// POST /v1/bind, in prose\n" };
  expect(handWrittenCalls(planted)).toEqual(['src/cli/commands/planted.ts:1']);
});
