import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { buildServer } from '../../src/server/app';
import type { App } from '../../src/api/http';
import { loadAuthenticator } from '../../src/auth/principals';
import { hashToken } from '../../src/auth/tokens';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/infra/logger';
import { temporalCliPath } from '../../src/infra/tools';
import { git, makeRepo } from '../support/git-fixture';
import { startHarness, type Harness } from '../support/harness';
import { tenureSecretHash } from '../../src/keys/tenure';

/**
 * docs/guarantees.md#what-is-never-stored-and-what-is-redacted: a full scenario with canaries in the bearer tokens, in a cookie header and in
 * fields the API must refuse; then a scan of every place data lands (PostgreSQL, every workflow
 * history, git config and lock files, all logs) finds none of them. Free-text canaries are the
 * positive control: they are legitimately stored, and the scan must find them.
 */
const RUN = Math.random().toString(36).slice(2, 8);
const TOKEN = (kind: string) => `tok-CANARY-TOKEN-${kind}-${RUN}`;
const COOKIE = `CANARY-COOKIE-${RUN}`;
const TEXT = `CANARY-TEXT-${RUN}`;
const TOKEN_MARK = `CANARY-TOKEN-`;

const logs: string[] = [];
let h: Harness;
let app: App;
let url: string;
const workerId = `canary-worker-${RUN}`;

