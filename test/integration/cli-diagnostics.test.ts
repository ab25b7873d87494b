import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { makeRepo } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';

const run = promisify(execFile);
const BIN = path.join(__dirname, '../../bin/od-worktree.js');

let s: ApiStack;
beforeAll(async () => {
  s = await startApiStack();
});
afterAll(async () => s?.stop());

test('export-diagnostics: ownerships and events as JSON with conversation URLs and titles redacted (docs/guarantees.md#what-is-never-stored-and-what-is-redacted)', async () => {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0];
  const conversationId = randomUUID();
  const title = `Secret plan title ${conversationId.slice(0, 8)}`;
  const reported = await s.raw('POST', '/v1/executor/conversation', {
    token: s.tokens.executor,
    body: {
      executor: 'chatgpt-web',
      executorInstanceId: 'ext-diag',
      sessionGeneration: 'g1',
      sequence: 1,
      conversation: { conversationId, conversationUrl: `https://chatgpt.com/c/${conversationId}`, title, observedAt: new Date().toISOString() },
    },
  });
  expect(reported.status).toBe(200);
  const bound = await s.raw('POST', '/v1/bind', {
    token: s.tokens.executor,
    body: { repoRoot: repo.repoRoot, worktreePath: wt.path, branch: wt.branch, executionSessionId: 'diag-session', runtime: 'chatgpt-web', lane: 'diag-lane' },
  });
  expect(bound.status).toBe(200);

  const env = { ...process.env, OD_API_URL: s.url, OD_TOKEN: s.tokens.admin };
  const out = await run('node', [BIN, 'export-diagnostics', '--repo', repo.repoRoot], { env });
  const doc = JSON.parse(out.stdout) as { ownerships: { record: { lane: string; ownershipId: string }; events: unknown[] }[] };
  expect(doc.ownerships).toHaveLength(1);
  expect(doc.ownerships[0].record.lane).toBe('diag-lane');
  expect(doc.ownerships[0].events.length).toBeGreaterThan(0);
  expect(out.stdout).toContain(conversationId);
  expect(out.stdout).not.toContain(`chatgpt.com/c/${conversationId}`);
  expect(out.stdout).not.toContain(title);

  const ids = await run('node', [BIN, 'export-diagnostics', '--repo', repo.repoRoot, '--redact-conversation-ids'], { env });
  expect(ids.stdout).not.toContain(conversationId);

  const anonymous = await run('node', [BIN, 'export-diagnostics'], { env: { ...env, OD_TOKEN: '' } }).catch((e: { code: number }) => e);
  expect((anonymous as { code: number }).code).toBe(1);
});
