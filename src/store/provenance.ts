import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Pool } from 'pg';
import { simpleGit, type SimpleGit } from 'simple-git';
import { z } from 'zod';
import { LandingReceiptSchema, type LandingReceipt } from '../domain/events';
import { AgentWorkerRefSchema, IsoTime } from '../domain/identity';
import { CommitIdSchema, headMatch } from './lookups';

/**
 * Spec §11 / §17.5: landed commit -> source branch/worktree -> execution session -> worker ->
 * conversation, from the landing receipts alone. Commit messages, trailers and notes are never
 * read (spec §11: the control-plane receipt is canonical). Git is used only to place a commit
 * relative to the receipts' landed heads:
 *
 *  - a landed head is its receipt's own commit ('landed_head');
 *  - a merge landing L (two or more parents) covers `git rev-list L ^L^1`: L and the merged commits;
 *  - a first-parent-linear landing L (squash, rebase, fast-forward) covers the commits on L's
 *    first-parent line from L down to, not including, the nearest boundary: the previous receipt's
 *    landed head, a merge commit (another landing, or history we hold no receipt for), or the
 *    source branch's fork point (merge-base of L and the source head, when the source head is not
 *    already on that line). With no boundary at all the range is L alone: history we cannot bound
 *    is never attributed;
 *  - the source side: while the source head's objects exist, `git rev-list S ^L^1` (the branch's
 *    own commits, e.g. the commits a squash folded away, or the originals of a rebase).
 *
 * When several landings contain a commit, the earliest landing wins: it is the one that brought it.
 */

export const ProvenanceInputSchema = z.strictObject({ repoPath: z.string().min(1).max(4096), sha: CommitIdSchema });
export type ProvenanceInput = z.input<typeof ProvenanceInputSchema>;

export const ProvenanceSchema = z.strictObject({
  commit: z.string(),
  landedHead: z.string(),
  landedBranch: z.string(),
  landedAt: IsoTime,
  sourceBranch: z.string(),
  sourceHead: z.string(),
  worktreePath: z.string(),
  executionSessionId: z.string().nullable(),
  worker: AgentWorkerRefSchema.nullable(),
  conversation: z.strictObject({ conversationId: z.string(), conversationUrl: z.string(), title: z.string().nullable() }).nullable(),
  ownershipId: z.string(),
  via: z.enum(['landed_head', 'range']),
});
export type Provenance = z.infer<typeof ProvenanceSchema>;

/** How far back a first-parent line is walked; landings older than this are not placed by range. */
export const FIRST_PARENT_WALK_LIMIT = 100_000;

/** Resolves `sha` (full or >= 7 hex digits) in the repository at repoPath; null when no receipt accounts for it. */
export async function provenance(pool: Pool, repoPath: string, sha: string): Promise<Provenance | null> {
  const q = ProvenanceInputSchema.parse({ repoPath, sha });
  const repo = await openRepo(q.repoPath);
  const full = repo ? await repo.graph.resolve(q.sha) : null;

  // (a) A landed head. Without the repository (deleted, or the commit gone) an abbreviation must still name one head.
  const direct = await receiptsByHead(pool, full ?? q.sha, repo?.roots ?? []);
  const heads = new Set(direct.map((r) => r.receipt.landedHead));
  if (direct.length > 0 && (full !== null || heads.size === 1)) return toProvenance(full ?? direct[0]!.receipt.landedHead, direct[0]!.receipt, 'landed_head');
  if (!repo || !full) return null;

  // (b) Inside a landing's range, among this repository's receipts.
  const found = await locate(repo.graph, full, await receiptsOfRepo(pool, repo.roots));
  return found ? toProvenance(full, found.receipt, found.via) : null;
}

// --- receipts ------------------------------------------------------------------------------------

interface StoredReceipt {
  /** position in landing order (landed_at, seq, ownership id): lower is earlier */
  order: number;
  receipt: LandingReceipt;
}

const RECEIPT_ORDER = 'landed_at, seq, ownership_id';

