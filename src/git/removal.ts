import { randomBytes } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { assertDirUnchanged, confineDirs } from './confine';
import { copyRealIndex, stageAsOnDisk, unquoteC } from './disk-tree';
import { GitSideError } from './errors';
import { git, type GitResult } from './exec';
import { unlockWorktree } from './lock';
import { pinnedGit, type WorktreeDirs, worktreeDirs } from './repo';
import { RepoGit } from './repo-git';
import type { GitEnvExtras } from './safe-env';
import type { RemovalResult } from '../contract/removal';
import { preserveWipByTree } from './wip';
import { readProjection } from './projection';
import {
  type AccountedCommit,
  decideRemoval,
  type OwnershipFact,
  type RemovalDecision,
  type RemovalFacts,
  type RemovalReceipt,
  type SnapshotFact,
} from '../domain/removal';

/**
 * Lossless removal of one worktree on its host (docs/cleanup.md): what its branch would lose
 * (analyzeBranch), what is uncommitted or untracked (worktreeChanges), the rule's verdict
 * (src/domain/removal.ts), and only then the snapshot, the unlock and `git worktree remove`.
 * Every git call is the service's (exec.ts, safe-env.ts): no hook, filter, fsmonitor or driver of
 * the repository runs, files are hashed as they are on disk (disk-tree.ts), and the removal itself
 * is `git worktree remove --force`, which skips git's own `status` (a filter could run there): the
 * snapshot has already kept what that check guards.
 */

/** Branch names whose tips count as landed in every repository (status.ts looks for the same base). */
export const DEFAULT_LANDED_BRANCHES = ['main', 'master', 'trunk'] as const;

/** At most this many unaccounted commits are examined one by one; more is refused as it is (`unlandedTruncated`). */
export const MAX_EXAMINED = 2000;
/** Squash search: at most this many combined diffs per landed branch. */
const MAX_SQUASH_DIFFS = 100;
/** Landed commits since the merge base whose patch ids are compared, per landed branch. */
const MAX_LANDED_COMMITS = 2000;

const SHA = /^[0-9a-f]{40,64}$/;

export interface ReceiptRef {
  sourceHead: string;
  landedHead: string;
  landedBranch: string;
}

export interface LandedSources {
  /** more branch names whose tips count as landed (a receipt's landedBranch, `--target`) */
  branches?: readonly string[];
  /** the ownership's landing receipts (the service's record): their heads count as landed */
  receipts?: readonly ReceiptRef[];
}

export interface BranchAnalysis {
  branch: string | null;
  head: string | null;
  /** the refs whose history counts as landed, as resolved */
  landedTips: { ref: string; sha: string }[];
  headLandedOn: string | null;
  accounted: AccountedCommit[];
  unlanded: string[];
  unlandedTruncated: boolean;
}

/** A git reader on one repository, through the service's git. */
function reader(cwd: string) {
  const g = new RepoGit(cwd);
  const out = async (args: string[], input?: string): Promise<GitResult> => git(args, { cwd, ...(input !== undefined ? { input } : {}) });
  return { g, out };
}

/** `rev-list` of `head` minus everything reachable from `not` (given on stdin: no argv limit), newest first, at most `max`. */
async function commitsNotIn(cwd: string, head: string, not: readonly string[], max: number, extra: string[] = []): Promise<string[]> {
  const input = [...new Set(not)].map((s) => `^${s}`).join('\n');
  const r = await git(['rev-list', '--topo-order', `--max-count=${max}`, ...extra, head, '--stdin'], { cwd, input: input === '' ? '' : `${input}\n` });
  return r.stdout.split('\n').filter((s) => SHA.test(s));
}

async function refsMatching(cwd: string, patterns: readonly string[]): Promise<{ ref: string; sha: string }[]> {
  if (patterns.length === 0) return [];
  const r = await git(['for-each-ref', '--format=%(objectname) %(refname)', ...patterns], { cwd });
  return r.stdout
    .split('\n')
    .map((l) => l.split(' '))
    .filter((p): p is [string, string] => p.length === 2 && SHA.test(p[0]!))
    .map(([sha, ref]) => ({ ref, sha }));
}

