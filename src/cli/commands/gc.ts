import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { GcOutput, GcRankedOutput, GcRankRow, RemovalResult } from '../../contract/removal';
import { git } from '../../git/exec';
import { ago } from '../age';

/**
 * `od-worktree gc --dry-run` (or `--rank`): the sweep's verdicts ranked by what removing each
 * worktree would lose (docs/cleanup.md#ranked-by-what-removal-would-lose). The removal itself is
 * still the rule's (src/domain/removal.ts, through cleanup.ts): this only measures and orders, so
 * `--apply` removes exactly the rows marked lossless, never one the ranking merely put first.
 */

/** The ranked output's schema is the contract's (src/contract/removal.ts), exported with the other --json outputs. */
export { GcRankRowSchema, GcRankedOutputSchema, type GcRankRow, type GcRankedOutput } from '../../contract/removal';

export interface Activity {
  sizeBytes: number;
  sizeCapped: boolean;
  lastActivityMs: number | null;
  unpushedCommits: number | null;
}

/** Entries walked per worktree at most: a size past it is shown as "at least". */
const WALK_CAP = 200_000;

/** Size and newest change of the worktree's files, read before anything is removed. Nothing is followed through a symlink. */
export async function activityOf(worktreePath: string): Promise<Activity> {
  let size = 0;
  let newest = 0;
  let seen = 0;
  const stack = [worktreePath];
  while (stack.length > 0 && seen < WALK_CAP) {
    const dir = stack.pop()!;
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (++seen > WALK_CAP) break;
      if (dir === worktreePath && e.name === '.git') continue;
      const p = path.join(dir, e.name);
      const st = await fs.lstat(p).catch(() => null);
      if (st === null) continue;
      newest = Math.max(newest, st.mtimeMs);
      if (e.isDirectory()) {
        // A nested repository is someone else's: not this worktree's size.
        if (
          await fs.lstat(path.join(p, '.git')).then(
            () => false,
            () => true,
          )
        )
          stack.push(p);
      } else size += st.size;
    }
  }
  const gitDir = (await git(['rev-parse', '--absolute-git-dir'], { cwd: worktreePath, okCodes: [128] })).stdout.trim();
  for (const f of ['index', path.join('logs', 'HEAD')]) {
    const st = gitDir ? await fs.stat(path.join(gitDir, f)).catch(() => null) : null;
    if (st) newest = Math.max(newest, st.mtimeMs);
  }
  // Remote-tracking branches, not configured remotes: a remote never fetched has nothing to compare with.
  const remotes = (await git(['for-each-ref', '--count=1', '--format=%(refname)', 'refs/remotes/'], { cwd: worktreePath, okCodes: [128] })).stdout.trim();
  let unpushed: number | null = null;
  if (remotes !== '') {
    const r = await git(['rev-list', '--count', 'HEAD', '--not', '--remotes'], { cwd: worktreePath, okCodes: [128] });
    unpushed = r.code === 0 ? Number(r.stdout.trim()) : null;
  }
  return { sizeBytes: size, sizeCapped: seen > WALK_CAP, lastActivityMs: newest > 0 ? newest : null, unpushedCommits: unpushed };
}

