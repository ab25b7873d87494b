import { promises as fs } from 'node:fs';
import path from 'node:path';
import { isNotFound } from './atomic';

export type PathRefusalCode = 'path_outside_allowed_roots' | 'path_not_found';

/** Carries only a code and a fixed reason: the refused path itself may be sensitive (spec §13). */
export class PathRefusal extends Error {
  readonly code: PathRefusalCode;

  constructor(code: PathRefusalCode) {
    super(code === 'path_outside_allowed_roots' ? `${code}: not under a configured allowed root` : `${code}: path does not exist`);
    this.name = 'PathRefusal';
    this.code = code;
  }
}

const MAX_SYMLINK_HOPS = 40;

/**
 * One spelling per location: absolute, symlinks and `..` resolved physically (as the kernel would),
 * so `a/link/../b` follows the link before going up. A path that does not exist yet (a worktree about
 * to be created) resolves its existing prefix and appends the rest.
 */
export async function normalizePath(p: string): Promise<string> {
  if (p === '' || p.includes('\0')) throw new PathRefusal('path_not_found');
  const abs = path.isAbsolute(p) ? p : path.join(process.cwd(), p);
  try {
    return await fs.realpath(abs);
  } catch (err) {
    if (!isNotFound(err)) throw err;
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
      if (!isNotFound(err)) throw err;
      cur = next;
      continue;
    }
    if (!isLink) {
      cur = next;
      continue;
    }
    if (++hops > MAX_SYMLINK_HOPS) throw Object.assign(new Error('too many symbolic links'), { code: 'ELOOP' });
    const target = await fs.readlink(next);
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
    const r = await normalizePath(root);
    if (normalised === r || normalised.startsWith(r === '/' ? '/' : `${r}/`)) {
      if (opts.mustExist === true && !(await exists(normalised))) throw new PathRefusal('path_not_found');
      return normalised;
    }
  }
  throw new PathRefusal('path_outside_allowed_roots');
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.stat(p);
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}