/** The full names of branch-like refs that count as landed: local and remote-tracking, the worktree's own branch never. */
function landedPatterns(names: readonly string[]): string[] {
  return [...new Set(names)].flatMap((n) => [`refs/heads/${n}`, `refs/remotes/*/${n}`]);
}

/**
 * The commits of the worktree's branch that nothing accounts for. In order: reachable from a
 * landed branch (`ancestry`: the head's case says so once, in headLandedOn), from a landing
 * receipt's heads (`receipt`), from a ref under refs/overdeck/ (`preserved`: a WIP snapshot keeps
 * its HEAD's history); then, of what is left, a commit whose `patch-id --stable` equals a commit
 * landed since the merge base (`patch_id`: rebase, cherry-pick), a run of commits whose combined
 * diff equals one landed commit (`squash`), and a merge that changed nothing of its own
 * (`clean_merge`: its content is its parents'). What remains is what removal could lose.
 */
export async function analyzeBranch(worktreePath: string, sources: LandedSources = {}): Promise<BranchAnalysis> {
  const cwd = path.resolve(worktreePath);
  const { g, out } = reader(cwd);
  const head = await g.resolve('HEAD');
  const sym = await git(['symbolic-ref', '-q', '--short', 'HEAD'], { cwd, okCodes: [1, 128] });
  const branch = sym.code === 0 && sym.stdout.trim() !== '' ? sym.stdout.trim() : null;
  const empty: BranchAnalysis = { branch, head, landedTips: [], headLandedOn: null, accounted: [], unlanded: [], unlandedTruncated: false };
  if (head === null) return empty; // an unborn branch has no commit to lose

  const receipts = sources.receipts ?? [];
  const names = [...DEFAULT_LANDED_BRANCHES, ...(sources.branches ?? []), ...receipts.map((r) => r.landedBranch)];
  const ownRef = branch === null ? null : `refs/heads/${branch}`;
  const landedTips = (await refsMatching(cwd, landedPatterns(names))).filter((t) => t.ref !== ownRef);
  const receiptShas: { sha: string; via: string }[] = [];
  for (const r of receipts) {
    for (const s of [r.landedHead, r.sourceHead]) {
      const sha = SHA.test(s) ? await g.resolve(s) : null;
      if (sha !== null) receiptShas.push({ sha, via: r.landedHead });
    }
  }
  const preserved = await refsMatching(cwd, ['refs/overdeck/']);

  const tips = landedTips.map((t) => t.sha);
  const notLanded = await commitsNotIn(cwd, head, tips, MAX_EXAMINED + 1);
  if (notLanded.length === 0) {
    let on: string | null = null;
    for (const t of landedTips) {
      if (await g.isAncestor(head, t.sha)) {
        on = t.ref;
        break;
      }
    }
    return { ...empty, landedTips, headLandedOn: on ?? landedTips[0]?.ref ?? null };
  }
  const accounted: AccountedCommit[] = [];
  const notReceipted = await commitsNotIn(cwd, head, [...tips, ...receiptShas.map((r) => r.sha)], MAX_EXAMINED + 1);
  const notReceiptedSet = new Set(notReceipted);
  for (const c of notLanded) {
    if (notReceiptedSet.has(c)) continue;
    let via = receiptShas[0]?.via ?? 'receipt';
    for (const r of receiptShas) {
      if (await g.isAncestor(c, r.sha)) {
        via = r.via;
        break;
      }
    }
    accounted.push({ sha: c, method: 'receipt', via });
  }
  const remaining = await commitsNotIn(cwd, head, [...tips, ...receiptShas.map((r) => r.sha), ...preserved.map((p) => p.sha)], MAX_EXAMINED + 1);
  const remainingSet = new Set(remaining);
  for (const c of notReceipted) {
    if (remainingSet.has(c)) continue;
    const holder = await out(['for-each-ref', '--count=1', '--format=%(refname)', `--contains=${c}`, 'refs/overdeck/']);
    accounted.push({ sha: c, method: 'preserved', via: holder.stdout.trim() || 'refs/overdeck/' });
  }
  if (remaining.length > MAX_EXAMINED) {
    // Too many to compare one by one: refused as they are, never guessed landed.
    return { branch, head, landedTips, headLandedOn: null, accounted, unlanded: remaining.slice(0, MAX_EXAMINED).reverse(), unlandedTruncated: true };
  }

  const left = new Set(remaining);
  const landedHeads = [...landedTips.map((t) => ({ ref: t.ref, sha: t.sha })), ...receiptShas.map((r) => ({ ref: r.via, sha: r.sha }))];
  await matchPatches(g, out, head, left, landedHeads, accounted);

  // A merge that resolved nothing (`--cc` prints no hunk) holds nothing its parents do not.
  for (const c of [...left]) {
    if ((await g.parents(c)).length < 2) continue;
    const cc = await out(['show', '--no-color', '--format=', '--cc', c]);
    if (cc.stdout.trim() === '') {
      left.delete(c);
      accounted.push({ sha: c, method: 'clean_merge', via: c });
    }
  }
  const unlanded = remaining.filter((c) => left.has(c)).reverse();
  return { branch, head, landedTips, headLandedOn: null, accounted, unlanded, unlandedTruncated: false };
}

