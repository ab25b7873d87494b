import { promises as fs, type BigIntStats } from 'node:fs';
import path from 'node:path';
import { isNotFound } from './atomic';
import { GitSideError } from './errors';
import type { GitResult } from './exec';

/**
 * Stages a worktree into a private index exactly as its files are on disk, without `git add`.
 *
 * `git add` hands every file it reads to the repository's clean filter (any driver name a
 * .gitattributes line picks, configured in agent-writable config) and runs fsmonitor and the
 * post-index-change hook; no `-c` can switch off drivers whose names are not known in advance.
 * Here blobs are written with `git hash-object --no-filters` (bytes as on disk: no filter, no
 * end-of-line or encoding conversion) and entries set with `update-index --index-info`, which reads
 * no file. Which files to hash is decided as git's own refresh would, from the stat data the index
 * holds (`ls-files --debug`): an entry whose stat matches and is not racily clean keeps its blob,
 * so a clean worktree still matches HEAD whatever its filters did at checkout. When in doubt a file
 * is hashed: the cost is a snapshot that differs from HEAD only by conversion, never lost work.
 *
 * Like `git add -A` it records modified, new (not ignored) and deleted files and keeps skip-worktree
 * (sparse checkout) and assume-unchanged entries as they are; unlike it, a submodule's or a nested
 * repository's commit is never read (gitlinks are kept as recorded, nested repositories skipped):
 * that would mean running git inside a repository the agent controls entirely.
 */

/** How the caller runs git on the private index (GIT_INDEX_FILE set, on the pinned dirs). */
/**
 * The worktree's real index copied to `tmpIndex`, its mtime taken first (racily clean entries): a
 * copy keeps stat data, so unchanged files are not hashed again, and skip-worktree bits. `copied`
 * false: the worktree has no index yet; then there is no stat data to trust (indexMtimeSec null).
 */
export async function copyRealIndex(privateDir: string, tmpIndex: string): Promise<{ copied: boolean; indexMtimeSec: number | null }> {
  const realIndex = path.join(privateDir, 'index');
  const mtimeSec = await fs.stat(realIndex).then(
    (st) => Math.floor(st.mtimeMs / 1000),
    () => null,
  );
  const copied = await fs.copyFile(realIndex, tmpIndex).then(
    () => true,
    (err: unknown) => {
      if (isNotFound(err)) return false;
      throw err;
    },
  );
  return { copied, indexMtimeSec: copied ? mtimeSec : null };
}

export type IndexGit = (args: string[], okCodes?: number[], input?: string) => Promise<GitResult>;

export interface StageOptions {
  worktreePath: string;
  /** A directory of the service's for temporary files (symlink targets to hash). */
  scratchDir: string;
  /** Seconds of the real index's mtime when the private index is its copy; null: no stat data to trust. */
  indexMtimeSec: number | null;
  signal?: AbortSignal;
}

/** Stat data of an index entry, as `ls-files --debug` prints it (32-bit fields, as the index holds them). */
export interface EntryStat {
  ctimeSec: number;
  ctimeNsec: number;
  mtimeSec: number;
  mtimeNsec: number;
  ino: number;
  uid: number;
  gid: number;
  size: number;
}

export interface IndexEntry {
  /** `ls-files -v` tag: lowercase = assume-unchanged, S = skip-worktree */
  tag: string;
  mode: string;
  oid: string;
  stage: number;
  /** the path as git printed it (C-quoted when it needs to be): given back to git verbatim */
  quoted: string;
  stat: EntryStat | null;
}

const ENTRY = /^(\S) (\d{6}) ([0-9a-f]{40,64}) ([0-3])\t(.+)$/;
const DEBUG_FIELDS: Readonly<Record<string, readonly (keyof EntryStat | null)[]>> = {
  ctime: ['ctimeSec', 'ctimeNsec'],
  mtime: ['mtimeSec', 'mtimeNsec'],
  dev: [null],
  ino: ['ino'],
  uid: ['uid'],
  gid: ['gid'],
  size: ['size'],
  flags: [null],
};

/**
 * `git ls-files -s -v --debug` (not -z, core.quotePath on: every line ASCII). An entry whose debug
 * lines do not read as expected gets stat null (hashed again), so a changed format costs time only.
 */
