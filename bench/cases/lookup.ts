import http from 'node:http';
import pino from 'pino';
import { ApiClient } from '../../src/api/client';
import { buildServer } from '../../src/server/app';
import { createAuthenticator } from '../../src/auth/principals';
import { generateToken, hashToken } from '../../src/auth/tokens';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/infra/logger';
import { OwnershipRecordSchema } from '../../src/domain/projection';
import { GET_BY_BRANCH_SQL, getOwnership } from '../../src/store/lookups';
import { round } from '../breakdown';
import type { BenchContext, LiveOwnership } from '../context';
import { latencyRow, type Row } from '../report';
import { progressLine, runPair, summarize, timeOnce } from '../stats';

/** The statement getOwnership runs for a branch: the baseline runs exactly it, raw. */
const BY_BRANCH_SQL = GET_BY_BRANCH_SQL;

/** The API's lookup route (src/api/routes/lookups.ts). */
const LOOKUP_ROUTE = '/v1/ownership';

interface HttpLookup {
  route: string;
  url: (o: LiveOwnership) => string;
  /** The product's HTTP client (what od-worktree and an integrator call), on node:http with keep-alive. */
  client: ApiClient;
  /** The same request through fastify's inject (no socket): the API's own processing. */
  inject: (o: LiveOwnership) => Promise<number>;
  headers: Record<string, string>;
  stop(): Promise<void>;
}

/** The API as `npm start` serves it, on a free port, checked to answer the lookup before it is timed. */
async function startHttpLookup(ctx: BenchContext, probe: LiveOwnership): Promise<HttpLookup> {
  const { stack } = ctx;
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: stack.databaseUrl,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_TASK_QUEUE: stack.taskQueue,
    OD_HOST_ID: stack.hostId,
    OD_ALLOWED_ROOTS: stack.root,
    OD_API_PORT: '1',
  });
  // A reader principal, as a lookup client (od-worktree who/list) would present.
  const token = generateToken();
  const authenticator = createAuthenticator([{ id: 'bench-reader', kind: 'reader', tokenSha256: hashToken(token) }]);
  const headers = { authorization: `Bearer ${token}` };
  // The production logger at its default level (one line per request), written to /dev/null.
  const logger = createLogger('info', pino.destination({ dest: '/dev/null', sync: true }));
  const app = await buildServer({ config, temporal: stack.temporal, client: stack.ownership, pool: stack.pool, authenticator, logger });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  const stop = () => app.close();
  const path = (o: LiveOwnership) => `${LOOKUP_ROUTE}?branch=${encodeURIComponent(o.wt.branch)}&repoRoot=${encodeURIComponent(o.wt.repoRoot)}`;
  const url = (o: LiveOwnership) => `http://127.0.0.1:${port}${path(o)}`;
  const inject = async (o: LiveOwnership) => (await app.inject({ method: 'GET', url: path(o), headers })).statusCode;
  const res = await fetch(url(probe), { headers });
  const body = await res.text();
  if (res.status !== 200 || !body.includes(probe.ownershipId)) {
    await stop();
    throw new Error(`GET ${LOOKUP_ROUTE} did not answer the lookup (HTTP ${res.status})`);
  }
  const client = new ApiClient({ baseUrl: `http://127.0.0.1:${port}`, token });
  return { route: LOOKUP_ROUTE, url, client, inject, headers, stop };
}

/**
 * 4. Ownership lookup by branch: the store function (getOwnership) vs the same SQL run raw with
 *    `pg` on the same pool; and over HTTP vs the same raw SQL.
 *    Lookups rotate over live ownerships; the history inserted for case 7 is in the tables.
 */