/** patch_id and squash (see analyzeBranch), removing what they account for from `left`. */
async function matchPatches(
  g: RepoGit,
  out: (args: string[], input?: string) => Promise<GitResult>,
  head: string,
  left: Set<string>,
  landedHeads: { ref: string; sha: string }[],
  accounted: AccountedCommit[],
): Promise<void> {
  const bases = new Map<string, string>(); // landed head -> merge base with the branch
  const landedCommits = new Set<string>();
  for (const t of landedHeads) {
    const mb = (await out(['merge-base', head, t.sha]).catch(() => null))?.stdout.trim() ?? '';
    if (!SHA.test(mb)) continue;
    bases.set(t.sha, mb);
    for (const c of await g.revList(['--no-merges', `--max-count=${MAX_LANDED_COMMITS}`, t.sha, `^${mb}`], false)) landedCommits.add(c);
  }
  if (landedCommits.size === 0) return;
  const landedByPatch = new Map<string, string>();
  for (const [commit, pid] of await g.patchIds([...landedCommits])) if (!landedByPatch.has(pid)) landedByPatch.set(pid, commit);

  for (const [commit, pid] of await g.patchIds([...left])) {
    const hit = landedByPatch.get(pid);
    if (hit === undefined) continue;
    left.delete(commit);
    accounted.push({ sha: commit, method: 'patch_id', via: hit });
  }

  // Squash: the combined diff from the merge base to one of the branch's commits (newest first)
  // equals a landed commit's; everything up to it landed. Again from there, for a branch squashed twice.
  for (const mb of new Set(bases.values())) {
    let base = mb;
    for (let budget = MAX_SQUASH_DIFFS; budget > 0 && left.size > 0;) {
      const span = await g.revList(['--topo-order', head, `^${base}`], false);
      let found: { tip: string; landed: string } | null = null;
      for (const c of span) {
        if (budget-- <= 0) break;
        const pid = await g.rangePatchId(base, c);
        const landed = pid === null ? undefined : landedByPatch.get(pid);
        if (landed !== undefined) {
          found = { tip: c, landed };
          break;
        }
      }
      if (found === null) break;
      for (const c of await g.revList([found.tip, `^${base}`], false)) {
        if (!left.delete(c)) continue;
        accounted.push({ sha: c, method: 'squash', via: found.landed });
      }
      base = found.tip;
    }
  }
}

export interface WorktreeChanges {
  /** paths whose content differs from HEAD: modified, staged, deleted, untracked (not ignored) */
  files: string[];
  /** the worktree's files as a tree (what a snapshot of them records) */
  tree: string;
  /** what a snapshot cannot hold and removal would delete: nested repositories, populated submodules */
  unpreservable: string[];
}

/**
 * What is uncommitted and untracked, computed as a snapshot would record it (wip.ts): the
 * worktree staged as it is on disk into a private index (disk-tree.ts, no filter), its tree
 * compared with HEAD's. Writes objects (no ref: unreferenced, git's gc drops them) and never
 * touches the worktree, its index or a ref.
 */
