import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { RESTORE_REASONS, type RestoreOutput, type RestoreReasonCode, type SnapshotDescription } from '../contract/restore';
import { isNotFound } from './atomic';
import { stageAsOnDisk, stageOthersAsOnDisk } from './disk-tree';
import { GitSideError } from './errors';
import { git, gitBytes, type GitResult } from './exec';
import { normalizePath, PathRefusal, assertUnderAllowedRoots } from './paths';
import { pinnedGit, worktreeDirs, type WorktreeDirs } from './repo';
import type { GitEnvExtras } from './safe-env';
import { describeSnapshot, type RepoGitRun, SnapshotReadError } from './wip';

/**
 * Restore of a WIP snapshot (wip.ts) into a worktree of its own (docs/restore.md).
 *
 * The worktree is added with `git worktree add --no-checkout` (no file is written through the
 * repository's smudge filters, no hook runs: safe-env.ts), the index is set to the recorded staged
 * state with `read-tree` (no -u), and every file is written by us from its blob, bytes as stored
 * (the snapshot hashed them as on disk, with no filter). Then the result is taken again exactly as
 * a snapshot takes a worktree (disk-tree.ts) and compared with the snapshot: the files' tree
 * (bytes and modes), the index's tree, the ignored files and HEAD. Success is answered only after
 * that comparison; anything else is a RestoreError with a stable code.
 *
 * A restored worktree has no owner: its projection is not restored (a snapshot does not hold it);
 * a new owner comes only through bind or reclaim.
 */

export class RestoreError extends Error {
  constructor(
    readonly code: RestoreReasonCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'RestoreError';
  }
}

export interface RestoreOptions {
  /** any directory of the repository: one of its worktrees (also the main one) or its git dir */
  repo: string;
  /** a ref under refs/overdeck/wip/ ... */
  snapshotRef?: string;
  /** ... or the snapshot commit's id */
  sha?: string;
  /** where to recreate the worktree; default the path the snapshot recorded */
  path?: string;
  /** the branch to check out instead of the recorded one; created at the recorded HEAD when it does not exist */
  branch?: string;
  /** the new worktree must be under one of these (config allowedRoots) */
  allowedRoots?: readonly string[];
  /**
   * Called after the files are written, before they are verified: where a test stands in for a
   * writer that touches the new worktree meanwhile (an editor, a watcher), which the verification must catch.
   */
  beforeVerify?: (worktreePath: string) => Promise<void> | void;
}

interface TreeEntry {
  mode: string;
  type: string;
  oid: string;
  /** the path's bytes, as git stores them */
  path: Buffer;
}

/** How many blob bytes one `cat-file --batch` may answer (a larger blob is read alone). */
const BATCH_BYTES = 32 * 1024 * 1024;
/** Paths a mismatch lists at most. */
const MISMATCH_PATHS = 20;

const fail = (code: RestoreReasonCode, message: string = RESTORE_REASONS[code], details?: Record<string, unknown>): never => {
  throw new RestoreError(code, message, details);
};

/** The repository's common git dir, from any directory of it. */
async function commonDirOf(repo: string): Promise<string> {
  const cwd = path.resolve(repo);
  const res = await git(['rev-parse', '--git-common-dir'], { cwd, okCodes: [128] }).catch((err: unknown) => {
    if (err instanceof GitSideError) return null;
    throw err;
  });
  if (res === null || res.code !== 0 || res.stdout.trim() === '') return fail('invalid_argument', 'the repository given is not a git repository');
  return fs.realpath(path.resolve(cwd, res.stdout.trim()));
}

/** git on the repository itself (objects, refs, worktree list), never on a worktree's files. */
function repoGit(commonDir: string): RepoGitRun & ((args: string[], okCodes?: number[], input?: string) => Promise<GitResult>) {
  return (args: string[], okCodes?: number[], input?: string) =>
    git(args, { cwd: commonDir, env: { GIT_DIR: commonDir }, ...(okCodes ? { okCodes } : {}), ...(input !== undefined ? { input } : {}) });
}

