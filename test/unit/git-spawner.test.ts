import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { GitSideError } from '../../src/git/errors';
import { git } from '../../src/git/exec';
import { readProjection, writeProjection } from '../../src/git/projection';
import { gitSpawner, stopGitSpawner, useGitSpawner } from '../../src/git/spawner';
import { makeRepo, projection, type Fixture } from './git-fixture';

/**
 * git through the helper process answers exactly as git spawned directly: output, exit codes
 * that are answers, failures with their first stderr line, cancellation, the environment it is
 * given; and the real writers work through it. Real git, real helper process.
 */
let fx: Fixture;
beforeEach(() => {
  fx = makeRepo();
});
afterEach(() => {
  stopGitSpawner();
  rmSync(fx.root, { recursive: true, force: true });
});

/** The same call, directly and through the helper. */
async function both<T>(call: () => Promise<T>): Promise<{ direct: T | string; helped: T | string }> {
  const settle = (p: Promise<T>) => p.catch((e: unknown) => (e instanceof GitSideError ? `${e.code}: ${e.message}` : String(e)));
  stopGitSpawner();
  const direct = await settle(call());
  useGitSpawner();
  const helped = await settle(call());
  return { direct, helped };
}

test('answers as a directly spawned git: output, okCodes, failures, environment', async () => {
  const cases: Array<() => Promise<unknown>> = [
    () => git(['rev-parse', '--git-common-dir'], { cwd: fx.wt1 }),
    () => git(['config', '--get', 'no.such-key'], { cwd: fx.wt1, okCodes: [1] }),
    () => git(['config', '--get', 'no.such-key'], { cwd: fx.wt1 }),
    () => git(['rev-parse', 'no-such-rev'], { cwd: fx.wt1 }),
    () =>
      git(['var', 'GIT_AUTHOR_IDENT'], { cwd: fx.wt1, env: { GIT_AUTHOR_NAME: 'Helper Test', GIT_AUTHOR_EMAIL: 'h@t', GIT_AUTHOR_DATE: '1700000000 +0000' } }),
    () => git(['rev-parse', '--git-dir'], { cwd: path.join(fx.root, 'no-such-dir') }),
  ];
  for (const c of cases) {
    const { direct, helped } = await both(c);
    expect(helped).toEqual(direct);
  }
  expect(gitSpawner()).not.toBeNull();
});

test('the projection writers work through it', async () => {
  useGitSpawner();
  expect(await writeProjection(fx.wt1, projection('A', 1))).toBe('written');
  expect(await writeProjection(fx.wt1, projection('A', 2))).toBe('written');
  expect(await readProjection(fx.wt1)).toEqual(projection('A', 2));
});

test('cancellation kills the git run and rejects with the reason', async () => {
  useGitSpawner();
  const ac = new AbortController();
  // `git cat-file --batch` waits on its stdin, which the helper never closes: only a kill ends it.
  const running = git(['cat-file', '--batch'], { cwd: fx.wt1, signal: ac.signal });
  setTimeout(() => ac.abort(new Error('cancelled by the test')), 200);
  await expect(running).rejects.toThrow('cancelled by the test');
});

test('a helper that dies fails the runs it held, and the next run starts a new helper', async () => {
  const spawner = useGitSpawner();
  const held = git(['cat-file', '--batch'], { cwd: fx.wt1 });
  await new Promise((r) => setTimeout(r, 200));
  process.kill(spawner.pid!, 'SIGKILL');
  await expect(held).rejects.toMatchObject({ code: 'git_failed' });
  expect((await git(['rev-parse', '--is-inside-work-tree'], { cwd: fx.wt1 })).stdout.trim()).toBe('true');
  expect(existsSync(fx.wt1)).toBe(true);
});

test('stopping lets the runs it holds answer, then the helper ends', async () => {
  const spawner = useGitSpawner();
  const ac = new AbortController();
  const held = git(['cat-file', '--batch'], { cwd: fx.wt1, signal: ac.signal });
  await new Promise((r) => setTimeout(r, 200));
  const pid = spawner.pid!;
  const ended = new Promise<void>((resolve) => {
    const poll = setInterval(() => {
      try {
        process.kill(pid, 0);
      } catch {
        clearInterval(poll);
        resolve();
      }
    }, 20);
  });
  stopGitSpawner();
  let settled = false;
  void held.catch(() => undefined).finally(() => (settled = true));
  await new Promise((r) => setTimeout(r, 200));
  expect(settled).toBe(false);
  ac.abort(new Error('done waiting'));
  await expect(held).rejects.toThrow('done waiting');
  await ended;
});

test('is off unless a process turns it on', () => {
  stopGitSpawner();
  expect(gitSpawner()).toBeNull();
});
