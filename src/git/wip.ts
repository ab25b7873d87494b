import { randomBytes } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { isNotFound } from './atomic';
import { assertDirUnchanged, confineDirs } from './confine';
import { stageAsOnDisk } from './disk-tree';
import { GitSideError } from './errors';
import { git } from './exec';
import type { GitEnvExtras } from './safe-env';
import { pinnedGit, type WorktreeDirs, worktreeDirs } from './repo';

/** Fixed identity: WIP commits are made by the service, and a host without user.email must not fail a reclaim. */
const WIP_IDENTITY = {
  GIT_AUTHOR_NAME: 'od-worktree',
  GIT_AUTHOR_EMAIL: 'od-worktree@localhost',
  GIT_COMMITTER_NAME: 'od-worktree',
  GIT_COMMITTER_EMAIL: 'od-worktree@localhost',
};

const REF_SAFE = /^[A-Za-z0-9_-]{1,128}$/;

export function wipRef(ownershipId: string, seq: number): string {
  if (!REF_SAFE.test(ownershipId)) throw new GitSideError('invalid_argument', 'ownershipId is not ref-safe');
  if (!Number.isSafeInteger(seq) || seq < 0) throw new GitSideError('invalid_argument', 'seq must be a non-negative integer');
  return `refs/overdeck/wip/${ownershipId}/${seq}`;
}

/**
 * An older tenure's late work (src/git/late.ts): what its owner did in the worktree after a newer
 * tenure began, before the host agent wrote the newer projection. One ref per (ownership, epoch).
 */
export function lateRef(ownershipId: string, epoch: number): string {
  if (!REF_SAFE.test(ownershipId)) throw new GitSideError('invalid_argument', 'ownershipId is not ref-safe');
  if (!Number.isSafeInteger(epoch) || epoch < 0) throw new GitSideError('invalid_argument', 'epoch must be a non-negative integer');
  return `refs/overdeck/wip/${ownershipId}/late-e${epoch}`;
}

/** An owner's snapshot (`od-worktree snapshot`): named after its tree, so the same content is one ref. */
export function wipTreeRef(ownershipId: string, tree: string): string {
  if (!REF_SAFE.test(ownershipId)) throw new GitSideError('invalid_argument', 'ownershipId is not ref-safe');
  if (!/^[0-9a-f]{40,64}$/.test(tree)) throw new GitSideError('invalid_argument', 'tree is not an object id');
  return `refs/overdeck/wip/${ownershipId}/tree-${tree}`;
}

export interface WipSnapshot {
  ref: string;
  sha: string;
  tree: string;
  /** false: a ref for this very tree was already there, and it is what is returned */
  created: boolean;
}

/**
 * The same snapshot as preserveWip, named by its tree instead of a seq (wipTreeRef): snapshotting
 * unchanged content again returns the ref made the first time. Null when the worktree matches HEAD.
 */
export async function preserveWipByTree(worktreePath: string, ownershipId: string, opts: PreserveWipOptions = {}): Promise<WipSnapshot | null> {
  if (!REF_SAFE.test(ownershipId)) throw new GitSideError('invalid_argument', 'ownershipId is not ref-safe');
  const dirs = await worktreeDirs(path.resolve(worktreePath));
  if (opts.allowedRoots !== undefined) await confineDirs(dirs, opts.allowedRoots);
  return snapshot(
    dirs,
    (tree) => wipTreeRef(ownershipId, tree),
    `od-worktree: snapshot of ${ownershipId}\n`,
    opts.signal,
    () => opts.heartbeat?.(),
  );
}

export interface PreserveWipOptions {
  /** The worktree and both of its git dirs must resolve under one of these (confine.ts). */
  allowedRoots?: readonly string[];
  /** Aborting kills the running git process; the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Called between steps and every `heartbeatEveryMs` while git runs (hashing a large tree can take minutes). */
  heartbeat?: () => void;
  heartbeatEveryMs?: number;
}

