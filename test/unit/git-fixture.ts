/** Shared by test/unit/git-*.test.ts: real repositories with real worktrees in temp dirs. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cleanGitEnv } from '../../src/git/exec';
import { tenureSecretHash } from '../../src/keys/tenure';
import { installHooks } from '../../src/git/guard';
import { type LocalProjection, writeProjection } from '../../src/git/projection';

const isolation = mkdtempSync(path.join(os.tmpdir(), 'od-git-cfg-'));
writeFileSync(path.join(isolation, 'gitconfig'), '[init]\n\tdefaultBranch = main\n[user]\n\tname = Test\n\temail = test@example.invalid\n');
// The host's own git config (hooksPath, signing, templates) must not change what these tests see.
process.env.GIT_CONFIG_GLOBAL = path.join(isolation, 'gitconfig');
process.env.GIT_CONFIG_NOSYSTEM = '1';
delete process.env.OVERDECK_EXECUTION_SESSION_ID;
delete process.env.OVERDECK_EPOCH;
afterAll(() => rmSync(isolation, { recursive: true, force: true }));

export interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

export function run(cmd: string, args: readonly string[], cwd: string, env: Record<string, string> = {}, input?: string): Run {
  const res = spawnSync(cmd, [...args], { cwd, env: cleanGitEnv(env), encoding: 'utf8', input });
  if (res.error) throw res.error;
  return { status: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

/** git that must succeed; returns trimmed stdout. */
export function g(cwd: string, ...args: string[]): string {
  const r = run('git', args, cwd);
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout.trim();
}

export interface Fixture {
  root: string;
  repo: string;
  wt1: string;
  wt2: string;
  cleanup(): void;
}

/** A repository with one commit on main plus two linked worktrees on branches wt1 and wt2. */
export function makeRepo(): Fixture {
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'od-git-')));
  const repo = path.join(root, 'repo');
  g(root, 'init', '-q', '-b', 'main', repo);
  writeFileSync(path.join(repo, 'a.txt'), 'one\n');
  writeFileSync(path.join(repo, '.gitignore'), '*.ignored\n');
  g(repo, 'add', '.');
  g(repo, 'commit', '-q', '-m', 'first');
  writeFileSync(path.join(repo, 'a.txt'), 'two\n');
  g(repo, 'commit', '-q', '-am', 'second');
  const wt1 = path.join(root, 'wt1');
  const wt2 = path.join(root, 'wt2');
  g(repo, 'worktree', 'add', '-q', '-b', 'wt1', wt1);
  g(repo, 'worktree', 'add', '-q', '-b', 'wt2', wt2);
  return { root, repo, wt1, wt2, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** Owner `tag`: every value carries the tag, so a reader can tell whether keys of two owners mixed. */
export function projection(tag: string, seq: number, over: Partial<LocalProjection> = {}): LocalProjection {
  return {
    ownershipId: `own_${tag}`,
    executionSessionId: `session_${tag}`,
    runtime: `runtime-${tag}`,
    conversationId: `conv-${tag}`,
    conversationUrl: `https://chatgpt.com/c/conv-${tag}`,
    workerId: `worker-${tag}`,
    runId: `run-${tag}`,
    lane: `lane-${tag}`,
    planRef: `docs/plans/${tag}.md`,
    epoch: seq,
    seq,
    state: 'active',
    claimedAt: '2026-08-20T00:00:00.000Z',
    lastSeenAt: '2026-08-20T00:01:00.000Z',
    ...over,
  };
}

/** bin/git-gate: first on PATH, it is the `git` an agent under `od-worktree exec` runs. */
export const GATE_DIR = path.resolve(__dirname, '../../bin/git-gate');

export interface OwnedFixture extends Fixture {
  /** A bare remote with main, wt1 and other pushed. */
  origin: string;
}

/**
 * A repository whose wt1 session_B holds (ownership own_A, epoch 2) with the hooks installed and
 * the tenure hash of `secret` in its projection: `other` has a commit of its own (merging or
 * picking it moves the owned branch), the owner made a stash entry through the gate (so the hooks
 * recorded its maker), and, unless `committed`, it has a changed, a staged and an untracked file.
 */
export async function ownedRepo(secret: string, o: { committed?: boolean } = {}): Promise<OwnedFixture> {
  const fx = makeRepo();
  g(fx.repo, 'checkout', '-q', '-b', 'other', 'HEAD~1');
  writeFileSync(path.join(fx.repo, 'b.txt'), 'on other\n');
  g(fx.repo, 'add', 'b.txt');
  g(fx.repo, 'commit', '-q', '-m', 'other');
  g(fx.repo, 'checkout', '-q', 'main');
  const origin = path.join(fx.root, 'origin.git');
  g(fx.root, 'init', '-q', '--bare', origin);
  g(fx.repo, 'remote', 'add', 'origin', origin);
  g(fx.repo, 'push', '-q', 'origin', 'main', 'wt1', 'other');
  await installHooks(fx.repo);
  await writeProjection(fx.wt1, projection('B', 2, { ownershipId: 'own_A', epoch: 2, tenureHash: tenureSecretHash(secret) }));
  writeFileSync(path.join(fx.wt1, 'a.txt'), 'stashed by the owner\n');
  const stashed = run('git', ['stash', '-q'], fx.wt1, { PATH: `${GATE_DIR}:${process.env.PATH ?? ''}`, OVERDECK_TENURE_SECRET: secret });
  if (stashed.status !== 0) throw new Error(`the owner could not stash: ${stashed.stderr}`);
  if (o.committed !== true) {
    writeFileSync(path.join(fx.wt1, 'a.txt'), 'the owner edits a tracked file\n');
    writeFileSync(path.join(fx.wt1, 'staged.txt'), 'the owner stages a file\n');
    g(fx.wt1, 'add', 'staged.txt');
    writeFileSync(path.join(fx.wt1, 'new.txt'), 'untracked\n');
  }
  return { ...fx, origin };
}
