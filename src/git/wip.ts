import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { isNotFound } from './atomic';
import { GitSideError } from './errors';
import { git } from './exec';
import { worktreeDirs } from './repo';

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
 * Snapshot of a dirty worktree as a commit under refs/overdeck/wip/<ownershipId>/<seq>, built in a
 * private index so the worktree files, the real index and the branch stay exactly as the previous
 * owner left them. Returns null when the worktree matches HEAD. Idempotent per (ownership, seq).
 */
export async function preserveWip(worktreePath: string, ownershipId: string, seq: number): Promise<{ ref: string; sha: string } | null> {
  const ref = wipRef(ownershipId, seq);
  const cwd = path.resolve(worktreePath);
  const existing = await revParse(cwd, ref);
  if (existing !== null) return { ref, sha: existing };

  const dirs = await worktreeDirs(cwd);
  const head = await revParse(cwd, 'HEAD');
  const tmpIndex = path.join(dirs.privateDir, `overdeck-wip-${process.pid}-${randomBytes(6).toString('hex')}.index`);
  const env = { GIT_INDEX_FILE: tmpIndex };
  try {
    // Start from a copy of the real index rather than `read-tree HEAD`: it keeps stat data (so
    // `add -A` does not rehash every file) and skip-worktree bits (so a sparse checkout's absent
    // files are not recorded as deletions).
    const copied = await copyIfExists(path.join(dirs.privateDir, 'index'), tmpIndex);
    if (!copied && head !== null) await git(['read-tree', 'HEAD'], { cwd, env });
    await git(['add', '-A'], { cwd, env });
    const tree = (await git(['write-tree'], { cwd, env })).stdout.trim();
    const headTree = head === null ? await emptyTree(cwd) : await revParse(cwd, 'HEAD^{tree}');
    if (tree === headTree) return null;

    const message = `od-worktree: wip of ${ownershipId} at seq ${seq}\n`;
    const args = ['commit-tree', '--no-gpg-sign', tree, ...(head === null ? [] : ['-p', head]), '-m', message];
    const sha = (await git(args, { cwd, env: WIP_IDENTITY })).stdout.trim();
    // Empty old value: create only. A concurrent preserve of the same seq wins the race and we return its commit.
    const created = await git(['update-ref', '-m', 'od-worktree: preserve wip', ref, sha, ''], { cwd, okCodes: [128] });
    if (created.code !== 0) {
      const winner = await revParse(cwd, ref);
      if (winner === null) throw new GitSideError('git_failed', 'could not create the wip ref');
      return { ref, sha: winner };
    }
    return { ref, sha };
  } finally {
    await fs.rm(tmpIndex, { force: true });
  }
}

async function revParse(cwd: string, rev: string): Promise<string | null> {
  const res = await git(['rev-parse', '-q', '--verify', `${rev}^{object}`], { cwd, okCodes: [1, 128] });
  return res.code === 0 ? res.stdout.trim() : null;
}

async function emptyTree(cwd: string): Promise<string> {
  // Unborn branch: compare against the empty tree of this repository's hash algorithm.
  return (await git(['hash-object', '-t', 'tree', '/dev/null'], { cwd })).stdout.trim();
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