async function receiptsByHead(pool: Pool, head: string, roots: string[]): Promise<StoredReceipt[]> {
  const res = await pool.query<{ receipt: unknown }>(
    `SELECT receipt FROM landing_receipts WHERE ${headMatch('$1')} ORDER BY (repo_root = ANY($2)) DESC, ${RECEIPT_ORDER} LIMIT 50`,
    [head, roots],
  );
  return res.rows.map((r, i) => ({ order: i, receipt: LandingReceiptSchema.parse(r.receipt) }));
}

async function receiptsOfRepo(pool: Pool, roots: string[]): Promise<StoredReceipt[]> {
  const res = await pool.query<{ receipt: unknown }>(`SELECT receipt FROM landing_receipts WHERE repo_root = ANY($1) ORDER BY ${RECEIPT_ORDER}`, [roots]);
  return res.rows.map((r, i) => ({ order: i, receipt: LandingReceiptSchema.parse(r.receipt) }));
}

function toProvenance(commit: string, r: LandingReceipt, via: Provenance['via']): Provenance {
  return ProvenanceSchema.parse({
    commit,
    landedHead: r.landedHead,
    landedBranch: r.landedBranch,
    landedAt: r.landedAt,
    sourceBranch: r.sourceBranch,
    sourceHead: r.sourceHead,
    worktreePath: r.worktreePath,
    executionSessionId: r.executionSessionId,
    worker: r.worker,
    conversation: r.conversation
      ? { conversationId: r.conversation.conversationId, conversationUrl: r.conversation.conversationUrl, title: r.conversation.title ?? null }
      : null,
    ownershipId: r.ownershipId,
    via,
  });
}

// --- git -----------------------------------------------------------------------------------------

interface Repo {
  graph: CommitGraph;
  /** spellings under which receipts may name this repository: the path given and its main worktree */
  roots: string[];
}

async function openRepo(repoPath: string): Promise<Repo | null> {
  let real: string;
  try {
    real = await fs.realpath(repoPath);
  } catch {
    return null;
  }
  let git: SimpleGit;
  let common: string;
  try {
    // simple-git drops ambient GIT_* variables (GIT_DIR...) itself, so we read the repository asked for.
    git = simpleGit({ baseDir: real, maxConcurrentProcesses: 4 });
    common = (await git.raw(['rev-parse', '--path-format=absolute', '--git-common-dir'])).trim();
  } catch {
    return null; // not a directory, or not a repository
  }
  const roots = new Set([real]);
  // A linked worktree or a subdirectory was given: receipts name the main worktree (the ownership's repoRoot).
  if (path.basename(common) === '.git') roots.add(await fs.realpath(path.dirname(common)).catch(() => path.dirname(common)));
  return { graph: new CommitGraph(git), roots: [...roots] };
}

/** The few commit-graph questions provenance asks, with answers cached for one request. */
class CommitGraph {
  private readonly parents = new Map<string, string[]>();
  constructor(private readonly git: SimpleGit) {}

  /** Full id of a commit, or null if the repository does not have it (or the abbreviation is ambiguous). */
  async resolve(id: string): Promise<string | null> {
    try {
      const out = (await this.git.raw(['rev-parse', '--verify', '--quiet', `${id}^{commit}`])).trim();
      return /^[0-9a-f]{40,64}$/.test(out) ? out : null;
    } catch {
      return null; // git reports an ambiguous abbreviation as an error
    }
  }

  /** Full ids of those of `ids` the repository has, keyed by the id as given. */
  async resolveAll(ids: string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const unique = [...new Set(ids)];
    const fullLength = unique.filter((s) => s.length >= 40);
    const oneByOne = unique.filter((x) => x.length < 40);
    for (let i = 0; i < fullLength.length; i += 500) {
      const chunk = fullLength.slice(i, i + 500);
      try {
        const res = await this.git.raw(['rev-list', '--no-walk=unsorted', '--ignore-missing', ...chunk]);
        const have = new Set(res.split('\n').filter(Boolean));
        for (const s of chunk) if (have.has(s)) out.set(s, s);
      } catch {
        oneByOne.push(...chunk); // an id naming a non-commit object fails the whole batch
      }
    }
    for (const s of oneByOne) {
      const full = await this.resolve(s);
      if (full) out.set(s, full);
    }
    return out;
  }