const HELD = new Set(['worktree_owned', 'owner_alive']);
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function lossText(r: RemovalResult, a: Activity, lossless: boolean): string {
  const f = r.facts;
  if (lossless) {
    const kept = f?.dirtyFiles.length ?? 0;
    return kept > 0 ? `nothing (${plural(kept, 'file')} snapshotted first)` : 'nothing';
  }
  if (r.refusals.some((x) => HELD.has(x.code))) return 'held by a session: never removed';
  if (f === null) return 'unknown (git failed)';
  const parts = [
    f.unlanded.length > 0 ? `${plural(f.unlanded.length, 'unlanded commit')}${f.unlandedTruncated ? '+' : ''}` : '',
    a.unpushedCommits ? `${a.unpushedCommits} unpushed` : '',
    f.dirtyFiles.length > 0 ? plural(f.dirtyFiles.length, 'dirty file') : '',
    f.unpreservable.length > 0 ? `${plural(f.unpreservable.length, 'nested repository', 'nested repositories')}` : '',
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : r.refusals.map((x) => x.code).join(', ');
}

/**
 * Lossless first, then by what would be lost: commits landed nowhere weigh most (they exist
 * nowhere else), then commits on no remote, then dirty files; ties by the longest idle, then the
 * largest (what frees most). Held worktrees come last: they are nobody's to remove.
 */
export function rankResults(results: readonly RemovalResult[], activity: readonly Activity[], now = Date.now()): GcRankRow[] {
  const rows = results.map((r, i) => {
    const a = activity[i] ?? { sizeBytes: 0, sizeCapped: false, lastActivityMs: null, unpushedCommits: null };
    const held = r.refusals.some((x) => HELD.has(x.code));
    const lossless = r.status === 'would_remove' || r.status === 'removed';
    const verdict: GcRankRow['verdict'] =
      r.status === 'removed' ? 'removed' : r.status === 'would_remove' ? 'remove' : r.status === 'failed' ? 'failed' : held ? 'held' : 'stays';
    return {
      row: {
        rank: 0,
        worktree: r.worktree,
        verdict,
        lossless,
        loses: lossText(r, a, lossless),
        dirtyFiles: r.facts?.dirtyFiles.length ?? 0,
        unlandedCommits: r.facts?.unlanded.length ?? 0,
        unlandedTruncated: r.facts?.unlandedTruncated ?? false,
        unpushedCommits: a.unpushedCommits,
        sizeBytes: a.sizeBytes,
        sizeCapped: a.sizeCapped,
        lastActivity: a.lastActivityMs === null ? null : new Date(a.lastActivityMs).toISOString(),
      },
      key: [
        held || r.status === 'failed' ? 1 : 0,
        lossless ? 0 : 1,
        (r.facts?.unlanded.length ?? 0) + (r.facts?.unlandedTruncated ? 1 : 0),
        a.unpushedCommits ?? 0,
        (r.facts?.dirtyFiles.length ?? 0) + (r.facts?.unpreservable.length ?? 0) * 1000,
        a.lastActivityMs === null ? -Infinity : a.lastActivityMs - now,
        -a.sizeBytes,
      ],
    };
  });
  rows.sort((x, y) => {
    for (let i = 0; i < x.key.length; i++) if (x.key[i] !== y.key[i]) return x.key[i]! - y.key[i]!;
    return x.row.worktree < y.row.worktree ? -1 : 1;
  });
  return rows.map((x, i) => ({ ...x.row, rank: i + 1 }));
}

export function humanSize(bytes: number, capped = false): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${capped ? '≥' : ''}${u === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

export function renderRanked(out: GcRankedOutput, repoRoot: string, serviceLine: string, now = Date.now()): string {
  const shown = (p: string) => (p.startsWith(`${repoRoot}/`) ? p.slice(repoRoot.length + 1) : p);
  const header = ['RANK', 'WORKTREE', 'VERDICT', 'LOSES', 'DIRTY', 'UNLANDED', 'UNPUSHED', 'SIZE', 'ACTIVE'];
  const body = out.ranking.map((r) => [
    String(r.rank),
    shown(r.worktree),
    r.verdict,
    r.loses,
    String(r.dirtyFiles),
    `${r.unlandedCommits}${r.unlandedTruncated ? '+' : ''}`,
    r.unpushedCommits === null ? '-' : String(r.unpushedCommits),
    humanSize(r.sizeBytes, r.sizeCapped),
    r.lastActivity === null ? '-' : ago(r.lastActivity, now),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const fmt = (row: string[]) =>
    row
      .map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const lines = [fmt(header), ...body.map(fmt)];
  if (out.ranking.length === 0) lines.push('(no worktree besides the main one)');
  const lossless = out.ranking.filter((r) => r.lossless).length;
  lines.push('', serviceLine);
  if (out.applied) lines.push(`applied: removed the ${plural(lossless, 'lossless worktree')}; the others were left as they are`);
  else lines.push(`dry run: nothing was changed; --apply removes the ${plural(lossless, 'lossless worktree')} (verdict remove), never another`);
  return lines.join('\n');
}

export function withRanking(out: GcOutput, activity: readonly Activity[]): GcRankedOutput {
  return { ...out, ranking: rankResults(out.results, activity) };
}