export async function worktreeChanges(dirs: WorktreeDirs): Promise<WorktreeChanges> {
  const pinned = pinnedGit(dirs);
  const run = (args: string[], env: GitEnvExtras = {}, okCodes?: number[], input?: string) =>
    git(args, { cwd: pinned.cwd, env: { ...pinned.env, ...env }, ...(okCodes ? { okCodes } : {}), ...(input !== undefined ? { input } : {}) });
  const tmpIndex = path.join(dirs.privateDir, `overdeck-removal-${process.pid}-${randomBytes(6).toString('hex')}.index`);
  const env = { GIT_INDEX_FILE: tmpIndex };
  try {
    await assertDirUnchanged(dirs.privateDir);
    const { copied, indexMtimeSec } = await copyRealIndex(dirs.privateDir, tmpIndex);
    const headTree = await run(['rev-parse', '-q', '--verify', 'HEAD^{tree}'], {}, [1, 128]);
    if (!copied && headTree.code === 0) await run(['read-tree', 'HEAD'], env);
    // The staged state too (a snapshot keeps it): staged then undone on disk is still work.
    const unmerged = (await run(['-c', 'core.quotePath=false', 'ls-files', '-z', '--unmerged'], env)).stdout
      .split('\0')
      .filter(Boolean)
      .map((l) => l.slice(l.indexOf('\t') + 1));
    const indexTree = unmerged.length > 0 ? null : (await run(['write-tree'], env)).stdout.trim();
    await stageAsOnDisk((args, okCodes, input) => run(args, env, okCodes, input), {
      worktreePath: dirs.worktreePath,
      scratchDir: dirs.privateDir,
      indexMtimeSec,
    });
    const tree = (await run(['write-tree'], env)).stdout.trim();
    const base = headTree.code === 0 ? headTree.stdout.trim() : (await run(['hash-object', '-t', 'tree', '--no-filters', '/dev/null'])).stdout.trim();
    const staged = indexTree === null ? unmerged : await changedPaths(dirs, base, indexTree);
    const files = [...new Set([...(await changedPaths(dirs, base, tree)), ...staged])].sort();
    return { files, tree, unpreservable: await unpreservable(dirs, run) };
  } finally {
    await Promise.all([fs.rm(tmpIndex, { force: true }), fs.rm(`${tmpIndex}.lock`, { force: true })]);
  }
}

/** Paths that differ between two trees (renames not detected: no blob is read). */
async function changedPaths(dirs: WorktreeDirs, from: string, to: string): Promise<string[]> {
  if (from === to) return [];
  const pinned = pinnedGit(dirs);
  const r = await git(['diff', '--no-renames', '--name-only', '-z', from, to], { cwd: pinned.cwd, env: pinned.env });
  return r.stdout.split('\0').filter((p) => p !== '');
}

/** Nested repositories (`ls-files --others` lists them as `dir/`) and submodule directories that hold files. */
async function unpreservable(dirs: WorktreeDirs, run: (args: string[]) => Promise<GitResult>): Promise<string[]> {
  const out: string[] = [];
  const others = await run(['-c', 'core.quotePath=true', 'ls-files', '--others', '--exclude-standard']);
  for (const l of others.stdout.split('\n')) if (l.endsWith('/')) out.push(unquoteC(l).toString('utf8'));
  const staged = await run(['-c', 'core.quotePath=true', 'ls-files', '-s']);
  for (const l of staged.stdout.split('\n')) {
    const m = /^160000 [0-9a-f]+ \d\t(.+)$/.exec(l);
    if (!m) continue;
    const rel = unquoteC(m[1]!).toString('utf8');
    const entries = await fs.readdir(path.join(dirs.worktreePath, rel)).catch(() => []);
    if (entries.length > 0) out.push(rel);
  }
  return out;
}