export function parseIndexListing(text: string): IndexEntry[] {
  const out: IndexEntry[] = [];
  let current: (IndexEntry & { seen: Partial<EntryStat> }) | null = null;
  const finish = () => {
    if (current === null) return;
    const s = current.seen;
    const complete = (['ctimeSec', 'ctimeNsec', 'mtimeSec', 'mtimeNsec', 'ino', 'uid', 'gid', 'size'] as const).every((k) => typeof s[k] === 'number');
    out.push({
      tag: current.tag,
      mode: current.mode,
      oid: current.oid,
      stage: current.stage,
      quoted: current.quoted,
      stat: complete ? (s as EntryStat) : null,
    });
    current = null;
  };
  for (const line of text.split('\n')) {
    if (line.startsWith('  ')) {
      if (current === null) continue;
      // "  ctime: 1:2", "  dev: 1\tino: 2", "  size: 3\tflags: 0"
      for (const part of line.trim().split('\t')) {
        const m = /^([a-z]+): (\d+)(?::(\d+))?$/.exec(part);
        const keys = m ? DEBUG_FIELDS[m[1]!] : undefined;
        if (!m || !keys) continue;
        if (keys[0]) current.seen[keys[0]] = Number(m[2]);
        if (keys[1] && m[3] !== undefined) current.seen[keys[1]] = Number(m[3]);
      }
      continue;
    }
    finish();
    const m = ENTRY.exec(line);
    if (m) current = { tag: m[1]!, mode: m[2]!, oid: m[3]!, stage: Number(m[4]), quoted: m[5]!, stat: null, seen: {} };
  }
  finish();
  return out;
}

const C_ESCAPES: Readonly<Record<string, number>> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/** The bytes of a path git printed, C-quoted ("a\303\244") or plain. */
export function unquoteC(s: string): Buffer {
  if (!s.startsWith('"') || !s.endsWith('"') || s.length < 2) return Buffer.from(s, 'utf8');
  const body = s.slice(1, -1);
  const bytes: number[] = [];
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const next = body[i + 1] ?? '';
    if (/^[0-7]{3}$/.test(body.slice(i + 1, i + 4))) {
      bytes.push(parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else if (next in C_ESCAPES) {
      bytes.push(C_ESCAPES[next]!);
      i += 1;
    } else {
      bytes.push(92);
    }
  }
  return Buffer.from(bytes);
}

/** A path as git's stdin readers (`hash-object --stdin-paths`, `update-index --index-info`) take it. */
export function quoteC(p: Buffer): string {
  const plain = p.every((b) => b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c);
  if (plain && p.length > 0) return p.toString('latin1');
  let out = '"';
  for (const b of p) {
    if (b === 0x22) out += '\\"';
    else if (b === 0x5c) out += '\\\\';
    else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
    else out += `\\${b.toString(8).padStart(3, '0')}`;
  }
  return `${out}"`;
}

const EMPTY_BLOBS = new Set(['e69de29bb2d1d6434b8b29ae775ad8c2e48c5391', '473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813']);
const U32 = 2n ** 32n;
const u32 = (n: bigint): number => Number(n % U32);

/** Whether the entry's stat data still describes the file, so its recorded blob is the file's (git's ie_match_stat, at least as strict). */
export function statMatches(e: IndexEntry, st: BigIntStats, indexMtimeSec: number | null, fileMode: boolean): boolean {
  const s = e.stat;
  if (s === null || indexMtimeSec === null) return false;
  // Racily clean: written in the same second as the index, a later edit of the same size would not show.
  if (s.mtimeSec >= indexMtimeSec) return false;
  // An intent-to-add entry (`add -N`) has the empty blob whatever the file holds.
  if (EMPTY_BLOBS.has(e.oid) && st.size !== 0n) return false;
  const sec = (ns: bigint) => u32(ns / 1_000_000_000n);
  const nsec = (ns: bigint) => Number(ns % 1_000_000_000n);
  if (sec(st.mtimeNs) !== s.mtimeSec || nsec(st.mtimeNs) !== s.mtimeNsec || sec(st.ctimeNs) !== s.ctimeSec || nsec(st.ctimeNs) !== s.ctimeNsec) return false;
  if (u32(st.size) !== s.size || u32(st.ino) !== s.ino || Number(st.uid) !== s.uid || Number(st.gid) !== s.gid) return false;
  if (st.isSymbolicLink()) return e.mode === '120000';
  if (!st.isFile() || (e.mode !== '100644' && e.mode !== '100755')) return false;
  return !fileMode || isExecutable(st) === (e.mode === '100755');
}

const isExecutable = (st: BigIntStats): boolean => (st.mode & 0o100n) !== 0n;

/** The mode a file gets, as git gives it: the executable bit counts unless core.fileMode is off (then a tracked file keeps its mode). */
function regularMode(st: BigIntStats, fileMode: boolean, recorded: string | null): string {
  if (fileMode) return isExecutable(st) ? '100755' : '100644';
  return recorded === '100755' || recorded === '100644' ? recorded : '100644';
}

type Plan = { kind: 'keep' } | { kind: 'remove' } | { kind: 'file'; mode: string } | { kind: 'link' };

/** Entries recorded as they are whatever the disk says: sparse-checkout and assume-unchanged ones (as `git add -A` keeps them), and gitlinks (see above). */
export function keptAsRecorded(e: IndexEntry): boolean {
  return e.stage === 0 && (e.tag === 'S' || e.tag !== e.tag.toUpperCase() || e.mode === '160000');
}

/** What to do with a path (not keptAsRecorded), given its lstat (null: gone, or under a directory that is gone or a symlink). */
export function planFor(entry: IndexEntry | null, st: BigIntStats | null, indexMtimeSec: number | null, fileMode: boolean): Plan {
  // An unmerged path (stages 1-3) is never "unchanged": it is resolved to what is on disk.
  const unchanged = (s: BigIntStats) => entry !== null && entry.stage === 0 && statMatches(entry, s, indexMtimeSec, fileMode);
  if (st === null) return entry === null ? { kind: 'keep' } : { kind: 'remove' };
  if (st.isSymbolicLink()) return unchanged(st) ? { kind: 'keep' } : { kind: 'link' };
  if (st.isFile()) return unchanged(st) ? { kind: 'keep' } : { kind: 'file', mode: regularMode(st, fileMode, entry?.mode ?? null) };
  // A directory where a file was (its files are untracked, listed on their own); a fifo or socket is not content.
  return entry === null ? { kind: 'keep' } : { kind: 'remove' };
}

/** lstat of a path inside the worktree, null when it or any directory above it is missing or a symlink (git does not follow those either). */
async function lstatInside(top: Buffer, rel: Buffer, dirs: Map<string, boolean>): Promise<BigIntStats | null> {
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = 0; i <= rel.length; i++) {
    if (i === rel.length || rel[i] === 0x2f) {
      parts.push(rel.subarray(start, i));
      start = i + 1;
    }
  }
  let prefix = top;
  for (const part of parts.slice(0, -1)) {
    prefix = Buffer.concat([prefix, Buffer.from('/'), part]);
    const key = prefix.toString('latin1');
    let ok = dirs.get(key);
    if (ok === undefined) {
      ok = await fs.lstat(prefix).then(
        (s) => s.isDirectory(),
        () => false,
      );
      dirs.set(key, ok);
    }
    if (!ok) return null;
  }
  try {
    return await fs.lstat(Buffer.concat([top, Buffer.from('/'), rel]), { bigint: true });
  } catch (err) {
    if (isNotFound(err) || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw err;
  }
}

async function inChunks<T, R>(items: readonly T[], signal: AbortSignal | undefined, f: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += 64) {
    signal?.throwIfAborted();
    out.push(...(await Promise.all(items.slice(i, i + 64).map(f))));
  }
  return out;
}

