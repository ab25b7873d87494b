import { OwnershipError } from '../client/errors';
import type { LocalWorktree, WorktreeResolver } from '../client/worktree-resolver';
import type { SeenProcess } from '../domain/liveness';
import { confineDirs } from '../git/confine';
import { GitSideError } from '../git/errors';
import { checkedOutBranch, projectedOwnershipId } from '../git/head';
import { assertUnderAllowedRoots, normalizePath, PathRefusal } from '../git/paths';
import { identifyWorktree } from '../git/repo';
import { procEnvironVar, procStat, readBootIdSync } from '../host/procfs';

/**
 * The client's worktree resolver on the worktrees' own host: git and the file system identify a
 * worktree, /proc says who a process is. Composed in by the API, the MCP stdio server, the reconcile
 * port and the public entry; the client never imports it (dependency-cruiser client-runs-no-git).
 * It sits above src/client, not in src/git or src/host: those lie below the client (its workflows'
 * activities use them), so an adapter there importing the client would close a folder cycle.
 */

/** A path refusal keeps its code and the client's fixed message: the refused path itself may be sensitive. */
function refused(err: unknown): unknown {
  return err instanceof PathRefusal ? new OwnershipError(err.code) : err;
}

async function canonicalPath(p: string, allowedRoots?: readonly string[]): Promise<string> {
  try {
    return allowedRoots ? await assertUnderAllowedRoots(p, allowedRoots) : await normalizePath(p);
  } catch (err) {
    throw refused(err);
  }
}

async function identify(p: string, allowedRoots?: readonly string[]): Promise<LocalWorktree> {
  try {
    const id = await identifyWorktree(p);
    if (allowedRoots) await confineDirs(id, allowedRoots);
    const branch = await checkedOutBranch(id);
    // The projection is read through the dirs just confined, never through what `.git` says later.
    return { worktreePath: id.worktreePath, repoRoot: id.repoRoot, branch, projectedOwnershipId: () => projectedOwnershipId(id) };
  } catch (err) {
    if (err instanceof GitSideError) throw new OwnershipError('path_not_found', 'the path is not the top of a git worktree on this host');
    throw refused(err);
  }
}

function seenProcess(pid: number): SeenProcess | null {
  const bootId = readBootIdSync();
  if (bootId === null) return null;
  const stat = procStat(pid);
  return { bootId, startTime: stat?.startTime ?? null, sessionInEnviron: stat ? procEnvironVar(pid, 'OVERDECK_EXECUTION_SESSION_ID') : undefined };
}

export const gitWorktreeResolver: WorktreeResolver = { canonicalPath, identify, seenProcess };
