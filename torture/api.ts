import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import type { App } from '../src/api/http';
import { buildServer } from '../src/server/app';
import { loadAuthenticator } from '../src/auth/principals';
import { generateToken, hashToken } from '../src/auth/tokens';
import type { OwnershipClient } from '../src/client';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/infra/logger';
import type { Target } from './target';

export interface TortureApiDeps {
  temporal: Client;
  client: OwnershipClient;
  pool: Pool;
  taskQueue: string;
  hostId: string;
  /** the API's allowed roots; the run's repositories go under the first */
  allowedRoots: string[];
  /** where the principals file (hashes only) is written */
  dir: string;
  workers: number;
}

/**
 * The real API server on an existing stack with `workers` executor principals of distinct agent
 * workers plus admin, landing and reader, written to a principals file as test/support/api-stack.ts
 * does (that one has two executors; a torture run wants as many as it is asked for).
 */
export async function startTortureApi(deps: TortureApiDeps): Promise<{ target: Omit<Target, 'pool' | 'baseDir'>; app: App; stop(): Promise<void> }> {
  const tag = Math.random().toString(36).slice(2, 8);
  const tokens = { admin: generateToken(), landing: generateToken(), reader: generateToken() };
  const executors = Array.from({ length: deps.workers }, (_, i) => ({ workerId: `torture-${tag}-w${i}`, token: generateToken() }));
  const principals = [
    { id: `admin-${tag}`, kind: 'admin', tokenSha256: hashToken(tokens.admin) },
    { id: `landing-${tag}`, kind: 'landing', tokenSha256: hashToken(tokens.landing) },
    { id: `reader-${tag}`, kind: 'reader', tokenSha256: hashToken(tokens.reader) },
    ...executors.map((e, i) => ({ id: `exec-${tag}-${i}`, kind: 'executor', workerId: e.workerId, tokenSha256: hashToken(e.token) })),
  ];
  const file = path.join(deps.dir, 'torture-principals.json');
  writeFileSync(file, JSON.stringify({ principals }), { mode: 0o600 });
  const config = loadConfig({
    ...process.env,
    TEMPORAL_TASK_QUEUE: deps.taskQueue,
    OD_HOST_ID: deps.hostId,
    OD_ALLOWED_ROOTS: deps.allowedRoots.join(path.delimiter),
    OD_TOKENS_FILE: file,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
  });
  const app = await buildServer({
    config,
    temporal: deps.temporal,
    client: deps.client,
    pool: deps.pool,
    authenticator: loadAuthenticator({ tokensFile: file }),
    logger: createLogger(config.logLevel),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { target: { url, hostId: deps.hostId, ...tokens, executors }, app, stop: () => app.close() };
}