/** `ls-tree -r -z` of a tree: every blob, symlink and gitlink with its raw path. A missing tree object is a corrupt snapshot. */
async function listTree(commonDir: string, tree: string): Promise<TreeEntry[]> {
  const res = await gitBytes(['ls-tree', '-r', '-z', '--full-tree', tree], { cwd: commonDir, env: { GIT_DIR: commonDir }, okCodes: [128] });
  if (res.code !== 0) return fail('snapshot_corrupt', `a tree of the snapshot cannot be read (missing object): ${tree.slice(0, 12)}`, { tree });
  const out: TreeEntry[] = [];
  let at = 0;
  while (at < res.stdout.length) {
    const end = res.stdout.indexOf(0, at);
    const rec = res.stdout.subarray(at, end === -1 ? res.stdout.length : end);
    at = end === -1 ? res.stdout.length : end + 1;
    const tab = rec.indexOf(9);
    const [mode, type, oid] = rec.subarray(0, tab).toString('latin1').split(' ');
    out.push({ mode: mode!, type: type!, oid: oid!, path: Buffer.from(rec.subarray(tab + 1)) });
  }
  return out;
}

/** A path a snapshot may hold: never `.git`, `.`, `..` or an empty component (a worktree's files never are). */
function safePath(p: Buffer): boolean {
  const parts = p.toString('latin1').split('/');
  return p.length > 0 && parts.every((c) => c !== '' && c !== '.' && c !== '..' && c.toLowerCase() !== '.git');
}

/** Sizes of the blobs, checked present (`cat-file --batch-check`): a missing one is a corrupt snapshot. */
async function blobSizes(run: ReturnType<typeof repoGit>, oids: readonly string[]): Promise<Map<string, number>> {
  const unique = [...new Set(oids)];
  const sizes = new Map<string, number>();
  if (unique.length === 0) return sizes;
  const lines = (await run(['cat-file', '--batch-check'], undefined, `${unique.join('\n')}\n`)).stdout.split('\n').filter(Boolean);
  const missing: string[] = [];
  for (const line of lines) {
    const [oid, type, size] = line.split(' ');
    if (type === 'blob') sizes.set(oid!, Number(size));
    else missing.push(oid!);
  }
  if (missing.length > 0 || sizes.size !== unique.length)
    fail('snapshot_corrupt', `${Math.max(missing.length, unique.length - sizes.size)} file(s) of the snapshot cannot be read (missing objects)`, {
      missing: missing.slice(0, MISMATCH_PATHS),
    });
  return sizes;
}

/** The blobs' bytes, read in batches of at most BATCH_BYTES, each handed to `use` as it is parsed. */
async function readBlobs(commonDir: string, sizes: Map<string, number>, use: (oid: string, data: Buffer) => Promise<void>): Promise<void> {
  const oids = [...sizes.keys()];
  for (let i = 0; i < oids.length;) {
    const batch: string[] = [];
    let bytes = 0;
    while (i < oids.length && (batch.length === 0 || bytes + sizes.get(oids[i]!)! <= BATCH_BYTES)) {
      bytes += sizes.get(oids[i]!)!;
      batch.push(oids[i++]!);
    }
    const res = await gitBytes(['cat-file', '--batch'], {
      cwd: commonDir,
      env: { GIT_DIR: commonDir },
      input: `${batch.join('\n')}\n`,
      maxBuffer: bytes + batch.length * 160 + 1024,
    });
    let at = 0;
    for (const oid of batch) {
      const nl = res.stdout.indexOf(10, at);
      const header = res.stdout.subarray(at, nl).toString('latin1').split(' ');
      if (header[0] !== oid || header[1] !== 'blob') fail('snapshot_corrupt', `blob ${oid.slice(0, 12)} cannot be read`);
      const size = Number(header[2]);
      await use(oid, res.stdout.subarray(nl + 1, nl + 1 + size));
      at = nl + 1 + size + 1;
    }
  }
}

/** What the CLI may name: a snapshot ref, a commit id, or (neither) the recorded worktree path of one. */
export async function resolveSnapshotArg(repo: string, arg: string): Promise<{ snapshotRef: string } | { sha: string } | { path: string }> {
  const run = repoGit(await commonDirOf(repo));
  const exists = async (rev: string) => !rev.startsWith('-') && (await run(['rev-parse', '-q', '--verify', rev], [1, 128])).code === 0;
  if (arg.startsWith('refs/')) return { snapshotRef: arg };
  if (/^[0-9a-f]{4,64}$/.test(arg) && (await exists(`${arg}^{commit}`))) return { sha: arg };
  if (/^[A-Za-z0-9_/.-]+$/.test(arg) && !arg.startsWith('/') && (await exists(`refs/overdeck/wip/${arg}`))) return { snapshotRef: `refs/overdeck/wip/${arg}` };
  return { path: arg };
}

