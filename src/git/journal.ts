import { constants as fsConstants, promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { FullSha } from '../domain/identity';
import { writeFileAtomic } from './atomic';
import { git } from './exec';
import type { WorktreeDirs } from './repo';

/**
 * The worktree journal (docs/git-projection.md#the-journal): <private git dir>/overdeck.journal,
 * appended by the hooks (hooks/overdeck-hook.sh, src/gate/hooks.ts) and the agent-side git gate, one
 * `od1<TAB>kind=...<TAB>key=value...` line per fact. This module reads it from the offset the
 * shipper reached and turns a ref move into the commits it created. The host agent writes one kind
 * itself (appendJournalLine): `late_preserved`, an older tenure's late work it saved (src/git/late.ts).
 */

export const JOURNAL_FILE = 'overdeck.journal';
/** How far the shipper got: a byte offset, written after the rows are durable (so a crash re-ships, never skips). */
export const JOURNAL_OFFSET_FILE = 'overdeck.journal.shipped';
/** One read of a journal takes at most this much: shipping is bounded per pass. */
export const JOURNAL_READ_LIMIT = 256 * 1024;
/** Commits one ref move may attribute (a rebase of a long branch); the rest stay unattributed. */
export const MOVE_COMMIT_LIMIT = 1000;

const Value = z.string().max(4096);

/** Kinds the hooks and the git wrapper write: refused attempts (git_refusals). */
export const REFUSAL_KINDS = ['ref_refused', 'wrapper_refused', 'hook_refused'] as const;

export const JournalLineSchema = z.object({
  kind: z.enum(['commit', ...REFUSAL_KINDS, 'late_preserved']),
  ref: Value.default(''),
  old: Value.default(''),
  new: Value.default(''),
  session: Value.default(''),
  env_epoch: Value.default(''),
  ownership: Value.default(''),
  epoch: Value.default(''),
  owner: Value.default(''),
  state: Value.default(''),
  worker: Value.default(''),
  conversation: Value.default(''),
  code: Value.default(''),
  command: Value.default(''),
  /** late_preserved: the late commits, full ids joined by ':' (at most LATE_COMMITS_LISTED) */
  commits: Value.default(''),
  /** late_preserved: how many late commits the line does not list */
  more: Value.default(''),
  /** late_preserved: 1 when the snapshot holds uncommitted or untracked files, else 0 */
  uncommitted: Value.default(''),
});
export type JournalLine = z.infer<typeof JournalLineSchema> & { offset: number };
type JournalFields = z.input<typeof JournalLineSchema>;

/** Values as the hooks write them (od_jv): identifier characters only, so no TAB or newline ever. */
const JOURNAL_VALUE = /^[A-Za-z0-9._:@/+-]*$/;
/** A line stays under PIPE_BUF: one write(2) with O_APPEND, never interleaved with a hook's. */
export const JOURNAL_LINE_MAX = 4000;

/** One journal line (with its LF) in the hooks' format and key order; throws on a value the hooks would write as !invalid. */
export function formatJournalLine(fields: JournalFields): string {
  const parsed = JournalLineSchema.parse(fields);
  const parts = ['od1'];
  for (const key of Object.keys(JournalLineSchema.shape) as (keyof typeof parsed)[]) {
    const value = parsed[key];
    if (!JOURNAL_VALUE.test(value)) throw new Error(`journal value of ${key} is not journal-safe`);
    // The hooks always write the keys up to conversation; the rest only when set.
    if (value !== '' || ['code', 'command', 'commits', 'more', 'uncommitted'].indexOf(key) < 0) parts.push(`${key}=${value}`);
  }
  const line = `${parts.join('\t')}\n`;
  if (Buffer.byteLength(line) > JOURNAL_LINE_MAX) throw new Error('journal line too long');
  return line;
}

/**
 * Appends one line as the hooks do (O_APPEND, one write), never through a symlink planted where
 * the journal is: the private git dir is the worktree occupant's to write.
 */
export async function appendJournalLine(dirs: Pick<WorktreeDirs, 'privateDir'>, fields: JournalFields): Promise<void> {
  const line = formatJournalLine(fields);
  const { O_WRONLY, O_APPEND, O_CREAT, O_NOFOLLOW } = fsConstants;
  const fh = await fs.open(journalPath(dirs), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0o644);
  try {
    await fh.write(line);
  } finally {
    await fh.close();
  }
}

export interface JournalChunk {
  lines: JournalLine[];
  /** lines that did not parse (skipped, never retried) */
  skipped: number;
  /** offset after the last complete line read */
  end: number;
  /** more complete lines may follow (the read limit was reached) */
  more: boolean;
}

const journalPath = (dirs: Pick<WorktreeDirs, 'privateDir'>): string => path.join(dirs.privateDir, JOURNAL_FILE);

export async function readShippedOffset(dirs: Pick<WorktreeDirs, 'privateDir'>): Promise<number> {
  try {
    const n = Number((await fs.readFile(path.join(dirs.privateDir, JOURNAL_OFFSET_FILE), 'utf8')).trim());
    return Number.isSafeInteger(n) && n >= 0 ? n : 0;
  } catch {
    return 0;
  }
}

export async function writeShippedOffset(dirs: Pick<WorktreeDirs, 'privateDir'>, offset: number): Promise<void> {
  await writeFileAtomic(path.join(dirs.privateDir, JOURNAL_OFFSET_FILE), `${offset}\n`);
}

/** Parses one line (without its LF); null when it is not an od1 line. */
export function parseJournalLine(text: string, offset: number): JournalLine | null {
  const fields = text.split('\t');
  if (fields[0] !== 'od1' || !fields[1]?.startsWith('kind=')) return null;
  const obj: Record<string, string> = {};
  for (const f of fields.slice(1)) {
    const eq = f.indexOf('=');
    if (eq <= 0) continue;
    const key = f.slice(0, eq);
    if (!(key in obj)) obj[key] = f.slice(eq + 1);
  }
  const parsed = JournalLineSchema.safeParse(obj);
  return parsed.success ? { ...parsed.data, offset } : null;
}

/** Complete lines from `from` on, at most JOURNAL_READ_LIMIT bytes; a line still being written is left for later. */
export async function readJournal(dirs: Pick<WorktreeDirs, 'privateDir'>, from: number): Promise<JournalChunk> {
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(journalPath(dirs), 'r');
  } catch {
    return { lines: [], skipped: 0, end: from, more: false };
  }
  try {
    const buf = Buffer.alloc(JOURNAL_READ_LIMIT);
    const { bytesRead } = await fh.read(buf, 0, JOURNAL_READ_LIMIT, from);
    const lastLf = buf.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (lastLf < 0) return { lines: [], skipped: 0, end: from, more: false };
    const lines: JournalLine[] = [];
    let skipped = 0;
    let at = 0;
    while (at <= lastLf) {
      const lf = buf.indexOf(0x0a, at);
      const line = parseJournalLine(buf.subarray(at, lf).toString('utf8'), from + at);
      if (line) lines.push(line);
      else skipped++;
      at = lf + 1;
    }
    return { lines, skipped, end: from + lastLf + 1, more: bytesRead === JOURNAL_READ_LIMIT };
  } finally {
    await fh.close();
  }
}