beforeAll(async () => {
  // Every line the Temporal runtime (worker, workflow and activity logs) prints, kept for the scan.
  try {
    Runtime.install({ logger: new DefaultLogger('DEBUG', (entry) => logs.push(`${entry.message} ${JSON.stringify(entry.meta ?? {})}`)) });
  } catch {
    // Already installed in this process: the API log below is still captured.
  }
  h = await startHarness();
  const dir = mkdtempSync(path.join(process.env.OD_TEST_TMP!, 'canary-'));
  const tokensFile = path.join(dir, 'tokens.json');
  writeFileSync(
    tokensFile,
    JSON.stringify({
      principals: [
        { id: `exec-${RUN}`, kind: 'executor', workerId, tokenSha256: hashToken(TOKEN('executor')) },
        { id: `landing-${RUN}`, kind: 'landing', tokenSha256: hashToken(TOKEN('landing')) },
        { id: `admin-${RUN}`, kind: 'admin', tokenSha256: hashToken(TOKEN('admin')) },
      ],
    }),
    { mode: 0o600 },
  );
  const config = loadConfig({
    ...process.env,
    TEMPORAL_TASK_QUEUE: h.taskQueue,
    OD_HOST_ID: h.hostId,
    OD_ALLOWED_ROOTS: process.env.OD_TEST_TMP!,
    OD_TOKENS_FILE: tokensFile,
    LOG_LEVEL: 'trace',
  });
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  app = await buildServer({
    config,
    temporal: h.temporal,
    client: h.client,
    pool: h.pool,
    authenticator: loadAuthenticator({ tokensFile }),
    logger: createLogger('trace', sink),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app?.close();
  await h?.shutdown();
});

async function call(method: string, p: string, token: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url + p, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      cookie: `session=${COOKIE}; other=${COOKIE}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

test('no bearer token, cookie canary, service key or tenure secret reaches PostgreSQL, Temporal history, git config, lock files or logs', async () => {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0];
  const exec = TOKEN('executor');
  const conversationId = randomUUID();

  // The extension's observation: a smuggled credential field is refused, the clean one is kept.
  const observation = {
    executor: 'chatgpt-web',
    executorInstanceId: 'ext-canary',
    sessionGeneration: 'gen-1',
    sequence: 1,
    conversation: {
      conversationId,
      conversationUrl: `https://chatgpt.com/c/${conversationId}?token=${TOKEN('url')}#${COOKIE}`,
      title: `${TEXT} title`,
      observedAt: new Date().toISOString(),
    },
  };
  const smuggled = await call('POST', '/v1/executor/conversation', exec, { ...observation, sequence: 0, cookie: COOKIE, accessToken: TOKEN('body') });
  expect(smuggled.status).toBe(400);
  expect(JSON.stringify(smuggled.body)).not.toContain(COOKIE);
  const reported = await call('POST', '/v1/executor/conversation', exec, observation);
  expect(reported.status).toBe(200);

  // A request with a wrong token carrying a canary, and a bind naming a conversation, are refused.
  expect(
    (await call('POST', '/v1/bind', TOKEN('forged'), { repoRoot: repo.repoRoot, worktreePath: wt.path, branch: wt.branch, executionSessionId: 's' })).status,
  ).toBe(401);
  const withConversation = await call('POST', '/v1/bind', exec, {
    repoRoot: repo.repoRoot,
    worktreePath: wt.path,
    branch: wt.branch,
    executionSessionId: 's',
    conversation: { conversationId, token: TOKEN('conv') },
  });
  expect(withConversation.status).toBe(400);

  // The full scenario, every free-text field carrying the text canary.
  const bound = await call('POST', '/v1/bind', exec, {
    repoRoot: repo.repoRoot,
    worktreePath: wt.path,
    branch: wt.branch,
    executionSessionId: `canary-a-${RUN}`,
    runtime: 'chatgpt-web',
    lane: `${TEXT} lane`,
    planRef: `${TEXT} plan`,
    requestId: `req-${RUN}`,
  });
  expect(bound.status).toBe(200);
  const v = bound.body as { ownershipId: string; epoch: number; owner: { conversation: { conversationUrl: string } }; tenure: { secret: string } };
  // The tenure secrets the scenario is handed (docs/operations.md#the-tenure-proof): answered, never kept.
  const secrets = [v.tenure.secret];
  expect(v.owner.conversation.conversationUrl).toBe(`https://chatgpt.com/c/${conversationId}`);
  const id = v.ownershipId;
  expect((await call('POST', `/v1/ownerships/${id}/heartbeat`, exec, { executionSessionId: `canary-a-${RUN}`, epoch: 1 })).status).toBe(202);
  expect(
    (
      await call('POST', `/v1/ownerships/${id}/plan`, exec, {
        executionSessionId: `canary-a-${RUN}`,
        epoch: 1,
        lane: `${TEXT} lane 2`,
        planRef: `${TEXT} plan 2`,
      })
    ).status,
  ).toBe(200);
  const ho = await call('POST', `/v1/ownerships/${id}/handoff`, exec, {
    executionSessionId: `canary-a-${RUN}`,
    epoch: 1,
    toExecutionSessionId: `canary-b-${RUN}`,
    reason: `${TEXT} handoff`,
  });
  expect(ho.status).toBe(200);
  const handoffId = (ho.body as { handoff: { handoffId: string } }).handoff.handoffId;
  const accepted = await call('POST', `/v1/ownerships/${id}/handoff/accept`, exec, {
    handoffId,
    executionSessionId: `canary-b-${RUN}`,
    runtime: 'chatgpt-web',
  });
  expect(accepted.status).toBe(200);
  secrets.push((accepted.body as { tenure: { secret: string } }).tenure.secret);
  // Fetched again, and handed to an admin's recorded override: the same secret, and still nowhere else.
  const fetched = await call('POST', `/v1/ownerships/${id}/tenure`, exec, { executionSessionId: `canary-b-${RUN}` });
  expect((fetched.body as { secret: string }).secret).toBe(secrets[1]);
  const overridden = await call('POST', `/v1/ownerships/${id}/override`, TOKEN('admin'), { reason: `${TEXT} override` });
  expect(overridden.status).toBe(200);
  expect((overridden.body as { tenure: { secret: string } }).tenure.secret).toBe(secrets[1]);
  // A child hold under the successor: its own secret, answered with the grant and kept nowhere; the
  // projection holds its hash while the hold lives, then the hold ends.
  const granted = await call('POST', `/v1/ownerships/${id}/holds`, exec, {
    executionSessionId: `canary-b-${RUN}`,
    epoch: 2,
    childExecutionSessionId: `canary-c-${RUN}`,
    runtime: 'codex-cli',
  });
  expect(granted.status).toBe(200);
  const child = granted.body as { holdId: string; tenure: { secret: string } };
  secrets.push(child.tenure.secret);
  const childDir = git(wt.path, 'rev-parse', '--absolute-git-dir');
  let childConfig = '';
  for (let i = 0; i < 300 && !childConfig.includes(tenureSecretHash(child.tenure.secret)); i++) {
    await new Promise((r) => setTimeout(r, 100));
    childConfig = readFileSync(path.join(childDir, 'overdeck.config'), 'utf8');
  }
  expect(childConfig).toContain(`tenure-hash = "${tenureSecretHash(child.tenure.secret)}`);
  expect(childConfig).not.toContain(child.tenure.secret);
  const endedHold = await call('POST', `/v1/ownerships/${id}/holds/${child.holdId}/end`, exec, { executionSessionId: `canary-c-${RUN}`, epoch: 2 });
  expect(endedHold.status).toBe(200);
  // While the successor holds it, its worktree's projection holds the hash of its secret (and only that).
  const held: Record<string, string> = {};
  const privateDir = git(wt.path, 'rev-parse', '--absolute-git-dir');
  for (let i = 0; i < 300 && !(held.config ?? '').includes(tenureSecretHash(secrets[1]!)); i++) {
    await new Promise((r) => setTimeout(r, 100));
    held.config = readFileSync(path.join(privateDir, 'overdeck.config'), 'utf8');
  }
  expect(held.config).toContain(`tenure-hash = "${tenureSecretHash(secrets[1]!)}`);
  expect(held.config).not.toContain(tenureSecretHash(secrets[0]!));
  for (const file of walk(path.join(repo.repoRoot, '.git'))) held[`git-held:${path.relative(repo.repoRoot, file)}`] = readFileSync(file, 'utf8');
  writeFileSync(path.join(wt.path, 'work.txt'), 'work\n');
  git(wt.path, 'add', '.');
  git(wt.path, 'commit', '-q', '-m', 'work');
  const head = git(wt.path, 'rev-parse', 'HEAD');
  expect((await call('POST', `/v1/ownerships/${id}/submit`, exec, { executionSessionId: `canary-b-${RUN}`, epoch: 2, head })).status).toBe(200);
  git(repo.repoRoot, 'merge', '-q', '--no-ff', '-m', 'land', wt.branch);
  const landedHead = git(repo.repoRoot, 'rev-parse', 'HEAD');
  const landing = await call('POST', '/v1/landings', TOKEN('landing'), {
    ownershipId: id,
    sourceHead: head,
    landedBranch: 'main',
    landedHead,
    landedAt: new Date().toISOString(),
  });
  expect([200, 202]).toContain(landing.status);
  expect((await call('GET', `/v1/history?ownershipId=${id}`, TOKEN('admin'))).status).toBe(200);
  expect((await call('GET', `/v1/provenance/${landedHead}?repo=${encodeURIComponent(repo.repoRoot)}`, TOKEN('admin'))).status).toBe(200);

  // Let the host agent finish its projection, then scan everything.
  for (let i = 0; i < 100; i++) {
    const live = await h.client.projection({ workflowId: await h.client.workflowIdOf({ repoRoot: repo.repoRoot, worktreePath: wt.path }) });
    if (live && live.state === 'landed' && live.projectionSync.localSeq >= live.seq) break;
    await new Promise((r) => setTimeout(r, 100));
  }

  const places: Record<string, string> = {};
  // PostgreSQL: every row of every table of the schema, as JSON.
  const tables = await h.pool.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
  for (const { tablename } of tables.rows) {
    const rows = await h.pool.query<{ j: string }>(`SELECT row_to_json(t)::text AS j FROM "${tablename}" t`);
    places[`postgres:${tablename}`] = rows.rows.map((r) => r.j).join('\n');
  }
  // Temporal: the history of every ownership workflow this scenario touched, through the CLI.
  const wf = await h.pool.query<{ workflow_id: string }>('SELECT DISTINCT workflow_id FROM ownerships WHERE repo_root = $1', [repo.repoRoot]);
  expect(wf.rows.length).toBeGreaterThan(0);
  for (const { workflow_id } of wf.rows) {
    const shown = execFileSync(
      temporalCliPath(),
      ['workflow', 'show', '--workflow-id', workflow_id, '--address', process.env.TEMPORAL_ADDRESS!, '--output', 'json'],
      { encoding: 'utf8' },
    );
    places[`temporal:${workflow_id}`] = `${shown}\n${decodedPayloads(JSON.parse(shown)).join('\n')}`;
  }
  // git: every config, include and lock file of the repository and its worktrees (objects excluded).
  for (const file of walk(path.join(repo.repoRoot, '.git'))) places[`git:${path.relative(repo.repoRoot, file)}`] = readFileSync(file, 'utf8');
  places.logs = logs.join('\n');

  expect(places.logs.length).toBeGreaterThan(0);
  const found = Object.entries(places)
    .filter(([, text]) => text.includes(TOKEN_MARK) || text.includes(COOKIE))
    .map(([where]) => where);
  expect(found).toEqual([]);
  // The service key seals every message (docs/operations.md#the-service-key): its seals are in the
  // histories, the key itself nowhere (base64 as in its file, or hex).
  const serviceKey = readFileSync(process.env.OD_SERVICE_KEY_FILE!, 'utf8')
    .split('\n')
    .find((l) => l.trim() !== '' && !l.startsWith('#'))!
    .trim();
  // As it would show: in clear, in hex, or base64 again (the CLI's JSON prints payload metadata base64).
  const keyForms = [serviceKey, Buffer.from(serviceKey, 'base64').toString('hex'), Buffer.from(serviceKey).toString('base64').replace(/=+$/, '')];
  expect(
    Object.entries(places)
      .filter(([, text]) => keyForms.some((k) => text.includes(k)))
      .map(([where]) => where),
  ).toEqual([]);
  expect(Object.keys(places).some((k) => k.startsWith('temporal:') && places[k].includes('od-seal'))).toBe(true);
  // No tenure secret either: in clear, its MAC in hex or in standard base64, or the secret base64 again.
  const secretForms = secrets.flatMap((t) => {
    const mac = Buffer.from(t.slice('odt1_'.length), 'base64url');
    return [
      t,
      t.slice('odt1_'.length),
      mac.toString('hex'),
      mac.toString('base64').replace(/=+$/, ''),
      Buffer.from(t).toString('base64').replace(/=+$/, ''),
      Buffer.from(t).toString('hex'),
    ];
  });
  const everywhere = { ...places, ...held };
  expect(
    Object.entries(everywhere)
      .filter(([, text]) => secretForms.some((f) => text.includes(f)))
      .map(([where]) => where),
  ).toEqual([]);
  // The override is recorded (the positive control of the table the secret never reaches).
  expect(places['postgres:overrides']).toContain(`${TEXT} override`);
  // Positive control: the scan does see data the scenario stored.
  expect(Object.keys(places).some((k) => k.startsWith('postgres:') && places[k].includes(TEXT))).toBe(true);
  expect(Object.keys(places).some((k) => k.startsWith('temporal:') && places[k].includes(TEXT))).toBe(true);
  expect(Object.keys(places).some((k) => k.startsWith('git:') && places[k].includes(`canary-b-${RUN}`))).toBe(true);
});

/** Payload data is base64 in the CLI's JSON: decode every payload so the scan reads what was stored. */
function decodedPayloads(x: unknown): string[] {
  if (Array.isArray(x)) return x.flatMap(decodedPayloads);
  if (x === null || typeof x !== 'object') return [];
  const o = x as Record<string, unknown>;
  const own = typeof o.data === 'string' && typeof o.metadata === 'object' ? [Buffer.from(o.data, 'base64').toString('utf8')] : [];
  return [...own, ...Object.values(o).flatMap(decodedPayloads)];
}

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    if (name === 'objects') continue;
    const full = path.join(dir, name);
    const st = statSync(full);
    if (st.isDirectory()) yield* walk(full);
    else if (st.size < 1_000_000) yield full;
  }
}