  /** The first-parent line from `tip`, newest first, with every commit's parents. */
  async firstParentLine(tip: string): Promise<Line> {
    const res = await this.git.raw(['rev-list', '--first-parent', '--parents', `--max-count=${FIRST_PARENT_WALK_LIMIT}`, tip]);
    const line: Line = { shas: [], parents: [], pos: new Map() };
    for (const text of res.split('\n')) {
      const [sha, ...ps] = text.trim().split(' ');
      if (!sha) continue;
      this.parents.set(sha, ps);
      line.pos.set(sha, line.shas.length);
      line.shas.push(sha);
      line.parents.push(ps);
    }
    return line;
  }

  async parentsOf(sha: string): Promise<string[]> {
    const known = this.parents.get(sha);
    if (known) return known;
    const [, ...ps] = (await this.git.raw(['rev-list', '--parents', '--max-count=1', sha])).trim().split(' ');
    this.parents.set(sha, ps);
    return ps;
  }

  /** Whether `a` is reachable from `b` (a == b counts): `rev-list a ^b` is then empty. */
  async isAncestor(a: string, b: string): Promise<boolean> {
    return (await this.git.raw(['rev-list', '--max-count=1', a, `^${b}`])).trim() === '';
  }

  async mergeBase(a: string, b: string): Promise<string | null> {
    const out = (await this.git.raw(['merge-base', a, b])).trim();
    return out === '' ? null : out;
  }
}

// --- placing a commit in the landings' ranges ------------------------------------------------------

interface Landing {
  order: number;
  receipt: LandingReceipt;
  /** full ids in this repository */
  head: string;
  source: string | null;
}

type Match = { receipt: LandingReceipt; order: number; via: Provenance['via'] };

interface Line {
  shas: string[];
  parents: string[][];
  pos: Map<string, number>;
}

async function locate(graph: CommitGraph, commit: string, stored: StoredReceipt[]): Promise<Match | null> {
  const ids = await graph.resolveAll(stored.flatMap((s) => [s.receipt.landedHead, s.receipt.sourceHead]));
  const landings: Landing[] = [];
  for (const s of stored) {
    const head = ids.get(s.receipt.landedHead);
    if (head) landings.push({ order: s.order, receipt: s.receipt, head, source: ids.get(s.receipt.sourceHead) ?? null });
  }
  const own = landings.find((l) => l.head === commit);
  if (own) return { receipt: own.receipt, order: own.order, via: 'landed_head' };

  const matches: Landing[] = [];
  /** Landings whose first parent already reaches the commit: their source side cannot hold it. */
  const after = new Set<Landing>();
  // One first-parent walk per landed branch, from its latest landing (receipts are self-sufficient:
  // the branch ref may have moved on, been renamed or deleted since).
  const byBranch = new Map<string, Landing[]>();
  for (const l of landings) {
    const group = byBranch.get(l.receipt.landedBranch);
    if (group) group.push(l);
    else byBranch.set(l.receipt.landedBranch, [l]);
  }
  for (const group of byBranch.values()) {
    const line = await graph.firstParentLine(group[group.length - 1]!.head);
    const found = await locateOnLine(graph, commit, line, landings, after);
    if (found) matches.push(found);
  }
  const earliest = matches.sort((a, b) => a.order - b.order)[0];
  // The source side, for landings earlier than the match found so far (the earliest landing wins).
  for (const l of landings) {
    if (earliest && l.order >= earliest.order) break;
    if (!after.has(l) && (await inSourceRange(graph, commit, l))) return { receipt: l.receipt, order: l.order, via: 'range' };
  }
  return earliest ? { receipt: earliest.receipt, order: earliest.order, via: 'range' } : null;
}

