import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { runTorture, type Target } from '../../torture';
import { check } from '../../torture/checker';
import { startApiStack, type ApiStack } from '../support/api-stack';

/**
 * The torture run's short mode on the jest stack: a few seconds of concurrent legal and illegal
 * traffic over real HTTP (two executors of different workers, admin, landing), then the checker
 * over PostgreSQL's log and the worktrees. A fixed seed, so a failure here repeats with
 * this test (TORTURE_SEED picks another seed) or `npm run torture -- --seed <seed>` (long mode, own stack).
 */

/** TORTURE_SEED runs the short mode on another seed (the figures line prints it). */
const SEED = Number(process.env.TORTURE_SEED ?? 20261130);

let s: ApiStack;
beforeAll(async () => {
  s = await startApiStack();
});
afterAll(async () => s?.stop());

test('torture (short): one live owner per worktree, nothing acknowledged lost, no 5xx', async () => {
  const baseDir = mkdtempSync(path.join(process.env.OD_TEST_TMP!, 'torture-'));
  const target: Target = {
    url: s.url,
    pool: s.h.pool,
    hostId: s.h.hostId,
    baseDir,
    admin: s.tokens.admin,
    landing: s.tokens.landing,
    reader: s.tokens.reader,
    executors: [
      { workerId: s.workerId, token: s.tokens.executor },
      { workerId: s.otherWorkerId, token: s.tokens.otherExecutor },
    ],
  };
  const result = await runTorture(target, {
    seed: SEED,
    durationMs: 6_000,
    maxCalls: 400,
    sessionsPerWorker: 3,
    worktrees: 3,
    concurrency: 4,
    runDir: path.join(baseDir, 'run'),
  });
  process.stderr.write(`${result.summary}\n`);
  expect(result.figures.calls).toBeGreaterThan(20);
  expect(result.violations.map((v) => `${v.check}: ${v.message}`)).toEqual([]);
  expect(result.figures.status5xx).toBe(0);
  expect(result.figures.noAnswer).toBe(0);

  // The checker read a real log, and is not vacuous: an acknowledgement the log does not hold
  // (a bind answered 200 to a session that never owned the worktree) is reported.
  expect(result.figures.lifecycles).toBeGreaterThan(0);
  expect(result.figures.events).toBeGreaterThan(result.figures.lifecycles);
  const bound = result.checked.calls.find((r) => r.op === 'bind' && r.status === 200)!;
  const forged = { ...bound, n: 1_000_000, body: { ...bound.body, executionSessionId: 'forged-session' } };
  const again = await check({ ...result.checked, calls: [forged] });
  expect(again.violations.map((v) => v.check)).toContain('acknowledged_in_log');
}, 180_000);