export interface FoundSnapshot {
  ref: string;
  sha: string;
  takenAt: string;
}

/**
 * The latest snapshot whose recorded worktree path is `worktreePath`, among the
 * refs under refs/overdeck/wip/; null when none records it. The path is compared as the snapshot
 * recorded it: physically resolved (a removed worktree's path resolves through its existing parents).
 * Latest by the time it was taken (`Overdeck-Taken`, milliseconds), else by its commit date
 * (seconds, snapshots from before that trailer): a reclaim's snapshot and a removal's a moment later
 * often share their commit second.
 */
export async function findSnapshotForPath(repo: string, worktreePath: string): Promise<FoundSnapshot | null> {
  const run = repoGit(await commonDirOf(repo));
  const wanted = new Set([path.resolve(worktreePath), await normalizePath(worktreePath).catch(() => path.resolve(worktreePath))]);
  const res = await run([
    'for-each-ref',
    '--sort=-committerdate',
    '--format=%(objectname) %(refname)%00%(committerdate:unix)%00%(contents)%00',
    'refs/overdeck/wip/',
  ]);
  let best: FoundSnapshot | null = null;
  let bestAt = -1;
  for (const record of res.stdout.split('\0\n')) {
    const [id, at, contents] = record.split('\0');
    if (id === undefined || at === undefined || contents === undefined) continue;
    const line = /^Overdeck-Worktree: (.*)$/m.exec(contents)?.[1];
    if (line === undefined) continue;
    let recorded: unknown;
    try {
      recorded = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof recorded !== 'string' || !wanted.has(recorded)) continue;
    const [sha, ref] = id.split(' ');
    const taken = Date.parse(/^Overdeck-Taken: (.*)$/m.exec(contents)?.[1] ?? '');
    const atMs = Number.isFinite(taken) ? taken : Number(at) * 1000;
    if (atMs > bestAt) {
      best = { ref: ref!, sha: sha!, takenAt: new Date(atMs).toISOString() };
      bestAt = atMs;
    }
  }
  return best;
}

interface ListedWorktree {
  path: string;
  branch: string | null;
  locked: boolean;
  prunable: boolean;
}

async function listWorktrees(run: ReturnType<typeof repoGit>): Promise<ListedWorktree[]> {
  const out = (await run(['worktree', 'list', '--porcelain'])).stdout;
  return out
    .split('\n\n')
    .filter((b) => b.startsWith('worktree '))
    .map((b) => ({
      path: /^worktree (.+)$/m.exec(b)![1]!,
      branch: /^branch (.+)$/m.exec(b)?.[1] ?? null,
      locked: /^locked\b/m.test(b),
      prunable: /^prunable\b/m.test(b),
    }));
}

const BRANCH_NAME = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*@\{)(?!.*\.lock(\/|$))[A-Za-z0-9._/+-]+(?<![/.])$/;

type HeadPlan =
  | { mode: 'branch'; ref: string; created: boolean }
  | {
      mode: 'detached';
      why: 'detached_when_taken' | 'not_recorded' | 'branch_gone' | 'branch_moved' | 'branch_in_use';
      branch: string | null;
      branchTip: string | null;
    };

/** Which HEAD the restored worktree gets: the branch when it still points at the recorded HEAD and no other worktree has it, else detached (and why). */
async function planHead(
  run: ReturnType<typeof repoGit>,
  d: SnapshotDescription & { head: string },
  o: RestoreOptions,
  others: ListedWorktree[],
): Promise<HeadPlan> {
  let ref: string | null = d.branch?.ref ?? null;
  if (o.branch !== undefined) {
    const name = o.branch.startsWith('refs/heads/') ? o.branch.slice('refs/heads/'.length) : o.branch;
    if (!BRANCH_NAME.test(name)) fail('invalid_argument', 'the branch name is not one git accepts');
    ref = `refs/heads/${name}`;
  }
  if (ref === null) return { mode: 'detached', why: d.format === 0 ? 'not_recorded' : 'detached_when_taken', branch: null, branchTip: null };
  const tipRes = await run(['rev-parse', '-q', '--verify', `${ref}^{commit}`], [1, 128]);
  const tip = tipRes.code === 0 ? tipRes.stdout.trim() : null;
  if (tip === null) {
    // Asked for by name: made where the snapshot was taken. The recorded branch gone: HEAD alone.
    if (o.branch !== undefined) return { mode: 'branch', ref, created: true };
    return { mode: 'detached', why: 'branch_gone', branch: ref, branchTip: null };
  }
  if (tip !== d.head) return { mode: 'detached', why: 'branch_moved', branch: ref, branchTip: tip };
  if (others.some((w) => w.branch === ref)) return { mode: 'detached', why: 'branch_in_use', branch: ref, branchTip: tip };
  return { mode: 'branch', ref, created: false };
}

