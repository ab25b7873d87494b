import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ApiClient } from '../../src/api/client';
import { buildServer } from '../../src/server/app';
import type { App } from '../../src/api/http';
import { createDevTokens, DEV_WORKER_ID, loadAuthenticator } from '../../src/auth/principals';
import { generateToken, hashToken } from '../../src/auth/tokens';
import type { LivenessAuthority } from '../../src/activities/liveness';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/infra/logger';
import { testDataConverter } from './harness';
import { startHarness, type Harness } from './harness';

/** Bearer tokens of the test principals: one of each kind, plus a second executor bound to another worker. */
export interface StackTokens {
  admin: string;
  landing: string;
  reader: string;
  /** executor of worker `workerId` */
  executor: string;
  /** executor of worker `otherWorkerId` */
  otherExecutor: string;
  /** executors of worker `workerId` whose tokens are bound to runs `run-a` and `run-b` */
  runA: string;
  runB: string;
}

export interface ApiStack {
  h: Harness;
  app: App;
  /** http://127.0.0.1:<port> of the listening server */
  url: string;
  tokens: StackTokens;
  /** the executors' workers: unique per stack, so test files sharing the database never share a binding */
  workerId: string;
  otherWorkerId: string;
  /** the principals file the server authenticates against (hashes only) */
  tokensFile: string;
  api(token?: string): ApiClient;
  /** a raw request, for what the typed client would never send */
  raw(
    method: string,
    pathAndQuery: string,
    opts?: { token?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; body: unknown; headers: Headers }>;
  stop(): Promise<void>;
}

/** The real API server (listening on a free port) over a harness on the run's Temporal and PostgreSQL. */
export async function startApiStack(
  opts: {
    authority?: LivenessAuthority;
    landingWaitMs?: number;
    devTokens?: boolean;
    payloadKeyFile?: string;
    ownDatabase?: boolean;
    maxCachedWorkflows?: number;
  } = {},
): Promise<ApiStack> {
  const dataConverter = opts.payloadKeyFile ? testDataConverter(opts.payloadKeyFile) : undefined;
  const h = await startHarness({
    ...(opts.authority ? { authority: opts.authority } : {}),
    ...(dataConverter ? { dataConverter } : {}),
    ...(opts.ownDatabase ? { ownDatabase: true } : {}),
    ...(opts.maxCachedWorkflows ? { maxCachedWorkflows: opts.maxCachedWorkflows } : {}),
  });
  const dir = mkdtempSync(path.join(process.env.OD_TEST_TMP ?? os.tmpdir(), 'tokens-'));
  const file = path.join(dir, 'tokens.json');
  const suffix = path.basename(dir).slice('tokens-'.length).toLowerCase();
  const workerId = `worker-${suffix}`;
  const otherWorkerId = `other-${suffix}`;
  const tokens: StackTokens = {
    admin: generateToken(),
    landing: generateToken(),
    reader: generateToken(),
    executor: generateToken(),
    otherExecutor: generateToken(),
    runA: generateToken(),
    runB: generateToken(),
  };
  const principals = [
    { id: `admin-${suffix}`, kind: 'admin', tokenSha256: hashToken(tokens.admin) },
    { id: `landing-${suffix}`, kind: 'landing', tokenSha256: hashToken(tokens.landing) },
    { id: `reader-${suffix}`, kind: 'reader', tokenSha256: hashToken(tokens.reader) },
    { id: `exec-${suffix}`, kind: 'executor', workerId, tokenSha256: hashToken(tokens.executor) },
    { id: `exec-other-${suffix}`, kind: 'executor', workerId: otherWorkerId, tokenSha256: hashToken(tokens.otherExecutor) },
    { id: `exec-run-a-${suffix}`, kind: 'executor', workerId, runId: 'run-a', tokenSha256: hashToken(tokens.runA) },
    { id: `exec-run-b-${suffix}`, kind: 'executor', workerId, runId: 'run-b', tokenSha256: hashToken(tokens.runB) },
  ];
  let authenticator;
  if (opts.devTokens) {
    // npm start's principals (createDevTokens, the executor acting for DEV_WORKER_ID) plus the other executor.
    Object.assign(tokens, createDevTokens(file));
    authenticator = loadAuthenticator({ tokensFile: file, tokensJson: JSON.stringify({ principals: principals.slice(4) }) });
  } else {
    writeFileSync(file, JSON.stringify({ principals }), { mode: 0o600 });
    authenticator = loadAuthenticator({ tokensFile: file });
  }
  const config = loadConfig({
    ...process.env,
    TEMPORAL_TASK_QUEUE: h.taskQueue,
    OD_HOST_ID: h.hostId,
    OD_ALLOWED_ROOTS: process.env.OD_TEST_TMP ?? os.tmpdir(),
    OD_TOKENS_FILE: file,
    LOG_LEVEL: process.env.OD_TEST_LOG_LEVEL ?? 'silent',
    OD_PAYLOAD_KEY_FILE: opts.payloadKeyFile ?? '',
  });
  const app = await buildServer({
    config,
    temporal: h.temporal,
    client: h.client,
    pool: h.pool,
    authenticator,
    logger: createLogger(config.logLevel),
    ...(opts.landingWaitMs !== undefined ? { landingWaitMs: opts.landingWaitMs } : {}),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    h,
    app,
    url,
    tokens,
    workerId: opts.devTokens ? DEV_WORKER_ID : workerId,
    otherWorkerId,
    tokensFile: file,
    api: (token) => new ApiClient({ baseUrl: url, ...(token ? { token } : {}) }),
    async raw(method, pathAndQuery, o = {}) {
      const headers: Record<string, string> = { ...(o.headers ?? {}) };
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      let body: string | undefined;
      if (o.rawBody !== undefined) body = o.rawBody;
      else if (o.body !== undefined) body = JSON.stringify(o.body);
      if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
      const res = await fetch(url + pathAndQuery, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async stop() {
      await app.close();
      await h.shutdown();
    },
  };
}