/** A reflog message of a move that wrote a new commit (the move's new head), not one onto existing history. */
const CREATES =
  /^(commit( \([a-z -]+\))?|cherry-pick|revert|am|(pull --rebase|rebase( -i| -m)?) \((pick|reword|edit|squash|fixup|continue)\)): |^(merge|pull)\b[^:]*: Merge made by/;
/** How much of a reflog's end is read (its newest entries; a journal is shipped soon after). */
const REFLOG_TAIL = 4 * 1024 * 1024;

/** "<old> <new>" -> the reflog message of that move, from HEAD's and the ref's reflogs (plain files: no git). */
export async function reflogMessages(dirs: WorktreeDirs, refs: Iterable<string>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [move, entry] of await reflogEntries(dirs, refs)) out.set(move, entry.message);
  return out;
}

export interface ReflogEntry {
  message: string;
  /** when git wrote the entry, in seconds since the epoch (this host's clock); null when the entry has no readable time */
  at: number | null;
}

/** "<old> <new>" -> that move's reflog entry, from HEAD's and the ref's reflogs (plain files: no git); the later entry of a repeated move. */
export async function reflogEntries(dirs: WorktreeDirs, refs: Iterable<string>): Promise<Map<string, ReflogEntry>> {
  const out = new Map<string, ReflogEntry>();
  const files = new Set([path.join(dirs.privateDir, 'logs', 'HEAD')]);
  for (const ref of refs) if (ref.startsWith('refs/') && !ref.includes('..')) files.add(path.join(dirs.commonDir, 'logs', ref));
  for (const file of files) {
    let text: string;
    try {
      const fh = await fs.open(file, 'r');
      try {
        const size = (await fh.stat()).size;
        const start = Math.max(0, size - REFLOG_TAIL);
        const buf = Buffer.alloc(size - start);
        await fh.read(buf, 0, buf.length, start);
        text = buf.toString('utf8');
      } finally {
        await fh.close();
      }
    } catch {
      continue;
    }
    for (const entry of text.split('\n')) {
      const tab = entry.indexOf('\t');
      const [o, n] = entry.split(' ', 2);
      if (tab < 0 || !o || !n) continue;
      // "<old> <new> <name> <<email>> <seconds> <zone>\t<message>"
      const when = /> (\d{1,12}) [+-]\d{4}$/.exec(entry.slice(0, tab));
      out.set(`${o} ${n}`, { message: entry.slice(tab + 1), at: when ? Number(when[1]) : null });
    }
  }
  return out;
}