/**
 * Snapshot of a dirty worktree as a commit under refs/overdeck/wip/<ownershipId>/<seq>, built in a
 * private index so the worktree files, the real index and the branch stay exactly as the previous
 * owner left them. Files are stored as they are on disk (disk-tree.ts): no filter, hook or
 * fsmonitor of the repository runs. Returns null when the worktree matches HEAD. Idempotent per (ownership, seq).
 * A worktree that is gone (or whose private git dir is) is `worktree_missing`: nothing to preserve,
 * and nothing a retry could change.
 */
export async function preserveWip(
  worktreePath: string,
  ownershipId: string,
  seq: number,
  opts: PreserveWipOptions = {},
): Promise<{ ref: string; sha: string } | null> {
  const ref = wipRef(ownershipId, seq);
  const dirs = await worktreeDirs(path.resolve(worktreePath));
  if (opts.allowedRoots !== undefined) await confineDirs(dirs, opts.allowedRoots);
  const beat = (): void => opts.heartbeat?.();
  const timer = opts.heartbeat === undefined ? null : setInterval(beat, opts.heartbeatEveryMs ?? 2_000);
  try {
    const made = await snapshot(dirs, ref, `od-worktree: wip of ${ownershipId} at seq ${seq}\n`, opts.signal, beat);
    return made === null ? null : { ref: made.ref, sha: made.sha };
  } catch (err) {
    // git fails in a directory deleted under it; say what happened rather than "retry".
    if (err instanceof GitSideError && err.code === 'git_failed' && !(existsSync(dirs.worktreePath) && existsSync(dirs.privateDir))) {
      throw new GitSideError('worktree_missing', 'the worktree disappeared while its work was being preserved');
    }
    throw err;
  } finally {
    if (timer !== null) clearInterval(timer);
  }
}

export interface LateSnapshotOptions extends PreserveWipOptions {
  /** Commits the snapshot keeps reachable besides HEAD (late commits a reset took off the branch): its further parents. */
  alsoKeep?: readonly string[];
  /** Make it even when the files match HEAD (default): the ref then keeps the history alone. */
  evenIfClean?: boolean;
}

/**
 * The snapshot of preserveWip under a fixed ref, made (unless told otherwise) even when the
 * worktree matches HEAD: its first parent is HEAD at that moment (and `alsoKeep` the further
 * ones), so the ref keeps the commits of that history as well as the files on disk. Idempotent per
 * ref: an existing ref is returned as it is.
 */
export async function preserveLateSnapshot(worktreePath: string, ref: string, message: string, opts: LateSnapshotOptions = {}): Promise<WipSnapshot | null> {
  if (!ref.startsWith('refs/overdeck/wip/')) throw new GitSideError('invalid_argument', 'not a wip ref');
  const dirs = await worktreeDirs(path.resolve(worktreePath));
  if (opts.allowedRoots !== undefined) await confineDirs(dirs, opts.allowedRoots);
  const beat = (): void => opts.heartbeat?.();
  const timer = opts.heartbeat === undefined ? null : setInterval(beat, opts.heartbeatEveryMs ?? 2_000);
  try {
    return await snapshot(dirs, ref, message, opts.signal, beat, { evenIfClean: opts.evenIfClean ?? true, alsoKeep: opts.alsoKeep ?? [] });
  } finally {
    if (timer !== null) clearInterval(timer);
  }
}