/**
 * Recreates the worktree of a snapshot at `path` (or the path it recorded) and verifies it byte
 * for byte before answering. Refuses a target that exists and is not an empty directory.
 */
export async function restoreWorktree(o: RestoreOptions): Promise<RestoreOutput> {
  if ((o.snapshotRef === undefined) === (o.sha === undefined)) fail('invalid_argument', 'name the snapshot by its ref or by its commit id, one of them');
  if (o.snapshotRef !== undefined && !o.snapshotRef.startsWith('refs/overdeck/wip/')) fail('invalid_argument', 'a snapshot ref is under refs/overdeck/wip/');
  if (o.sha !== undefined && !/^[0-9a-f]{4,64}$/.test(o.sha)) fail('invalid_argument', 'not a commit id');
  const commonDir = await commonDirOf(o.repo);
  const run = repoGit(commonDir);

  let d: SnapshotDescription;
  try {
    d = await describeSnapshot(run, (o.snapshotRef ?? o.sha)!);
  } catch (err) {
    if (err instanceof SnapshotReadError) return fail(err.code, err.message);
    throw err;
  }
  if (d.head === null) return fail('restore_failed', 'the snapshot was taken on an unborn branch: there is no commit to add a worktree at');
  const head = d.head;
  const withHead = { ...d, head };

  // Everything the restore will need is read first: a corrupt snapshot changes nothing.
  const headOk = await run(['rev-parse', '-q', '--verify', `${head}^{commit}`], [1, 128]);
  if (headOk.code !== 0) fail('snapshot_corrupt', `the snapshot's HEAD ${head.slice(0, 12)} cannot be read (missing object)`);
  const headTree = (await run(['rev-parse', `${head}^{tree}`])).stdout.trim();
  const indexTree = d.index?.tree ?? headTree;
  const files = await listTree(commonDir, d.tree);
  const indexed = await listTree(commonDir, indexTree);
  const ignored = d.ignored.stored ? await listTree(commonDir, d.ignored.tree) : [];
  for (const e of [...files, ...indexed, ...ignored]) if (!safePath(e.path)) fail('snapshot_corrupt', 'the snapshot names a path no worktree file can have');
  const blobs = [...files, ...indexed, ...ignored].filter((e) => e.type === 'blob');
  const sizes = await blobSizes(
    run,
    blobs.map((e) => e.oid),
  );

  const target = path.resolve(o.path ?? d.worktreePath ?? fail('invalid_argument', 'the snapshot records no worktree path: give one'));
  if (o.allowedRoots !== undefined) {
    await assertUnderAllowedRoots(target, o.allowedRoots).catch((err: unknown) => {
      if (err instanceof PathRefusal) fail('path_outside_allowed_roots');
      throw err;
    });
  }
  await assertFreePath(target);

  const listed = await listWorktrees(run);
  const normalised = await normalizePath(target);
  const here = listed.find((w) => w.path === normalised || w.path === target);
  if (here?.locked === true) fail('restore_failed', 'a missing but locked worktree is registered at the path: unlock and prune it first');
  const plan = await planHead(
    run,
    withHead,
    o,
    listed.filter((w) => w !== here),
  );
  const short = (ref: string) => ref.slice('refs/heads/'.length);
  // --force only to replace a registration whose directory is gone (the branch-in-use check was ours, above).
  const force = here === undefined ? [] : ['--force'];
  const addArgs =
    plan.mode === 'detached'
      ? ['worktree', 'add', '--no-checkout', ...force, '--detach', target, head]
      : plan.created
        ? ['worktree', 'add', '--no-checkout', ...force, '-b', short(plan.ref), target, head]
        : ['worktree', 'add', '--no-checkout', ...force, target, short(plan.ref)];
  try {
    await run(addArgs);
  } catch (err) {
    if (err instanceof GitSideError) fail('restore_failed', `git worktree add failed: ${err.message}`, { step: 'worktree_add' });
    throw err;
  }

  // From here the worktree exists: a failure says where it was left.
  const left = { worktreePath: target, left: true };
  let dirs: WorktreeDirs;
  try {
    dirs = await worktreeDirs(target);
    const pinned = pinnedGit(dirs);
    const wrun = (args: string[], env: GitEnvExtras = {}, okCodes?: number[], input?: string) =>
      git(args, { cwd: pinned.cwd, env: { ...pinned.env, ...env }, ...(okCodes ? { okCodes } : {}), ...(input !== undefined ? { input } : {}) });
    await wrun(['read-tree', indexTree]);
    await writeFiles(commonDir, dirs.worktreePath, [...files, ...ignored], sizes);
    await o.beforeVerify?.(dirs.worktreePath);
    await verify(dirs, wrun, { d: withHead, plan, indexTree });
  } catch (err) {
    if (err instanceof RestoreError) throw new RestoreError(err.code, err.message, { ...err.details, ...left });
    if (err instanceof GitSideError) fail('restore_failed', `a git step of the restore failed: ${err.message}`, left);
    // A file that could not be written (no space, permissions, a path the file system refuses).
    const errno = (err as NodeJS.ErrnoException | null)?.code;
    if (typeof errno === 'string') fail('restore_failed', `writing the worktree's files failed (${errno})`, { ...left, step: 'write' });
    throw err;
  }

  const inIndex = new Set(indexed.map((e) => e.path.toString('latin1')));
  return {
    ok: true,
    worktreePath: dirs.worktreePath,
    snapshot: { sha: d.sha, ref: o.snapshotRef ?? null },
    head:
      plan.mode === 'branch'
        ? { mode: 'branch', ref: plan.ref, sha: head, created: plan.created }
        : { mode: 'detached', sha: head, why: plan.why, branch: plan.branch, branchTip: plan.branchTip },
    restored: {
      files: files.length,
      untracked: files.filter((e) => !inIndex.has(e.path.toString('latin1'))).length,
      ignored: ignored.length,
      index: d.index === null ? 'not_recorded' : 'restored',
    },
    verified: true,
    owner: null,
  };
}

