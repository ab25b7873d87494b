import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { temporalCliPath } from '../../src/infra/tools';
import { makeRepo } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';

/**
 * With OD_PAYLOAD_KEY_FILE, Temporal's history holds no conversation title, URL or caller's text
 * in clear; an admin reads it through the API's codec endpoint, as the temporal CLI and UI do;
 * nobody else can. Real dev server, workers, API and `temporal workflow show`.
 */

let s: ApiStack;
beforeAll(async () => {
  const dir = mkdtempSync(path.join(process.env.OD_TEST_TMP ?? '/tmp', 'codec-'));
  const keyFile = path.join(dir, 'payload.key');
  writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
  s = await startApiStack({ payloadKeyFile: keyFile });
});
afterAll(async () => s?.stop());

function show(workflowId: string, extra: string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      temporalCliPath(),
      ['workflow', 'show', '--workflow-id', workflowId, '--address', process.env.TEMPORAL_ADDRESS!, '--namespace', 'default', '--output', 'json', ...extra],
      { encoding: 'utf8', maxBuffer: 64 << 20 },
      (err, stdout, stderr) => (err ? reject(new Error(stderr || err.message)) : resolve(stdout)),
    );
  });
}

/** Every payload's bytes as text, as someone reading the history would decode them. */
const payloadText = (json: string): string =>
  [...json.matchAll(/"data":\s*"([A-Za-z0-9+/=]+)"/g)].map((m) => Buffer.from(m[1]!, 'base64').toString('utf8')).join('\n');

test('the history holds encrypted payloads; an admin decodes them through /codec, a reader may not', async () => {
  const conversationId = randomUUID();
  const title = `title-canary-${randomUUID()}`;
  const lane = `lane-canary-${randomUUID()}`;
  const api = s.api(s.tokens.executor);
  await api.reportConversation({
    executor: 'chatgpt-web',
    executorInstanceId: 'ext-codec',
    sessionGeneration: 'g1',
    sequence: 1,
    conversation: { conversationId, conversationUrl: `https://chatgpt.com/c/${conversationId}`, title, observedAt: new Date().toISOString() },
  });
  const wt = makeRepo(1).worktrees[0]!;
  const bound = await api.bind({ worktreePath: wt.path, branch: wt.branch, executionSessionId: 'codec-s1', runtime: 'chatgpt-web', lane });
  // The API (a codec-holding client) reads it back in clear.
  expect(bound).toMatchObject({ lane, owner: { conversation: { title } } });
  const { rows } = await s.h.pool.query<{ workflow_id: string }>('SELECT workflow_id FROM ownerships WHERE ownership_id = $1', [bound.ownershipId]);
  const workflowId = rows[0]!.workflow_id;

  const history = await show(workflowId);
  expect(history).toContain(Buffer.from('binary/encrypted').toString('base64'));
  const raw = payloadText(history);
  for (const secret of [title, lane, `https://chatgpt.com/c/${conversationId}`]) expect(raw).not.toContain(secret);

  const decoded = payloadText(await show(workflowId, ['--codec-endpoint', `${s.url}/codec`, '--codec-auth', `Bearer ${s.tokens.admin}`]));
  expect(decoded).toContain(title);
  expect(decoded).toContain(lane);

  const denied = await s.raw('POST', '/codec/decode', { token: s.tokens.reader, body: { payloads: [] } });
  expect({ status: denied.status, code: (denied.body as { code?: string }).code }).toEqual({ status: 403, code: 'forbidden' });
  const anonymous = await s.raw('POST', '/codec/decode', { token: null, body: { payloads: [] } });
  expect(anonymous.status).toBe(401);
});
