import { execFile } from 'node:child_process';
import path from 'node:path';
import { localProcessAuthority, type LivenessAuthority } from '../../src/activities/liveness';
import { devSecretFile } from '../../src/auth/principals';
import { startApiStack, type ApiStack } from '../support/api-stack';

/**
 * `npm run demo` end to end, against the API as `npm start` runs it: dev tokens, the local liveness
 * authority (real processes), a worker and host agent on the run's Temporal and PostgreSQL.
 */

let s: ApiStack;

beforeAll(async () => {
  // npm start's authority: local processes of this host (whose id the harness picks at start).
  let hostId = '';
  const authority: LivenessAuthority = { check: (owner) => localProcessAuthority(hostId).check(owner) };
  s = await startApiStack({ devTokens: true, authority });
  hostId = s.h.hostId;
});
afterAll(async () => s?.stop());

test('the demo walks the whole story and exits 0', async () => {
  const res = await runDemo(s);
  if (res.code !== 0) throw new Error(`demo exited ${res.code}\n${res.stdout}\n${res.stderr}`);
  const out = res.stdout;
  if (process.env.OD_DEMO_PRINT) process.stderr.write(out);
  for (const heading of [
    'the executor reports the conversation',
    'session A binds',
    'then is refused',
    'guard hooks installed',
    'A dies',
    'B reclaims',
    'submits it',
    'records the landing',
    'the worktree is removed',
    'od-worktree restore',
    'B removes its other worktree',
    'od-worktree provenance',
  ]) {
    expect(out).toContain(heading);
  }
  expect(out).toContain('refused: worktree_owned');
  expect(out).toMatch(/B: od-worktree: refused: this worktree is owned by session demo-a-/);
  expect(out).toContain('State:         STALE');
  expect(out).toMatch(/Latest WIP: {4}refs\/overdeck\/wip\//);
  expect(out).toContain('State:         CLOSED');
  expect(out).toMatch(/files kept at refs\/overdeck\/wip\//);
  expect(out).toContain('worktree_removed: recorded');
  expect(out).toMatch(/restored .*verified against [0-9a-f]{12}, no owner/);
  expect(out).toMatch(/Conversation URL: https:\/\/chatgpt\.com\/c\/[0-9a-f-]{36}/);
  expect(out).toContain('demo complete');
}, 240_000);

function runDemo(stack: ApiStack): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    OD_API_URL: stack.url,
    OD_DEMO_TOKENS: devSecretFile(stack.tokensFile),
    OD_HOST_ID: stack.h.hostId,
    OD_ALLOWED_ROOTS: process.env.OD_TEST_TMP!,
    TMPDIR: process.env.OD_TEST_TMP!,
  };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [require.resolve('tsx/cli'), path.join(__dirname, '../../scripts/demo.ts')],
      { env, encoding: 'utf8', timeout: 200_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      },
    );
  });
}
