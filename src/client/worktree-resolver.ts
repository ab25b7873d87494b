import type { SeenProcess } from '../domain/liveness';

/**
 * What the client needs from the host its worktrees live on, as a port: the client itself runs no
 * git and reads no /proc, so it loads wherever Temporal is reachable, and a test can answer for the
 * host. The git- and procfs-backed resolver is src/adapters/worktree-resolver.ts, passed in by whoever
 * composes the client. A refusal crosses as OwnershipError with the code a caller sees
 * (path_not_found, path_outside_allowed_roots), never as a git or file-system error.
 */
export interface WorktreeResolver {
  /**
   * One spelling per location: absolute, symlinks and `..` resolved physically (a path that does not
   * exist yet resolves its existing prefix); with `allowedRoots`, it must be one of them or lie below one.
   */
  canonicalPath(p: string, allowedRoots?: readonly string[]): Promise<string>;
  /**
   * The worktree `p` (already canonical) is in, as git on this host sees it; a path git finds no
   * worktree at is path_not_found. With `allowedRoots`, every directory it leads to (the worktree,
   * its private and common git dirs) must lie under them: a `.git` file pointing elsewhere is refused.
   */
  identify(p: string, allowedRoots?: readonly string[]): Promise<LocalWorktree>;
  /** What this host says of process `pid`; null where it cannot say (no /proc): then nothing is checked. */
  seenProcess(pid: number): SeenProcess | null;
}

/** A worktree as its own host's git answers for it. Paths are git's; the client canonicalises and confines them again. */
export interface LocalWorktree {
  worktreePath: string;
  /** the repository's root as the service keys it (the main worktree's path; a bare repository's git dir) */
  repoRoot: string;
  /** checked out, without refs/heads/; null when HEAD is detached */
  branch: string | null;
  /**
   * The ownership the worktree's own projection names, or null. It travels with the worktree through
   * `git worktree move`: a hint for a lookup, never a decision by itself.
   */
  projectedOwnershipId(): Promise<string | null>;
}
