import { promises as fs } from 'node:fs';
import path from 'node:path';
import { realpathSync } from 'node:fs';
import { isNotFound } from './atomic';

export type PathRefusalCode = 'path_outside_allowed_roots' | 'path_not_found';

/** Carries only a code and a fixed reason: the refused path itself may be sensitive (docs/guarantees.md#what-is-never-stored-and-what-is-redacted). */
export class PathRefusal extends Error {
  readonly code: PathRefusalCode;

  constructor(code: PathRefusalCode) {
    super(code === 'path_outside_allowed_roots' ? `${code}: not under a configured allowed root` : `${code}: path does not exist`);
    this.name = 'PathRefusal';
    this.code = code;
  }
}

const MAX_SYMLINK_HOPS = 40;
/** Linux NAME_MAX and PATH_MAX (bytes): a longer name or path can never exist, however it is spelled. */
const NAME_MAX = 255;
const PATH_MAX = 4096;

/**
 * Errors that say the path itself cannot be resolved, whatever the state of the service: a
 * symlink loop, a name or a total the kernel refuses as too long, a component that is a file, a
 * directory we may not search. A caller's path that hits one is refused like a missing one, never a
 * failure of ours (the API answered 500 for a path through a symlink loop, found by the API fuzz).
 */
const UNRESOLVABLE = new Set(['ELOOP', 'ENAMETOOLONG', 'ENOTDIR', 'EACCES', 'EPERM']);

function unresolvable(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && UNRESOLVABLE.has(code);
}

/**
 * One spelling per location: absolute, symlinks and `..` resolved physically (as the kernel would),
 * so `a/link/../b` follows the link before going up. A path that does not exist yet (a worktree about
 * to be created) resolves its existing prefix and appends the rest.
 */
export async function normalizePath(p: string): Promise<string> {
  if (p === '' || p.includes('\0')) throw new PathRefusal('path_not_found');
  const abs = path.isAbsolute(p) ? p : path.join(process.cwd(), p);
  // Checked by hand too: below a missing directory the kernel says ENOENT, not ENAMETOOLONG.
  if (Buffer.byteLength(abs) >= PATH_MAX || abs.split('/').some((c) => Buffer.byteLength(c) > NAME_MAX)) throw new PathRefusal('path_not_found');
  try {
    return realpathSync.native(abs);
  } catch (err) {
    if (!isNotFound(err)) {
      if (unresolvable(err)) throw new PathRefusal('path_not_found');
      throw err;
    }
  }
  return resolveMissing(abs);
}

/** Walks component by component, expanding symlinks by hand, because realpath fails once anything is missing. */
async function resolveMissing(abs: string): Promise<string> {
  let pending = abs.split('/').filter((c) => c !== '');
  let cur = '/';
  let hops = 0;
  while (pending.length > 0) {
    const [comp, ...rest] = pending;
    pending = rest;
    if (comp === undefined || comp === '.') continue;
    if (comp === '..') {
      cur = path.dirname(cur); // cur never names a symlink here, so lexical parent is the physical parent
      continue;
    }
    const next = path.join(cur, comp);
    let isLink: boolean;
    try {
      isLink = (await fs.lstat(next)).isSymbolicLink();
    } catch (err) {
      if (!isNotFound(err)) {
        if (unresolvable(err)) throw new PathRefusal('path_not_found');
        throw err;
      }
      cur = next;
      continue;
    }
    if (!isLink) {
      cur = next;
      continue;
    }
    if (++hops > MAX_SYMLINK_HOPS) throw new PathRefusal('path_not_found');
    const target = await fs.readlink(next).catch((err: unknown) => {
      if (unresolvable(err) || isNotFound(err)) throw new PathRefusal('path_not_found');
      throw err;
    });
    if (path.isAbsolute(target)) cur = '/';
    pending = [...target.split('/').filter((c) => c !== ''), ...pending];
  }
  return cur;
}

export interface AllowedRootsOptions {
  /** Refuse with `path_not_found` when the path does not exist (e.g. writes into an existing worktree). */
  mustExist?: boolean;
}

/**
 * Fail closed: the normalised path must equal a normalised root or sit below it. Roots are
 * normalised too, so a root given through a symlink still matches its real location, and a path
 * that escapes through a symlink or `..` is compared where it really lands.
 */
export async function assertUnderAllowedRoots(p: string, roots: readonly string[], opts: AllowedRootsOptions = {}): Promise<string> {
  const normalised = await normalizePath(p);
  for (const root of roots) {
    if (root === '' || root.includes('\0')) continue;
    const r = await normalizedRoot(root);
    if (normalised === r || normalised.startsWith(r === '/' ? '/' : `${r}/`)) {
      if (opts.mustExist === true && !(await exists(normalised))) throw new PathRefusal('path_not_found');
      return normalised;
    }
  }
  throw new PathRefusal('path_outside_allowed_roots');
}

/**
 * A root's normalised form, worked out again at most once a second: roots are the deployment's
 * configuration, asked on every request (a lookup's repoRoot), and a root moved through a symlink
 * takes effect within that second, as a restart would.
 */
const ROOT_TTL_MS = 1_000;
const roots = new Map<string, { at: number; real: string }>();
async function normalizedRoot(root: string): Promise<string> {
  const now = Date.now();
  const hit = roots.get(root);
  if (hit !== undefined && now - hit.at < ROOT_TTL_MS) return hit.real;
  const real = await normalizePath(root);
  if (roots.size > 64) roots.clear();
  roots.set(root, { at: now, real });
  return real;
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.stat(p);
    return true;
  } catch (err) {
    if (isNotFound(err) || unresolvable(err)) return false;
    throw err;
  }
}