/** Brings the private index to the worktree as it is on disk (see above). */
export async function stageAsOnDisk(run: IndexGit, opts: StageOptions): Promise<void> {
  const fileModeOut = await run(['config', '--type=bool', '--get', 'core.fileMode'], [1]);
  const fileMode = fileModeOut.stdout.trim() !== 'false';
  const listing = parseIndexListing((await run(['-c', 'core.quotePath=true', 'ls-files', '-s', '-v', '--debug'])).stdout);
  const others = (await run(['-c', 'core.quotePath=true', 'ls-files', '--others', '--exclude-standard'])).stdout
    .split('\n')
    .filter((l) => l !== '' && !l.endsWith('/'));

  // One decision per path: an unmerged path (stages 1-3) is resolved to what is on disk.
  const byPath = new Map<string, IndexEntry>();
  for (const e of listing) {
    const seen = byPath.get(e.quoted);
    if (seen === undefined || e.stage === 0) byPath.set(e.quoted, e);
  }
  const candidates: Array<{ quoted: string; entry: IndexEntry | null }> = [...byPath.values()].map((e) => ({ quoted: e.quoted, entry: e }));
  for (const q of others) if (!byPath.has(q)) candidates.push({ quoted: q, entry: null });

  const top = Buffer.from(opts.worktreePath);
  const dirs = new Map<string, boolean>();
  const plans = await inChunks(
    // Kept entries are not looked at at all (a sparse checkout's absent files stay recorded).
    candidates.filter((c) => c.entry === null || !keptAsRecorded(c.entry)),
    opts.signal,
    async (c) => ({ ...c, plan: planFor(c.entry, await lstatInside(top, unquoteC(c.quoted), dirs), opts.indexMtimeSec, fileMode) }),
  );

  await applyPlans(run, top, opts.scratchDir, plans);
}