export interface RemoveOptions {
  /** the ownership as the caller established it (local projection and/or service), null: none known */
  ownership: OwnershipFact | null;
  callerIsOwner: boolean;
  liveness: 'alive' | 'dead' | 'unknown';
  sources?: LandedSources;
  /** decide and say, change nothing (no snapshot, no removal) */
  dryRun?: boolean;
  /** delete the branch after the removal, when no other worktree has it checked out */
  deleteBranch?: boolean;
  /** the worktree and its git dirs must resolve under one of these (confine.ts) */
  allowedRoots?: readonly string[];
}

export interface RemovalOutcome {
  status: 'removed' | 'would_remove' | 'refused';
  decision: RemovalDecision;
  facts: RemovalFacts;
  /** set when removed: when, and what became of the branch */
  removedAt?: string;
  branch?: { name: string; status: 'kept' | 'deleted' | 'delete_failed'; detail?: string };
}

/** The facts the rule decides on, before any snapshot: `planned` when the files could be kept under the ownership's WIP refs. */
export async function removalFacts(dirs: WorktreeDirs, opts: RemoveOptions): Promise<RemovalFacts> {
  const [a, changes] = await Promise.all([analyzeBranch(dirs.worktreePath, opts.sources ?? {}), worktreeChanges(dirs)]);
  const snapshot: SnapshotFact =
    changes.files.length === 0
      ? { status: 'not_needed' }
      : opts.ownership !== null
        ? { status: 'planned', ownershipId: opts.ownership.ownershipId }
        : { status: 'unavailable', why: 'no ownership to file a snapshot under (refs/overdeck/wip/<ownership>/)' };
  return {
    worktreePath: dirs.worktreePath,
    branch: a.branch,
    head: a.head,
    ownership: opts.ownership,
    callerIsOwner: opts.callerIsOwner,
    liveness: opts.liveness,
    headLandedOn: a.headLandedOn,
    accounted: a.accounted,
    unlanded: a.unlanded,
    unlandedTruncated: a.unlandedTruncated,
    dirtyFiles: changes.files,
    unpreservable: changes.unpreservable,
    snapshot,
  };
}

/**
 * Removes the worktree at `worktreePath` when the rule allows it: snapshot of its uncommitted and
 * untracked files first (a ref under refs/overdeck/wip/<ownership>/tree-<tree>), git's worktree
 * lock dropped, `git worktree remove --force`, the branch kept unless asked. A failed git step
 * throws (GitSideError): the outcome `removed` means the directory and its git dir are gone.
 */
export async function removeWorktree(worktreePath: string, opts: RemoveOptions): Promise<RemovalOutcome> {
  const dirs = await worktreeDirs(path.resolve(worktreePath));
  if (opts.allowedRoots !== undefined) await confineDirs(dirs, opts.allowedRoots);
  if (dirs.isMain) throw new GitSideError('invalid_argument', 'the main worktree of a repository is never removed');
  let facts = await removalFacts(dirs, opts);
  const planned = decideRemoval(facts);
  if (planned.verdict === 'refuse') return { status: 'refused', decision: planned, facts };
  if (opts.dryRun === true) return { status: 'would_remove', decision: planned, facts };

  if (facts.snapshot.status === 'planned') {
    facts = await withSnapshot(dirs, facts, facts.snapshot.ownershipId, opts.allowedRoots);
    const decided = decideRemoval(facts);
    if (decided.verdict === 'refuse') return { status: 'refused', decision: decided, facts };
  }
  // Just before the removal, once more: files written since the snapshot are snapshotted too (a
  // new tree, a new ref), or, with no ownership to file them under, stop the removal.
  const preserved = facts.snapshot.status === 'taken' ? [{ ref: facts.snapshot.ref, sha: facts.snapshot.sha }] : [];
  const late = await worktreeChanges(dirs);
  const keptTree = facts.snapshot.status === 'taken' ? await treeOf(dirs, facts.snapshot.sha) : null;
  if (late.unpreservable.length > 0 || (late.files.length > 0 && late.tree !== keptTree)) {
    if (opts.ownership === null || late.unpreservable.length > 0) {
      facts = {
        ...facts,
        dirtyFiles: late.files,
        unpreservable: late.unpreservable,
        snapshot: { status: 'unavailable', why: 'files changed during the removal' },
      };
      return { status: 'refused', decision: decideRemoval(facts), facts };
    }
    facts = await withSnapshot(dirs, { ...facts, dirtyFiles: late.files }, opts.ownership.ownershipId, opts.allowedRoots);
    if (facts.snapshot.status === 'taken' && !preserved.some((p) => p.sha === (facts.snapshot as { sha: string }).sha)) {
      preserved.push({ ref: facts.snapshot.ref, sha: facts.snapshot.sha });
    }
  }
  const decision = decideRemoval(facts);
  if (decision.verdict === 'refuse') return { status: 'refused', decision, facts };
  const receipt: RemovalReceipt = { ...decision.receipt, preserved: preserved.map((p) => ({ ...p, files: facts.dirtyFiles.length })) };

  await unlockWorktree(dirs.worktreePath);
  await worktreeCommand(['remove', '--force', dirs.worktreePath], { cwd: dirs.commonDir, env: { GIT_DIR: dirs.commonDir } }, path.basename(dirs.privateDir));
  if (existsSync(dirs.worktreePath) || existsSync(dirs.privateDir)) {
    throw new GitSideError('git_failed', 'git worktree remove answered success but the worktree or its git dir is still there');
  }
  const removedAt = new Date().toISOString();
  const branch = facts.branch === null ? undefined : await settleBranch(dirs, facts.branch, facts.head, opts.deleteBranch === true);
  return { status: 'removed', decision: { verdict: 'remove', receipt }, facts, removedAt, ...(branch ? { branch } : {}) };
}