export async function benchLookup(ctx: BenchContext, live: LiveOwnership[]): Promise<Row[]> {
  const { pool } = ctx.stack;
  const targets = live.slice(0, Math.min(100, live.length));
  const { warmup, iterations } = ctx.sizes.lookup;
  const raw = async (o: LiveOwnership) => {
    const res = await pool.query<{ record: { ownershipId: string } }>(BY_BRANCH_SQL, [o.wt.branch, o.wt.repoRoot]);
    return res.rows[0]?.record ?? null;
  };
  for (const o of targets.slice(0, 5)) {
    const viaStore = await getOwnership(pool, { branch: o.wt.branch, repoRoot: o.wt.repoRoot });
    if (viaStore?.ownershipId !== o.ownershipId || (await raw(o))?.ownershipId !== o.ownershipId)
      throw new Error(`lookup by branch ${o.wt.branch}: wrong ownership`);
  }
  const store = await runPair({
    warmup,
    iterations,
    ours: (i) => getOwnership(pool, { branch: targets[i % targets.length].wt.branch, repoRoot: targets[i % targets.length].wt.repoRoot }),
    base: (i) => raw(targets[i % targets.length]),
    progress: progressLine('lookup: store fn vs raw SQL'),
  });
  // What the store function adds to the raw statement: validating its input and the record it returns.
  const record = await raw(targets[0]);
  const parse: number[] = [];
  for (let i = 0; i < 500; i++) parse.push(await timeOnce(async () => OwnershipRecordSchema.parse(record)));
  const rows: Row[] = [];
  const storeBase = summarize(store.base);
  rows.push(
    latencyRow(
      'lookup-store',
      'lookup by branch: store fn',
      summarize(store.ours),
      storeBase,
      'same SQL, raw pg',
      { on: 'ratio', op: '<=', value: 1.2, stat: 'p50' },
      {
        recordParseP50Ms: round(summarize(parse).p50, 3),
      },
    ),
  );

  const http = await startHttpLookup(ctx, targets[0]);
  const bare = await bareHttpServer(ctx);
  // One lookup through the exported ApiClient (the answer parsed, as a caller gets it): ours, and the bare server's.
  const viaApi = async (i: number) => {
    const o = targets[i % targets.length];
    const r = await http.client.get({ branch: o.wt.branch, repoRoot: o.wt.repoRoot });
    if (r.ownershipId !== o.ownershipId) throw new Error('HTTP lookup: wrong ownership');
  };
  const viaBare = async (i: number) => {
    const o = targets[i % targets.length];
    const r = await bare.client.request<{ ownershipId: string }>('GET', '/', { query: { branch: o.wt.branch, repoRoot: o.wt.repoRoot } });
    if (r.body.ownershipId !== o.ownershipId) throw new Error('bare HTTP lookup: wrong ownership');
  };
  try {
    // fetch is timed beside it below.
    const viaHttp = await runPair({
      warmup,
      iterations,
      ours: viaApi,
      base: (i) => raw(targets[i % targets.length]),
      progress: progressLine('lookup: HTTP vs raw SQL'),
    });
    // The same requests through fetch (undici), as this row measured them before the client moved to node:http.
    const viaFetch = await runPair({
      warmup,
      iterations: Math.min(iterations, 500),
      ours: async (i) => {
        const res = await fetch(http.url(targets[i % targets.length]), { headers: http.headers });
        if (res.status !== 200) throw new Error(`HTTP lookup: ${res.status}`);
        await res.arrayBuffer();
      },
      base: (i) => raw(targets[i % targets.length]),
    });
    // The API against a bare node:http server answering the same SQL, both through the ApiClient
    // over a keep-alive socket: what the API's own processing adds to the transport.
    const vsBare = await runPair({
      warmup,
      iterations,
      ours: viaApi,
      base: viaBare,
      progress: progressLine('lookup: HTTP vs a bare node:http server'),
    });
    // Breakdown: the API without the socket (inject), and the socket without the API (a bare
    // node:http server answering the same SQL as JSON).
    const parts = await runPair({
      warmup,
      iterations: Math.min(iterations, 1_000),
      ours: async (i) => {
        const code = await http.inject(targets[i % targets.length]);
        if (code !== 200) throw new Error(`inject lookup: ${code}`);
      },
      base: viaBare,
    });
    rows.push(
      latencyRow(
        'lookup-http',
        'lookup by branch: over HTTP',
        summarize(viaHttp.ours),
        summarize(viaHttp.base),
        'same SQL, raw pg',
        { on: 'ratio', op: '<=', value: 2, stat: 'p50' },
        {
          route: `GET ${http.route}?branch=&repoRoot= (reader token)`,
          client: 'ApiClient (node:http, keep-alive), the answer parsed',
          viaFetch: {
            p50Ms: round(summarize(viaFetch.ours).p50, 3),
            rawSqlP50Ms: round(summarize(viaFetch.base).p50, 3),
            ratio: round(summarize(viaFetch.ours).p50 / summarize(viaFetch.base).p50, 2),
          },
          breakdownP50Ms: {
            apiViaInjectNoSocket: round(summarize(parts.ours).p50, 3),
            bareNodeHttpSameSqlJsonViaApiClient: round(summarize(parts.base).p50, 3),
          },
        },
      ),
    );
    rows.push(
      latencyRow(
        'lookup-http-bare',
        'lookup by branch: over HTTP vs a bare node:http server',
        summarize(vsBare.ours),
        summarize(vsBare.base),
        'bare node:http server, same SQL, JSON',
        { on: 'ratio', op: '<=', value: 1.2, stat: 'p50' },
        { client: 'ApiClient (node:http, keep-alive), the answer parsed, on both' },
      ),
    );
  } finally {
    await http.stop();
    await bare.stop();
  }
  return rows;
}

/** A bare node:http server answering GET ?branch=&repoRoot= with the raw SQL's record as JSON: the transport alone. */
async function bareHttpServer(ctx: BenchContext): Promise<{ client: ApiClient; stop(): Promise<void> }> {
  const { pool } = ctx.stack;
  const server = http.createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    pool.query<{ record: unknown }>(BY_BRANCH_SQL, [q.get('branch'), q.get('repoRoot')]).then(
      (r) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(r.rows[0]?.record ?? null));
      },
      () => {
        res.writeHead(500);
        res.end();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    client: new ApiClient({ baseUrl: `http://127.0.0.1:${port}` }),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
