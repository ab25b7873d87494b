import { createHash, randomBytes } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { assertDirUnchanged, confineDirs } from './confine';
import { type SnapshotDescription, SnapshotDescriptionSchema } from '../contract/restore';
import { copyRealIndex, stageAsOnDisk, stageOthersAsOnDisk } from './disk-tree';
import { GitSideError } from './errors';
import { git, type GitResult } from './exec';
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

/**
 * An owner's snapshot (`od-worktree snapshot`): named after its tree, so the same content is one ref.
 * `variant` tells apart snapshots of the same files with another index, HEAD or ignored files
 * (the first of a tree gets the plain name).
 */
export function wipTreeRef(ownershipId: string, tree: string, variant?: string): string {
  if (!REF_SAFE.test(ownershipId)) throw new GitSideError('invalid_argument', 'ownershipId is not ref-safe');
  if (!/^[0-9a-f]{40,64}$/.test(tree)) throw new GitSideError('invalid_argument', 'tree is not an object id');
  if (variant !== undefined && !/^[0-9a-f]{16}$/.test(variant)) throw new GitSideError('invalid_argument', 'variant is not 16 hex digits');
  return `refs/overdeck/wip/${ownershipId}/tree-${tree}${variant === undefined ? '' : `-${variant}`}`;
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
 * unchanged content again returns the ref made the first time. Null when the worktree and its index match HEAD.
 */
export async function preserveWipByTree(worktreePath: string, ownershipId: string, opts: PreserveWipOptions = {}): Promise<WipSnapshot | null> {
  if (!REF_SAFE.test(ownershipId)) throw new GitSideError('invalid_argument', 'ownershipId is not ref-safe');
  const dirs = await worktreeDirs(path.resolve(worktreePath));
  if (opts.allowedRoots !== undefined) await confineDirs(dirs, opts.allowedRoots);
  return snapshot(
    dirs,
    (tree, variant) => wipTreeRef(ownershipId, tree, variant),
    `od-worktree: snapshot of ${ownershipId}\n`,
    opts.signal,
    () => opts.heartbeat?.(),
    { ignored: opts.ignored },
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
  /** Also store ignored files (opt-in), all of them when together at most `maxBytes`, else none (said in the snapshot). */
  ignored?: { maxBytes: number } | undefined;
}

/**
 * Snapshot of a dirty worktree as a commit under refs/overdeck/wip/<ownershipId>/<seq>, built in a
 * private index so the worktree files, the real index and the branch stay exactly as the previous
 * owner left them. Files are stored as they are on disk (disk-tree.ts): no filter, hook or
 * fsmonitor of the repository runs. It also records the index, HEAD, the branch and the worktree's path
 * (docs/restore.md#what-a-snapshot-holds). Returns null when the worktree and its index match HEAD. Idempotent per (ownership, seq).
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
    const made = await snapshot(dirs, ref, `od-worktree: wip of ${ownershipId} at seq ${seq}\n`, opts.signal, beat, { ignored: opts.ignored });
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
    return await snapshot(dirs, ref, message, opts.signal, beat, {
      evenIfClean: opts.evenIfClean ?? true,
      alsoKeep: opts.alsoKeep ?? [],
      ignored: opts.ignored,
    });
  } finally {
    if (timer !== null) clearInterval(timer);
  }
}

/**
 * The trailers of a snapshot commit's message: what a restore needs besides the files
 * (docs/restore.md#what-a-snapshot-holds). One line each, read back by readWipSnapshot.
 */
const TRAILER = {
  format: 'Overdeck-Snapshot',
  head: 'Overdeck-Head',
  branch: 'Overdeck-Branch',
  index: 'Overdeck-Index',
  ignored: 'Overdeck-Ignored',
  worktree: 'Overdeck-Worktree',
  /** when it was taken, to the millisecond: commit dates count seconds, and two snapshots of one worktree can share one */
  taken: 'Overdeck-Taken',
} as const;

/** What one snapshot records besides its tree (the files): the state it was taken in. */
interface TakenState {
  head: string | null;
  branch: string | null;
  indexTree: string | null;
  ignored: { tree: string; bytes: number; count: number } | { overBound: { bytes: number; bound: number } } | null;
}

/**
 * `refOf`: a fixed ref (reclaim: checked first, so a retry returns the first snapshot), or one
 * named after the tree (and, for the same files in another state, a variant of that name).
 *
 * The commit's tree is the worktree as on disk (tracked and untracked files, disk-tree.ts); its
 * first parent is HEAD (when born), then `alsoKeep`; the staged state is the tree of a further
 * parent, the index commit (only when it is neither HEAD's tree nor the files' tree: then the
 * trailer alone names it), and opted-in ignored files the tree of one more. The trailers say which
 * parent is which: positions after the first are not a contract.
 */
async function snapshot(
  dirs: WorktreeDirs,
  refOf: string | ((tree: string, variant?: string) => string),
  message: string,
  signal: AbortSignal | undefined,
  beat: () => void,
  shape: { evenIfClean?: boolean; alsoKeep?: readonly string[]; ignored?: { maxBytes: number } | undefined } = {},
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
  const symbolic = await run(['symbolic-ref', '-q', 'HEAD'], {}, [1, 128]);
  const branch = symbolic.code === 0 ? symbolic.stdout.trim() : null;
  const token = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const tmpIndex = path.join(dirs.privateDir, `overdeck-wip-${token}.index`);
  const ignoredIndex = path.join(dirs.privateDir, `overdeck-wip-${token}-ignored.index`);
  const env = { GIT_INDEX_FILE: tmpIndex };
  try {
    // Start from a copy of the real index rather than `read-tree HEAD`: it keeps stat data (so
    // unchanged files are not hashed again) and skip-worktree bits (so a sparse checkout's absent
    // files are not recorded as deletions). Its mtime, taken first, tells racily clean entries.
    await assertDirUnchanged(dirs.privateDir);
    const { copied, indexMtimeSec } = await copyRealIndex(dirs.privateDir, tmpIndex);
    if (!copied && head !== null) await run(['read-tree', 'HEAD'], env);
    // The staged state, before the copy is brought to the disk: the index as it is (an unmerged one has no tree).
    const unmerged = (await run(['ls-files', '--unmerged'], env)).stdout.trim() !== '';
    const indexTree = unmerged ? null : (await run(['write-tree'], env)).stdout.trim();
    await stageAsOnDisk((args, okCodes, input) => run(args, env, okCodes, input), {
      worktreePath: dirs.worktreePath,
      scratchDir: dirs.privateDir,
      indexMtimeSec,
      ...(signal ? { signal } : {}),
    });
    const tree = (await run(['write-tree'], env)).stdout.trim();
    const ignored = shape.ignored === undefined ? null : await stageIgnored(run, dirs, env, ignoredIndex, shape.ignored.maxBytes, signal);
    // Unborn branch: compare against the empty tree of this repository's hash algorithm.
    const headTree = head === null ? (await run(['hash-object', '-t', 'tree', '--no-filters', '/dev/null'])).stdout.trim() : await revParse('HEAD^{tree}');
    const dirty = tree !== headTree || indexTree !== headTree || (ignored !== null && 'tree' in ignored && ignored.count > 0);
    // Late work keeps its history even with nothing uncommitted; only an empty worktree with no history has nothing.
    if (!dirty && (shape.evenIfClean !== true || (head === null && (shape.alsoKeep ?? []).length === 0))) return null;
    const state: TakenState = { head, branch, indexTree, ignored };
    let ref: string;
    if (typeof refOf === 'string') ref = refOf;
    else {
      // The same files in another state (index, HEAD, ignored files) are another snapshot: a variant of the tree's name.
      ref = refOf(tree);
      const existing = await revParse(ref);
      if (existing !== null) {
        if (sameState(await describeSnapshot((args, ok) => run(args, {}, ok), existing).catch(() => null), state))
          return { ref, sha: existing, tree, created: false };
        ref = refOf(tree, stateKey(state));
        const variant = await revParse(ref);
        if (variant !== null) return { ref, sha: variant, tree, created: false };
      }
    }

    const commitOf = async (t: string, parents: string[], msg: string) =>
      (await run(['commit-tree', '--no-gpg-sign', t, ...parents.flatMap((p) => ['-p', p]), '-m', msg], WIP_IDENTITY)).stdout.trim();
    // HEAD's tree and the files' tree are reachable from the snapshot already; any other index needs a commit of its own.
    const indexCommit =
      indexTree !== null && indexTree !== tree && indexTree !== headTree
        ? await commitOf(indexTree, head === null ? [] : [head], 'od-worktree: index\n')
        : null;
    const ignoredCommit = ignored !== null && 'tree' in ignored && ignored.count > 0 ? await commitOf(ignored.tree, [], 'od-worktree: ignored files\n') : null;
    const parents = [
      ...new Set([
        ...(head === null ? [] : [head]),
        ...(shape.alsoKeep ?? []),
        ...(indexCommit === null ? [] : [indexCommit]),
        ...(ignoredCommit === null ? [] : [ignoredCommit]),
      ]),
    ];
    const trailers = [
      `${TRAILER.format}: 1`,
      `${TRAILER.head}: ${head ?? 'unborn'}`,
      `${TRAILER.branch}: ${branch === null ? 'detached' : `${branch} ${head ?? 'unborn'}`}`,
      `${TRAILER.index}: ${indexTree === null ? 'unmerged' : `${indexTree}${indexCommit === null ? '' : ` ${indexCommit}`}`}`,
      `${TRAILER.ignored}: ${
        ignored === null
          ? 'not-requested'
          : 'overBound' in ignored
            ? `over-bound ${ignored.overBound.bytes} ${ignored.overBound.bound}`
            : `${ignored.tree} ${ignoredCommit ?? '-'} ${ignored.bytes}`
      }`,
      // JSON: one line whatever the path holds.
      `${TRAILER.worktree}: ${JSON.stringify(dirs.worktreePath)}`,
      `${TRAILER.taken}: ${new Date().toISOString()}`,
    ];
    const full = `${message.endsWith('\n') ? message : `${message}\n`}\n${trailers.join('\n')}\n`;
    const sha = await commitOf(tree, parents, full);
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
    await Promise.all([tmpIndex, ignoredIndex].flatMap((f) => [fs.rm(f, { force: true }), fs.rm(`${f}.lock`, { force: true })]));
  }
}

/** The ignored files (not in `env`'s index, which holds everything else by now), staged into a private index of their own. */
async function stageIgnored(
  run: (args: string[], env?: GitEnvExtras, okCodes?: number[], input?: string) => Promise<GitResult>,
  dirs: WorktreeDirs,
  env: GitEnvExtras,
  ignoredIndex: string,
  maxBytes: number,
  signal: AbortSignal | undefined,
): Promise<TakenState['ignored']> {
  const listed = (await run(['-c', 'core.quotePath=true', 'ls-files', '--others', '--ignored', '--exclude-standard'], env)).stdout
    .split('\n')
    // A directory (a nested repository) is not a file to store.
    .filter((l) => l !== '' && !l.endsWith('/'));
  const ienv = { GIT_INDEX_FILE: ignoredIndex };
  const staged = await stageOthersAsOnDisk((args, okCodes, input) => run(args, ienv, okCodes, input), {
    worktreePath: dirs.worktreePath,
    scratchDir: dirs.privateDir,
    quoted: listed,
    maxBytes,
    ...(signal ? { signal } : {}),
  });
  if (!staged.staged) return { overBound: { bytes: staged.bytes, bound: maxBytes } };
  return { tree: (await run(['write-tree'], ienv)).stdout.trim(), bytes: staged.bytes, count: staged.count };
}

function ignoredKey(i: TakenState['ignored']): string {
  if (i === null) return 'not-requested';
  return 'overBound' in i ? `over-bound ${i.overBound.bytes}` : i.tree;
}

/** The state part of a snapshot's name (wipTreeRef's variant): HEAD, branch, index and ignored files. */
function stateKey(s: TakenState): string {
  return createHash('sha256')
    .update(`${s.head ?? 'unborn'}\n${s.branch ?? 'detached'}\n${s.indexTree ?? 'unmerged'}\n${ignoredKey(s.ignored)}\n`)
    .digest('hex')
    .slice(0, 16);
}

function sameState(d: SnapshotDescription | null, s: TakenState): boolean {
  if (d === null || d.format !== 1) return false;
  const ignored = d.ignored.stored ? d.ignored.tree : d.ignored.reason === 'over_bound' ? `over-bound ${d.ignored.bytes}` : 'not-requested';
  return d.head === s.head && (d.branch?.ref ?? null) === s.branch && (d.index?.tree ?? null) === s.indexTree && ignored === ignoredKey(s.ignored);
}

/** How readWipSnapshot runs git: in the repository (any of its worktrees or its git dir). */
export type RepoGitRun = (args: string[], okCodes?: number[]) => Promise<GitResult>;

/** A snapshot that cannot be read: no such commit, or one whose trailers do not parse. */
export class SnapshotReadError extends Error {
  constructor(
    readonly code: 'snapshot_not_found' | 'snapshot_corrupt',
    message: string,
  ) {
    super(message);
    this.name = 'SnapshotReadError';
  }
}

const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * A snapshot commit read back into what it records (src/contract/restore.ts). A commit without
 * the trailers (taken before they existed) reads as format 0: its files, and HEAD as its first
 * parent. Reads the commit object only; restore.ts checks that every object it names is there.
 */
export async function readWipSnapshot(repo: string, rev: string): Promise<SnapshotDescription> {
  const cwd = path.resolve(repo);
  return describeSnapshot((args, okCodes) => git(args, { cwd, ...(okCodes ? { okCodes } : {}) }), rev);
}

export async function describeSnapshot(run: RepoGitRun, rev: string): Promise<SnapshotDescription> {
  if (rev.startsWith('-')) throw new SnapshotReadError('snapshot_not_found', 'not a commit');
  const resolved = await run(['rev-parse', '-q', '--verify', `${rev}^{commit}`], [1, 128]);
  if (resolved.code !== 0) {
    // A ref whose commit object is gone is a broken snapshot, not a missing one.
    const bare = await run(['rev-parse', '-q', '--verify', rev], [1, 128]);
    if (bare.code === 0)
      throw new SnapshotReadError('snapshot_corrupt', `the snapshot's commit ${bare.stdout.trim().slice(0, 12)} cannot be read (missing object?)`);
    throw new SnapshotReadError('snapshot_not_found', 'no such commit');
  }
  const sha = resolved.stdout.trim();
  const raw = (await run(['cat-file', 'commit', sha])).stdout;
  const split = raw.indexOf('\n\n');
  const headers = (split === -1 ? raw : raw.slice(0, split)).split('\n');
  const body = split === -1 ? '' : raw.slice(split + 2);
  const tree = headers.find((h) => h.startsWith('tree '))?.slice(5) ?? '';
  const parents = headers.filter((h) => h.startsWith('parent ')).map((h) => h.slice(7));
  const committer = /^committer .* (\d+) [+-]\d{4}$/.exec(headers.find((h) => h.startsWith('committer ')) ?? '');
  const takenAt = new Date(Number(committer?.[1] ?? 0) * 1000).toISOString();
  const trailers = new Map<string, string>();
  for (const line of body.split('\n')) {
    const m = /^(Overdeck-[A-Za-z-]+): (.*)$/.exec(line);
    if (m) trailers.set(m[1]!, m[2]!);
  }
  const corrupt = (what: string) => new SnapshotReadError('snapshot_corrupt', `the snapshot's ${what} trailer does not parse`);
  let d: SnapshotDescription;
  if (!trailers.has(TRAILER.format)) {
    d = {
      format: 0,
      sha,
      tree,
      head: parents[0] ?? null,
      branch: null,
      index: null,
      indexUnmerged: false,
      ignored: { stored: false, reason: 'not_requested' },
      worktreePath: null,
      alsoKeep: parents.slice(1),
      takenAt,
    };
  } else {
    if (trailers.get(TRAILER.format) !== '1') throw corrupt(TRAILER.format);
    const headT = trailers.get(TRAILER.head) ?? '';
    const head = headT === 'unborn' ? null : OID.test(headT) ? headT : null;
    if (head === null && headT !== 'unborn') throw corrupt(TRAILER.head);
    const branchT = (trailers.get(TRAILER.branch) ?? '').split(' ');
    if (branchT[0] !== 'detached' && (branchT.length !== 2 || !branchT[0]!.startsWith('refs/'))) throw corrupt(TRAILER.branch);
    const branch = branchT[0] === 'detached' ? null : { ref: branchT[0]!, tip: branchT[1] === 'unborn' ? null : branchT[1]! };
    const indexT = (trailers.get(TRAILER.index) ?? '').split(' ');
    if (indexT[0] !== 'unmerged' && !(OID.test(indexT[0] ?? '') && (indexT.length === 1 || (indexT.length === 2 && OID.test(indexT[1]!)))))
      throw corrupt(TRAILER.index);
    const index = indexT[0] === 'unmerged' ? null : { tree: indexT[0]!, commit: indexT[1] ?? null };
    const ignT = (trailers.get(TRAILER.ignored) ?? '').split(' ');
    let ignored: SnapshotDescription['ignored'];
    if (ignT[0] === 'not-requested') ignored = { stored: false, reason: 'not_requested' };
    else if (ignT[0] === 'over-bound' && ignT.length === 3) ignored = { stored: false, reason: 'over_bound', bytes: Number(ignT[1]), bound: Number(ignT[2]) };
    else if (ignT.length === 3 && OID.test(ignT[0]!))
      ignored = { stored: true, tree: ignT[0]!, commit: ignT[1] === '-' ? null : ignT[1]!, bytes: Number(ignT[2]) };
    else throw corrupt(TRAILER.ignored);
    let worktreePath: unknown;
    try {
      worktreePath = JSON.parse(trailers.get(TRAILER.worktree) ?? 'null');
    } catch {
      throw corrupt(TRAILER.worktree);
    }
    if (typeof worktreePath !== 'string') throw corrupt(TRAILER.worktree);
    const named = new Set([head, index?.commit ?? null, ignored.stored ? ignored.commit : null].filter((x): x is string => x !== null));
    // What the trailers name as parents must be parents: else the objects they need are not kept by the ref.
    for (const p of named) if (!parents.includes(p)) throw corrupt('parents');
    d = {
      format: 1,
      sha,
      tree,
      head,
      branch,
      index,
      indexUnmerged: index === null,
      ignored,
      worktreePath,
      alsoKeep: parents.filter((p) => !named.has(p)),
      takenAt,
    };
  }
  const parsed = SnapshotDescriptionSchema.safeParse(d);
  if (!parsed.success) throw new SnapshotReadError('snapshot_corrupt', 'the snapshot does not read as one');
  return parsed.data;
}

/** What a snapshot holds beyond HEAD: how many paths it changes (added, modified, deleted) and the bytes of their new content. */
export interface WipSize {
  files: number;
  bytes: number;
}

/**
 * The size of the snapshot commit `sha` against its first parent (HEAD when it was taken; the
 * empty tree on an unborn branch): what `who` and `history` show beside the latest WIP. Two git
 * calls, on the service's git; null when git cannot say (never a reason to fail a snapshot).
 */
export async function wipSize(worktreePath: string, sha: string): Promise<WipSize | null> {
  if (!/^[0-9a-f]{40,64}$/.test(sha)) return null;
  try {
    const dirs = await worktreeDirs(path.resolve(worktreePath));
    const pinned = pinnedGit(dirs);
    const opts = { cwd: pinned.cwd, env: pinned.env };
    const parent = await git(['rev-parse', '-q', '--verify', `${sha}^`], { ...opts, okCodes: [1, 128] });
    const base = parent.code === 0 ? parent.stdout.trim() : (await git(['hash-object', '-t', 'tree', '--no-filters', '/dev/null'], opts)).stdout.trim();
    // Two commits (the service's git compares no index or worktree files), full object names.
    const raw = await git(['diff', '--raw', '--no-abbrev', '--no-renames', '-z', base, sha], opts);
    // Records: ":<src mode> <dst mode> <src oid> <dst oid> <status>\0<path>\0"
    const parts = raw.stdout.split('\0');
    const blobs: string[] = [];
    let files = 0;
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const meta = parts[i]!.split(' ');
      if (meta.length < 5) continue;
      files++;
      const dst = meta[3]!;
      if (!/^0+$/.test(dst) && meta[1] !== '160000') blobs.push(dst);
    }
    if (blobs.length === 0) return { files, bytes: 0 };
    const sizes = await git(['cat-file', '--batch-check=%(objectsize)'], { ...opts, input: `${blobs.join('\n')}\n` });
    const bytes = sizes.stdout.split('\n').reduce((n, l) => n + (/^\d+$/.test(l) ? Number(l) : 0), 0);
    return { files, bytes };
  } catch {
    return null;
  }
}