async function treeOf(dirs: WorktreeDirs, commit: string): Promise<string | null> {
  const pinned = pinnedGit(dirs);
  const r = await git(['rev-parse', '-q', '--verify', `${commit}^{tree}`], { cwd: pinned.cwd, env: pinned.env, okCodes: [1, 128] });
  return r.code === 0 ? r.stdout.trim() : null;
}

async function withSnapshot(dirs: WorktreeDirs, facts: RemovalFacts, ownershipId: string, allowedRoots: readonly string[] | undefined): Promise<RemovalFacts> {
  try {
    const made = await preserveWipByTree(dirs.worktreePath, ownershipId, allowedRoots ? { allowedRoots } : {});
    // Changed files seen, and a snapshot that found nothing to keep: not a loss to risk.
    if (made === null) return { ...facts, snapshot: { status: 'failed', detail: 'snapshot_recorded_nothing' } };
    const pinned = pinnedGit(dirs);
    // What the snapshot's files hold that HEAD does not, with what was seen before (a staged state is kept beside the files).
    const inSnapshot = await git(['diff', '--no-renames', '--name-only', '-z', `${made.sha}^`, made.sha], { cwd: pinned.cwd, env: pinned.env }).then(
      (r) => r.stdout.split('\0').filter(Boolean),
      () => [],
    );
    return { ...facts, dirtyFiles: [...new Set([...facts.dirtyFiles, ...inSnapshot])].sort(), snapshot: { status: 'taken', ref: made.ref, sha: made.sha } };
  } catch (err) {
    const detail = err instanceof GitSideError ? err.code : 'snapshot_error';
    return { ...facts, snapshot: { status: 'failed', detail } };
  }
}

/** Keeps the branch, or deletes it when asked and no other worktree has it checked out (compare-and-delete on the head the analysis saw). */
async function settleBranch(dirs: WorktreeDirs, name: string, head: string | null, remove: boolean): Promise<NonNullable<RemovalOutcome['branch']>> {
  if (!remove) return { name, status: 'kept' };
  const cwd = dirs.commonDir;
  const env = { GIT_DIR: dirs.commonDir };
  const list = await worktreeCommand(['list', '--porcelain'], { cwd, env });
  if (list.stdout.split('\n').includes(`branch refs/heads/${name}`)) return { name, status: 'kept', detail: 'checked out in another worktree' };
  if (head === null) return { name, status: 'kept', detail: 'no head to compare' };
  const r = await git(['update-ref', '-d', `refs/heads/${name}`, head], { cwd, env, okCodes: [1, 128] });
  return r.code === 0 ? { name, status: 'deleted' } : { name, status: 'delete_failed', detail: r.stderr.split('\n')[0]?.slice(0, 200) ?? `exit ${r.code}` };
}

