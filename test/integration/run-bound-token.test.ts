/**
 * An executor token bound to one run acts only for that run (docs/guarantees.md): the worker's
 * ownership held under run-a is not run-b's, though both tokens are the same worker's. The owner's
 * heartbeat and the tenure proof are judged by the API alone (no workflow message carries the
 * principal), and they let any run of the worker through before (src/auth/policy.ts authorizeForWorker).
 */
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';
import type { OwnershipViewOut } from '../../src/contract/http';

let s: ApiStack;
let repo: RepoFixture;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(1);
});
afterAll(async () => s?.stop());

const codeOf = (res: { status: number; body: unknown }) => ({ status: res.status, code: (res.body as { code?: string }).code ?? null });

test('a run-bound token acts for its own run only: heartbeat, tenure and release of another run are worker_mismatch', async () => {
  const wt = repo.worktrees[0]!;
  const session = 'run-a-session';
  const bound = await s.raw('POST', '/v1/bind', {
    token: s.tokens.runA,
    body: { repoRoot: repo.repoRoot, worktreePath: wt.path, branch: wt.branch, executionSessionId: session, runtime: 'codex-cli' },
  });
  expect(bound.status).toBe(200);
  const view = bound.body as OwnershipViewOut;
  expect(view.worker).toEqual({ workerId: s.workerId, runId: 'run-a' });
  const fence = { executionSessionId: session, epoch: view.epoch };
  const at = (what: string) => `/v1/ownerships/${view.ownershipId}/${what}`;

  // run-b's token, same worker: none of the owner's messages.
  expect(codeOf(await s.raw('POST', at('heartbeat'), { token: s.tokens.runB, body: fence }))).toEqual({ status: 403, code: 'worker_mismatch' });
  expect(codeOf(await s.raw('POST', at('tenure'), { token: s.tokens.runB, body: { executionSessionId: session } }))).toEqual({
    status: 403,
    code: 'worker_mismatch',
  });
  expect(codeOf(await s.raw('POST', at('release'), { token: s.tokens.runB, body: fence }))).toEqual({ status: 403, code: 'worker_mismatch' });

  // Its own run's token, and the worker's unbound token, still act.
  expect((await s.raw('POST', at('heartbeat'), { token: s.tokens.runA, body: fence })).status).toBe(202);
  expect((await s.raw('POST', at('tenure'), { token: s.tokens.runA, body: { executionSessionId: session } })).status).toBe(200);
  expect((await s.raw('POST', at('heartbeat'), { token: s.tokens.executor, body: fence })).status).toBe(202);
  expect((await s.raw('POST', at('release'), { token: s.tokens.runA, body: fence })).status).toBe(200);
}, 120_000);
