import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { installHooks } from '../../src/git/guard';
import { applyLocalProjection } from '../../src/git/projection';
import { worktreeDirs } from '../../src/git/repo';
import { tenureSecretHash } from '../../src/keys/tenure';
import { g, GATE_DIR, makeRepo, projection, run, type Fixture, type Run } from './git-fixture';

/**
 * An agent refused in an owned worktree deletes (or empties) the projection the hooks read and
 * tries again. The writers put the projection first and the lock file after it, and clear them in
 * that order, so a lock file without a projection is a hand's work: the hooks, the PATH gate and
 * `od-worktree guard` refuse everyone (`projection_missing`), the owner included, until the
 * projection is written again; a worktree whose lock went with its projection (released) is free.
 */

const SECRET = 'odt1_projection-missing-secret-projection-missing';
let fx: Fixture;
let privateDir: string;

beforeEach(async () => {
  fx = makeRepo();
  await installHooks(fx.repo);
  await applyLocalProjection(fx.wt1, projection('A', 1, { tenureHash: tenureSecretHash(SECRET) }), { gitLock: true });
  privateDir = (await worktreeDirs(fx.wt1)).privateDir;
});
afterEach(() => fx.cleanup());

const owner = { OVERDECK_EXECUTION_SESSION_ID: 'session_A', OVERDECK_TENURE_SECRET: SECRET };
/** Refused, saying TEXT (git exits 1 for a refused pre-commit and 128 for an aborted ref update). */
function refused(r: Run, text: string): void {
  expect({ stderr: r.stderr.includes(text) ? text : r.stderr, refused: r.status !== 0 }).toEqual({ stderr: text, refused: true });
}
const commit = (env: Record<string, string>, through: 'hooks' | 'gate' = 'hooks') =>
  run('git', ['commit', '-q', '--allow-empty', '-m', 'x'], fx.wt1, through === 'gate' ? { PATH: `${GATE_DIR}:${process.env.PATH ?? ''}`, ...env } : env);

test('with the projection deleted, its lock file left: nobody commits, by the hooks or the gate, until it is written again', async () => {
  refused(commit({}), 'you are unidentified');
  const head = g(fx.wt1, 'rev-parse', 'HEAD');
  rmSync(path.join(privateDir, 'overdeck.config'));
  expect(existsSync(path.join(privateDir, 'overdeck.lock.json'))).toBe(true);
  for (const env of [{}, { OVERDECK_EXECUTION_SESSION_ID: 'session_A' }, owner] as Record<string, string>[]) {
    refused(commit(env), "this worktree's projection");
    refused(commit(env, 'gate'), 'names session session_A (ownership own_A, epoch 1)');
  }
  expect(run(process.execPath, [path.join(GATE_DIR, 'od-gate.cjs'), 'guard'], fx.wt1, owner).status).toBe(15);
  expect(g(fx.wt1, 'rev-parse', 'HEAD')).toBe(head);

  await applyLocalProjection(fx.wt1, projection('A', 2, { tenureHash: tenureSecretHash(SECRET) }), { gitLock: true });
  expect(commit(owner)).toMatchObject({ status: 0 });
});

test('emptied instead of deleted: the same refusal', () => {
  writeFileSync(path.join(privateDir, 'overdeck.config'), '');
  refused(commit(owner), "this worktree's projection");
  writeFileSync(
    path.join(privateDir, 'overdeck.config'),
    '# Written by od-worktree; replaced as a whole on every change. Do not edit.\n[overdeck]\n\tlane = "x"\n',
  );
  refused(commit({}), "this worktree's projection");
});

test('released (the writer clears the projection, then the lock): anyone commits', async () => {
  await applyLocalProjection(fx.wt1, null, { gitLock: true, force: true });
  expect(existsSync(path.join(privateDir, 'overdeck.lock.json'))).toBe(false);
  expect(commit({})).toMatchObject({ status: 0 });
  rmSync(path.join(privateDir, 'overdeck.config'), { force: true });
  expect(commit({}, 'gate')).toMatchObject({ status: 0 });
});
