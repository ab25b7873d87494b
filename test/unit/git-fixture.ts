/** Shared by test/unit/git-*.test.ts: real repositories with real worktrees in temp dirs. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cleanGitEnv } from '../../src/git/exec';
import type { LocalProjection } from '../../src/git/projection';

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
