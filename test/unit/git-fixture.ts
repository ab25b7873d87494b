/** Shared by test/unit/git-*.test.ts: real repositories with real worktrees in temp dirs. */
import { spawnSync } from 'node:child_process';
import {
  accessSync,
  constants,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statfsSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
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

const shQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** git that must succeed; returns trimmed stdout. */
export function g(cwd: string, ...args: string[]): string {
  const r = run('git', args, cwd);
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout.trim();
}

/**
 * g() for each command in turn, from one shell: what each answers, trimmed; throws as g() does at
 * the first that fails (the shell runs none after it). Each process a jest worker starts costs
 * more the larger the worker has grown, while a shell starts git cheaply: for the tests that read
 * many things at once. Each command's output is followed by NUL, its status, NUL.
 */
export function gMany(cwd: string, ...commands: readonly string[][]): string[] {
  const script = commands.map((args) => `git ${args.map(shQuote).join(' ')}; s=$?; printf '\\0%s\\0' $s; [ $s = 0 ] || exit 0`).join('\n');
  const r = run('sh', ['-c', script], cwd);
  const parts = r.stdout.split('\0');
  return commands.map((args, i) => {
    const status = parts[2 * i + 1];
    if (status !== '0') throw new Error(`git ${args.join(' ')} failed (${status ?? `no status, sh ${r.status}`}): ${r.stderr}`);
    return parts[2 * i]!.trim();
  });
}

/** Each repository's refs (name and object), read from one shell: what an attempt on it must leave as it was. */
export function refsOf(cwd: string, ...repos: readonly string[]): string[] {
  return gMany(cwd, ...repos.map((dir) => ['-C', dir, 'for-each-ref', '--format=%(refname) %(objectname)']));
}

/**
 * Where the repositories are made: a tmpfs (/dev/shm) where the machine has one with room to
 * spare (a container's is 64 MiB unless said otherwise), else the temp dir. Each test makes and
 * removes a repository of a hundred-odd small files, and git writes more; on a disk-backed file
 * system that was a third of a git suite's CPU time and more of its wall time. Nothing the tests
 * check depends on the file system.
 */
const REPOS = ((): string => {
  try {
    accessSync('/dev/shm', constants.W_OK);
    const fs = statfsSync('/dev/shm');
    if (fs.bavail * fs.bsize < 512 * 2 ** 20) return os.tmpdir();
    return realpathSync('/dev/shm');
  } catch {
    return os.tmpdir();
  }
})();

export interface Fixture {
  root: string;
  repo: string;
  wt1: string;
  wt2: string;
  cleanup(): void;
}

/** A repository with one commit on main plus two linked worktrees on branches wt1 and wt2. */
export function makeRepo(): Fixture {
  plain ??= buildRepo();
  return copyOf(plain);
}

/**
 * makeRepo() with `prepare` run on it: for the tests of a file that all start from the same
 * prepared repository. The preparation runs once per file and `key`; each call answers a copy.
 */
export async function preparedRepo(key: string, prepare: (fx: Fixture) => void | Promise<void>): Promise<Fixture> {
  return copyOf(
    await template(key, async () => {
      const fx = buildRepo();
      await prepare(fx);
      return fx;
    }),
  );
}

function buildRepo(): Fixture {
  const root = realpathSync(mkdtempSync(path.join(REPOS, 'od-git-')));
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

/*
 * Building a fixture runs git a dozen times or more; a test file asks for one per test, all alike.
 * So each kind is built once per file and every test gets a copy of it (a fresh directory, as
 * before). git keeps absolute paths in a few text files (a worktree's .git, its gitdir, the
 * config's hooksPath and remote, the hooks' own records): the copy gets its own root written
 * there. And its indexes are refreshed: the copied files' inodes and ctimes differ from what an
 * index recorded, so git would take every file for changed until it looked again (`reset --keep`
 * refuses "not uptodate", and the first git to look rewrites the index, in the middle of a
 * test's before/after).
 */
let plain: Fixture | undefined;
const templates = new Map<string, Promise<Fixture>>();
afterAll(async () => {
  plain?.cleanup();
  for (const t of await Promise.allSettled(templates.values())) if (t.status === 'fulfilled') t.value.cleanup();
});

function template<F extends Fixture>(key: string, build: () => Promise<F>): Promise<F> {
  let t = templates.get(key);
  if (t === undefined) templates.set(key, (t = build()));
  return t as Promise<F>;
}

function copyOf<F extends Fixture>(t: F): F {
  const root = realpathSync(mkdtempSync(path.join(REPOS, 'od-git-')));
  copyTree(t.root, root, t.root, root);
  const fx = { ...t, root, cleanup: () => rmSync(root, { recursive: true, force: true }) } as F;
  for (const [k, v] of Object.entries(t))
    if (typeof v === 'string' && v.startsWith(`${t.root}/`)) (fx as Record<string, unknown>)[k] = root + v.slice(t.root.length);
  gMany(root, ...[fx.repo, fx.wt1, fx.wt2].map((wt) => ['-C', wt, 'update-index', '-q', '--refresh']));
  return fx;
}

/** `src` copied to `dst` (modes kept), every text file naming `from` naming `to` instead (objects and indexes hold no paths). */
function copyTree(src: string, dst: string, from: string, to: string, paths = true): void {
  for (const e of readdirSync(src, { withFileTypes: true })) {
    const s = path.join(src, e.name);
    const d = path.join(dst, e.name);
    if (e.isDirectory()) {
      mkdirSync(d, { mode: statSync(s).mode });
      copyTree(s, d, from, to, paths && e.name !== 'objects');
    } else if (e.isSymbolicLink()) {
      const target = readlinkSync(s);
      symlinkSync(target.startsWith(`${from}/`) ? to + target.slice(from.length) : target, d);
    } else if (paths && e.name !== 'index' && readFileSync(s, 'latin1').includes(from))
      writeFileSync(d, readFileSync(s, 'latin1').replaceAll(from, to), { encoding: 'latin1', mode: statSync(s).mode });
    else copyFileSync(s, d);
  }
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
  return copyOf(await template(`owned ${o.committed === true} ${secret}`, () => buildOwnedRepo(secret, o)));
}

async function buildOwnedRepo(secret: string, o: { committed?: boolean }): Promise<OwnedFixture> {
  const fx = buildRepo();
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