/** The target may not exist, or be an empty directory (as `git worktree add` accepts); anything else is refused before anything changes. */
async function assertFreePath(target: string): Promise<void> {
  let st;
  try {
    st = await fs.lstat(target);
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  if (!st.isDirectory() || (await fs.readdir(target)).length > 0) fail('path_exists', undefined, { path: target });
}

/** Every entry written from its blob: regular files with their executable bit, symlinks (last), gitlinks as empty directories (as a checkout leaves them). */
async function writeFiles(commonDir: string, top: string, entries: TreeEntry[], sizes: Map<string, number>): Promise<void> {
  const root = Buffer.from(top);
  const abs = (p: Buffer) => Buffer.concat([root, Buffer.from('/'), p]);
  const parent = (p: Buffer) => {
    const slash = p.lastIndexOf(0x2f);
    return slash === -1 ? null : p.subarray(0, slash);
  };
  const byOid = new Map<string, TreeEntry[]>();
  for (const e of entries) {
    if (e.type === 'commit') {
      await fs.mkdir(abs(e.path), { recursive: true });
      continue;
    }
    if (e.type !== 'blob') continue;
    byOid.set(e.oid, [...(byOid.get(e.oid) ?? []), e]);
  }
  const links: Array<{ at: Buffer; target: Buffer }> = [];
  const wanted = new Map([...byOid.keys()].map((k) => [k, sizes.get(k)!]));
  await readBlobs(commonDir, wanted, async (oid, data) => {
    for (const e of byOid.get(oid) ?? []) {
      const dir = parent(e.path);
      if (dir !== null) await fs.mkdir(abs(dir), { recursive: true });
      if (e.mode === '120000') links.push({ at: abs(e.path), target: Buffer.from(data) });
      // As git checks out: 0666/0777 less the umask; `wx`: nothing is there yet in a new worktree, so nothing is followed.
      else await fs.writeFile(abs(e.path), data, { flag: 'wx', mode: e.mode === '100755' ? 0o777 : 0o666 });
    }
  });
  for (const l of links) await fs.symlink(l.target, l.at);
}

/**
 * The restored worktree taken again as a snapshot takes one, compared with the snapshot: HEAD
 * (and the branch), the index's tree, the files' tree (each blob is the file's bytes hashed
 * without filters, with its mode) and the ignored files. Any difference is `restore_mismatch`.
 */
async function verify(
  dirs: WorktreeDirs,
  wrun: (args: string[], env?: GitEnvExtras, okCodes?: number[], input?: string) => Promise<GitResult>,
  x: { d: SnapshotDescription & { head: string }; plan: HeadPlan; indexTree: string },
): Promise<void> {
  const head = (await wrun(['rev-parse', 'HEAD'])).stdout.trim();
  const sym = await wrun(['symbolic-ref', '-q', 'HEAD'], {}, [1]);
  const branch = sym.code === 0 ? sym.stdout.trim() : null;
  if (head !== x.d.head || branch !== (x.plan.mode === 'branch' ? x.plan.ref : null))
    fail('restore_mismatch', 'HEAD of the restored worktree is not the one planned', { part: 'head', head, branch });

  const index = (await wrun(['write-tree'])).stdout.trim();
  if (index !== x.indexTree) await mismatch(wrun, 'index', x.indexTree, index);

  const token = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const tmp = path.join(dirs.privateDir, `overdeck-verify-${token}.index`);
  const tmpIgnored = path.join(dirs.privateDir, `overdeck-verify-${token}-ignored.index`);
  try {
    await fs.copyFile(path.join(dirs.privateDir, 'index'), tmp);
    const env = { GIT_INDEX_FILE: tmp };
    // No stat data is trusted: every file is hashed again.
    await stageAsOnDisk((args, okCodes, input) => wrun(args, env, okCodes, input), {
      worktreePath: dirs.worktreePath,
      scratchDir: dirs.privateDir,
      indexMtimeSec: null,
    });
    const tree = (await wrun(['write-tree'], env)).stdout.trim();
    if (tree !== x.d.tree) await mismatch(wrun, 'files', x.d.tree, tree);

    const listed = (await wrun(['-c', 'core.quotePath=true', 'ls-files', '--others', '--ignored', '--exclude-standard'], env)).stdout
      .split('\n')
      .filter((l) => l !== '' && !l.endsWith('/'));
    const ienv = { GIT_INDEX_FILE: tmpIgnored };
    await stageOthersAsOnDisk((args, okCodes, input) => wrun(args, ienv, okCodes, input), {
      worktreePath: dirs.worktreePath,
      scratchDir: dirs.privateDir,
      quoted: listed,
      maxBytes: Number.MAX_SAFE_INTEGER,
    });
    const ignoredTree = (await wrun(['write-tree'], ienv)).stdout.trim();
    const emptyTree = (await wrun(['hash-object', '-t', 'tree', '--no-filters', '/dev/null'])).stdout.trim();
    const expected = x.d.ignored.stored ? x.d.ignored.tree : emptyTree;
    if (ignoredTree !== expected) await mismatch(wrun, 'ignored', expected, ignoredTree);
  } finally {
    await Promise.all([tmp, tmpIgnored].flatMap((f) => [fs.rm(f, { force: true }), fs.rm(`${f}.lock`, { force: true })]));
  }
}

/** A mismatch with the paths that differ (at most MISMATCH_PATHS), from comparing the two trees. */
async function mismatch(
  wrun: (args: string[], env?: GitEnvExtras, okCodes?: number[]) => Promise<GitResult>,
  part: 'index' | 'files' | 'ignored',
  expected: string,
  actual: string,
): Promise<never> {
  const diff = await wrun(['diff', '--name-status', '--no-renames', expected, actual], {}, [1, 128]);
  const paths = diff.stdout.split('\n').filter(Boolean).slice(0, MISMATCH_PATHS);
  return fail('restore_mismatch', `the restored ${part} differ from the snapshot (${paths.length === 0 ? 'no path listed' : paths.join(', ')})`, {
    part,
    expected,
    actual,
    paths,
  });
}