/**
 * The commits a ref move created, oldest first. The move's reflog message says what made it: a
 * commit, amend, merge, cherry-pick, revert, am or rebase step wrote exactly its new head; a reset,
 * checkout, fast-forward (pull, merge) or branch creation wrote nothing. So a commit someone else
 * made and this session only moved onto is never attributed to it. Without a reflog entry
 * (core.logAllRefUpdates off) the commits reachable from `new`, not from `old` and not from any
 * other branch, remote-tracking branch or tag; a commit already on another branch by then (a
 * landing came first) is left unknown rather than guessed.
 */
export async function commitsOfMove(dirs: WorktreeDirs, line: Pick<JournalLine, 'old' | 'new' | 'ref'>, reflog?: Map<string, string>): Promise<string[]> {
  if (!FullSha.safeParse(line.new).success || /^0+$/.test(line.new)) return [];
  const message = reflog?.get(`${line.old} ${line.new}`);
  if (message !== undefined) {
    if (!CREATES.test(message)) return [];
    // The reflog is a plain file: its word counts only where the graph agrees. Otherwise the move
    // is judged as if it had no reflog entry.
    if (await madeOnto(dirs, line.old, line.new)) return [line.new];
  }
  const args = ['rev-list', '--reverse', '--topo-order', `--max-count=${MOVE_COMMIT_LIMIT}`, line.new];
  if (FullSha.safeParse(line.old).success && !/^0+$/.test(line.old)) args.push(`^${line.old}`);
  args.push('--not');
  if (line.ref.startsWith('refs/heads/')) args.push(`--exclude=${line.ref.slice('refs/heads/'.length)}`);
  args.push('--branches', '--remotes', '--tags');
  const res = await git(args, { cwd: dirs.worktreePath, env: { GIT_DIR: dirs.commonDir }, okCodes: [128] });
  if (res.code !== 0) return []; // the objects are gone (gc after a reset): nothing to attribute
  return res.stdout.split('\n').filter((s) => FullSha.safeParse(s).success);
}

const ZERO = /^0+$/;

/**
 * Whether `to` can be a commit written on top of `from`, as a creating reflog message says: its
 * first parent is `from` (commit, merge, cherry-pick, revert, am, a rebase step) or `from`'s first
 * parent (amend, squash, fixup); a root commit when `from` is the null id.
 */
async function madeOnto(dirs: WorktreeDirs, from: string, to: string): Promise<boolean> {
  const parents = await firstParents(dirs, to);
  if (parents === null) return false;
  if (!FullSha.safeParse(from).success || ZERO.test(from)) return parents.length === 0;
  if (parents[0] === from) return true;
  const before = await firstParents(dirs, from);
  return before !== null && before[0] === parents[0];
}

async function firstParents(dirs: WorktreeDirs, sha: string): Promise<string[] | null> {
  const res = await git(['rev-list', '--parents', '--max-count=1', sha], { cwd: dirs.worktreePath, env: { GIT_DIR: dirs.commonDir }, okCodes: [128] });
  const [self, ...parents] = res.stdout.trim().split(' ');
  return res.code === 0 && self === sha ? parents : null;
}

/**
 * Which journal file is there now (`device:inode:birth`, '' when there is none yet) and its size:
 * what a read of it from here on can find. The birth time tells a recreated worktree's new journal
 * from the old one when the file system reuses the inode (0 where it keeps no birth time).
 */
export async function journalStat(dirs: Pick<WorktreeDirs, 'privateDir'>): Promise<{ inode: string; size: number }> {
  try {
    const st = await fs.stat(journalPath(dirs), { bigint: true });
    return { inode: `${st.dev}:${st.ino}:${st.birthtimeNs}`, size: Number(st.size) };
  } catch {
    return { inode: '', size: 0 };
  }
}