/** How often a `git worktree` command is tried when other worktrees' entries vanish under it. */
const WORKTREE_ATTEMPTS = 5;
/** git's words when an entry of .git/worktrees it was reading was deleted meanwhile: its name, the entry's directory. */
const VANISHED_ENTRY = /(?:failed to read|Invalid path) '?[^'\n]*\/worktrees\/([^/'\n]+)(?:\/[^'\n]*)?'?: No such file or directory/;

/**
 * `git worktree <args>`, tried again when it died on another worktree's entry vanishing under it.
 * git reads every entry of .git/worktrees before it lists or removes one, and dies on an entry a
 * concurrent removal (a gc, a removal by another process) deleted meanwhile: nothing of ours
 * happened, and the next try sees the repository without it. An entry of `ours` (the worktree this
 * command is about) vanishing is no such race: that fails at once.
 */
async function worktreeCommand(args: string[], opts: { cwd: string; env?: Record<string, string> }, ours: string | null = null): Promise<GitResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await git(['worktree', ...args], opts);
    } catch (err) {
      const vanished = err instanceof GitSideError ? VANISHED_ENTRY.exec(err.message)?.[1] : undefined;
      if (vanished === undefined || vanished === ours || attempt >= WORKTREE_ATTEMPTS) throw err;
      await new Promise((r) => setTimeout(r, 20 * attempt));
    }
  }
}

/** The worktrees of a repository (`worktree list --porcelain`), the main one first. */
export async function listWorktrees(repo: string): Promise<{ path: string; head: string | null; branch: string | null; main: boolean; prunable: boolean }[]> {
  const r = await worktreeCommand(['list', '--porcelain'], { cwd: path.resolve(repo) });
  const out: { path: string; head: string | null; branch: string | null; main: boolean; prunable: boolean }[] = [];
  for (const block of r.stdout.split('\n\n')) {
    const lines = block.split('\n').filter(Boolean);
    const wt = lines.find((l) => l.startsWith('worktree '));
    if (!wt) continue;
    const head = lines.find((l) => l.startsWith('HEAD '))?.slice(5) ?? null;
    const branch = lines.find((l) => l.startsWith('branch '))?.slice('branch refs/heads/'.length) ?? null;
    out.push({ path: wt.slice('worktree '.length), head, branch, main: out.length === 0, prunable: lines.some((l) => l.startsWith('prunable')) });
  }
  return out;
}

/** The ownership the worktree's local projection names (what its hooks enforce), or null. */
export async function projectedOwnership(worktreePath: string): Promise<OwnershipFact | null> {
  const local = await readProjection(worktreePath).catch(() => null);
  if (local === null) return null;
  const holds = (local.holds ?? []).map((h) => ({ holdId: h.holdId, executionSessionId: h.executionSessionId, runtime: null }));
  return {
    ownershipId: local.ownershipId,
    state: local.state,
    executionSessionId: local.executionSessionId,
    source: 'projection',
    ...(holds.length > 0 ? { holds } : {}),
  };
}

/** The outcome as the wire reports it (`--json`, the API): a refusal's reasons, a removal's receipt. */
export function removalResult(worktree: string, o: RemovalOutcome): RemovalResult {
  const d = o.decision;
  return {
    worktree,
    status: o.status,
    refusal: d.verdict === 'refuse' ? d.refusal : null,
    refusals: d.verdict === 'refuse' ? d.refusals : [],
    receipt: d.verdict === 'remove' ? d.receipt : null,
    facts: o.facts,
    removedAt: o.removedAt ?? null,
    branch: o.branch ?? null,
    record: null,
    error: null,
  };
}

/** A removal whose git step failed: `failed` with what failed, never reported removed. */
export function failedRemoval(worktree: string, err: unknown): RemovalResult {
  return {
    worktree,
    status: 'failed',
    refusal: null,
    refusals: [],
    receipt: null,
    facts: null,
    removedAt: null,
    branch: null,
    record: null,
    error: err instanceof Error ? err.message : String(err),
  };
}