/** The landing (among those on this first-parent line) whose landed range holds `commit`, if any. */
async function locateOnLine(graph: CommitGraph, commit: string, line: Line, landings: Landing[], after: Set<Landing>): Promise<Landing | null> {
  // Landings on this line, newest (position 0) first.
  const onLine = landings
    .filter((l) => line.pos.has(l.head))
    .map((l) => ({ l, at: line.pos.get(l.head)! }))
    .sort((a, b) => a.at - b.at);
  const p = line.pos.get(commit);
  if (p !== undefined) {
    for (const x of onLine) if (x.at < p) after.add(x.l);
    // On the line: only the nearest landing above it can hold it, and only a linear one (below a
    // merge landing's head is its first parent's history).
    const above = onLine.filter((x) => x.at < p).pop();
    if (!above || line.parents[above.at]!.length !== 1) return null;
    const boundary = await linearBoundary(graph, line, above.at, above.l, onLine.map((x) => x.at));
    return boundary !== null && p < boundary ? above.l : null;
  }
  // Off the line: merged in. Reachability only grows along the line, so the earliest landing whose
  // head reaches the commit is found by bisection; it holds the commit only if it is the merge that
  // brought it in (its first parent does not reach it).
  const oldestFirst = [...onLine].reverse();
  let lo = 0;
  let hi = oldestFirst.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (await graph.isAncestor(commit, oldestFirst[mid]!.l.head)) hi = mid;
    else lo = mid + 1;
  }
  const first = oldestFirst[lo];
  if (!first) return null;
  const parents = line.parents[first.at]!;
  return parents.length >= 2 && !(await graph.isAncestor(commit, parents[0]!)) ? first.l : null;
}

/** Position (exclusive) where a linear landing's range ends on the line, or null when nothing bounds it. */
async function linearBoundary(graph: CommitGraph, line: Line, at: number, landing: Landing, landingPositions: number[]): Promise<number | null> {
  const candidates = landingPositions.filter((x) => x > at);
  const merge = line.parents.findIndex((ps, i) => i > at && ps.length >= 2);
  if (merge !== -1) candidates.push(merge);
  if (landing.source && landing.source !== landing.head) {
    const base = await graph.mergeBase(landing.head, landing.source);
    // A source head already on the line (fast-forward) says nothing about where the branch began.
    const fork = base && base !== landing.source ? line.pos.get(base) : undefined;
    if (fork !== undefined && fork > at) candidates.push(fork);
  }
  return candidates.length > 0 ? Math.min(...candidates) : null;
}

/** `commit` is one of the source branch's own commits: reachable from S, not from L's first parent. */
async function inSourceRange(graph: CommitGraph, commit: string, l: Landing): Promise<boolean> {
  if (!l.source || l.source === l.head) return false;
  const parents = await graph.parentsOf(l.head);
  // A merge landing's source side lies inside its landed range, already examined.
  if (parents.length >= 2) return false;
  if (!(await graph.isAncestor(commit, l.source))) return false;
  const [firstParent] = parents;
  return firstParent === undefined || !(await graph.isAncestor(commit, firstParent));
}

// --- rendering -----------------------------------------------------------------------------------

/** Label/value rows for people (spec §12): a missing link reads `unknown`, never a guess. */
export function provenanceFields(p: Provenance): { label: string; value: string }[] {
  const v = (x: string | null | undefined) => (x === null || x === undefined || x === '' ? 'unknown' : x);
  return [
    { label: 'Commit', value: p.commit },
    { label: 'Matched', value: p.via === 'landed_head' ? 'landed head' : 'inside the landed range' },
    { label: 'Landed head', value: p.landedHead },
    { label: 'Landed branch', value: p.landedBranch },
    { label: 'Landed at', value: p.landedAt },
    { label: 'Source branch', value: p.sourceBranch },
    { label: 'Source head', value: p.sourceHead },
    { label: 'Worktree', value: v(p.worktreePath) },
    { label: 'Session', value: v(p.executionSessionId) },
    { label: 'Worker', value: v(p.worker?.workerId) },
    { label: 'Run', value: v(p.worker?.runId) },
    { label: 'Conversation', value: v(p.conversation?.title) },
    { label: 'Conversation URL', value: v(p.conversation?.conversationUrl) },
    { label: 'Ownership', value: p.ownershipId },
  ];
}

export function renderProvenance(p: Provenance): string {
  const rows = provenanceFields(p);
  const width = Math.max(...rows.map((r) => r.label.length)) + 2;
  return rows.map((r) => `${`${r.label}:`.padEnd(width)}${r.value}`).join('\n');
}