/** Sets each planned entry of the private index: removals, then files and symlinks hashed as they are on disk. */
async function applyPlans(
  run: IndexGit,
  top: Buffer,
  scratchDir: string,
  plans: ReadonlyArray<{ quoted: string; entry: IndexEntry | null; plan: Plan }>,
): Promise<void> {
  const removals: string[] = [];
  const toHash: Array<{ quoted: string; mode: string; from: string }> = [];
  let linkDir: string | null = null;
  try {
    for (const p of plans) {
      if (p.plan.kind === 'remove') removals.push(`0 ${p.entry!.oid}\t${p.quoted}`);
      else if (p.plan.kind === 'file') toHash.push({ quoted: p.quoted, mode: p.plan.mode, from: p.quoted });
      else if (p.plan.kind === 'link') {
        // A symlink is recorded as its target's text: hashed from a file of ours holding exactly that.
        const target = await fs.readlink(Buffer.concat([top, Buffer.from('/'), unquoteC(p.quoted)]), { encoding: 'buffer' }).catch(() => null);
        if (target === null) {
          if (p.entry !== null) removals.push(`0 ${p.entry.oid}\t${p.quoted}`);
          continue;
        }
        linkDir ??= await fs.mkdtemp(path.join(scratchDir, 'overdeck-wip-links-'));
        const file = path.join(linkDir, String(toHash.length));
        await fs.writeFile(file, target);
        toHash.push({ quoted: p.quoted, mode: '120000', from: quoteC(Buffer.from(file)) });
      }
    }
    const additions: string[] = [];
    if (toHash.length > 0) {
      const hashed = (await run(['hash-object', '-w', '--no-filters', '--stdin-paths'], undefined, `${toHash.map((h) => h.from).join('\n')}\n`)).stdout
        .split('\n')
        .filter(Boolean);
      if (hashed.length !== toHash.length) throw new GitSideError('git_failed', 'git hash-object answered for a different number of files than it was given');
      toHash.forEach((h, i) => additions.push(`${h.mode} ${hashed[i]}\t${h.quoted}`));
    }
    // Removals first: a file replaced by a directory (or the reverse) is one removal and one addition.
    const lines = [...removals, ...additions];
    if (lines.length > 0) await run(['update-index', '--index-info'], undefined, `${lines.join('\n')}\n`);
  } finally {
    if (linkDir !== null) await fs.rm(linkDir, { recursive: true, force: true });
  }
}

export interface StageOthersOptions {
  worktreePath: string;
  scratchDir: string;
  /** paths as `ls-files` printed them (C-quoted when needed), none of them in the index */
  quoted: readonly string[];
  /** over this many bytes (file sizes and symlink targets together) nothing is staged */
  maxBytes: number;
  signal?: AbortSignal;
}

/**
 * Adds files that are not in the index (the ignored files of a snapshot, wip.ts) to a private
 * index as they are on disk, the same way as stageAsOnDisk: all of them, or none when together
 * they are larger than `maxBytes`. Answers their size; `staged` false when over the bound.
 */
export async function stageOthersAsOnDisk(run: IndexGit, opts: StageOthersOptions): Promise<{ staged: boolean; bytes: number; count: number }> {
  const fileModeOut = await run(['config', '--type=bool', '--get', 'core.fileMode'], [1]);
  const fileMode = fileModeOut.stdout.trim() !== 'false';
  const top = Buffer.from(opts.worktreePath);
  const dirs = new Map<string, boolean>();
  const seen = await inChunks(opts.quoted, opts.signal, async (quoted) => ({ quoted, st: await lstatInside(top, unquoteC(quoted), dirs) }));
  const present = seen.filter((x) => x.st !== null && (x.st.isFile() || x.st.isSymbolicLink()));
  const bytes = present.reduce((n, x) => n + Number(x.st!.size), 0);
  if (bytes > opts.maxBytes) return { staged: false, bytes, count: present.length };
  const plans = present.map((x) => ({ quoted: x.quoted, entry: null, plan: planFor(null, x.st, null, fileMode) }));
  await applyPlans(run, top, opts.scratchDir, plans);
  return { staged: true, bytes, count: present.length };
}