/** `refOf`: a fixed ref (reclaim: checked first, so a retry returns the first snapshot), or one named after the tree. */
async function snapshot(
  dirs: WorktreeDirs,
  refOf: string | ((tree: string) => string),
  message: string,
  signal: AbortSignal | undefined,
  beat: () => void,
  shape: { evenIfClean?: boolean; alsoKeep?: readonly string[] } = {},
): Promise<WipSnapshot | null> {
  const pinned = pinnedGit(dirs);
  /** Every git call: on the verified dirs, killed on cancellation, with a heartbeat before it. */
  const run = (args: string[], env: GitEnvExtras = {}, okCodes?: number[], input?: string) => {
    beat();
    signal?.throwIfAborted();
    return git(args, {
      cwd: pinned.cwd,
      env: { ...pinned.env, ...env },
      ...(okCodes ? { okCodes } : {}),
      ...(signal ? { signal } : {}),
      ...(input !== undefined ? { input } : {}),
    });
  };
  const revParse = async (rev: string, env: GitEnvExtras = {}): Promise<string | null> => {
    const res = await run(['rev-parse', '-q', '--verify', `${rev}^{object}`], env, [1, 128]);
    return res.code === 0 ? res.stdout.trim() : null;
  };

  if (typeof refOf === 'string') {
    const existing = await revParse(refOf);
    if (existing !== null) return { ref: refOf, sha: existing, tree: (await revParse(`${refOf}^{tree}`)) ?? '', created: false };
  }

  const head = await revParse('HEAD');
  const tmpIndex = path.join(dirs.privateDir, `overdeck-wip-${process.pid}-${randomBytes(6).toString('hex')}.index`);
  const env = { GIT_INDEX_FILE: tmpIndex };
  try {
    // Start from a copy of the real index rather than `read-tree HEAD`: it keeps stat data (so
    // unchanged files are not hashed again) and skip-worktree bits (so a sparse checkout's absent
    // files are not recorded as deletions). Its mtime, taken first, tells racily clean entries.
    await assertDirUnchanged(dirs.privateDir);
    const realIndex = path.join(dirs.privateDir, 'index');
    const indexMtimeSec = await fs.stat(realIndex).then(
      (st) => Math.floor(st.mtimeMs / 1000),
      () => null,
    );
    const copied = await copyIfExists(realIndex, tmpIndex);
    if (!copied && head !== null) await run(['read-tree', 'HEAD'], env);
    await stageAsOnDisk((args, okCodes, input) => run(args, env, okCodes, input), {
      worktreePath: dirs.worktreePath,
      scratchDir: dirs.privateDir,
      indexMtimeSec: copied ? indexMtimeSec : null,
      ...(signal ? { signal } : {}),
    });
    const tree = (await run(['write-tree'], env)).stdout.trim();
    // Unborn branch: compare against the empty tree of this repository's hash algorithm.
    const headTree = head === null ? (await run(['hash-object', '-t', 'tree', '--no-filters', '/dev/null'])).stdout.trim() : await revParse('HEAD^{tree}');
    // Late work keeps its history even with nothing uncommitted; only an empty worktree with no history has nothing.
    if (tree === headTree && (shape.evenIfClean !== true || (head === null && (shape.alsoKeep ?? []).length === 0))) return null;
    const ref = typeof refOf === 'string' ? refOf : refOf(tree);
    if (typeof refOf !== 'string') {
      const existing = await revParse(ref);
      if (existing !== null) return { ref, sha: existing, tree, created: false };
    }

    const parents = [...new Set([...(head === null ? [] : [head]), ...(shape.alsoKeep ?? [])])];
    const args = ['commit-tree', '--no-gpg-sign', tree, ...parents.flatMap((p) => ['-p', p]), '-m', message];
    const sha = (await run(args, WIP_IDENTITY)).stdout.trim();
    // Empty old value: create only. A concurrent preserve of the same seq wins the race and we return its commit.
    const created = await run(['update-ref', '-m', 'od-worktree: preserve wip', ref, sha, ''], WIP_IDENTITY, [128]);
    if (created.code !== 0) {
      const winner = await revParse(ref);
      if (winner === null) throw new GitSideError('git_failed', 'could not create the wip ref');
      return { ref, sha: winner, tree, created: false };
    }
    return { ref, sha, tree, created: true };
  } finally {
    // A killed `git update-index` may leave its lock beside the private index.
    await Promise.all([fs.rm(tmpIndex, { force: true }), fs.rm(`${tmpIndex}.lock`, { force: true })]);
  }
}

async function copyIfExists(from: string, to: string): Promise<boolean> {
  try {
    await fs.copyFile(from, to);
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}
