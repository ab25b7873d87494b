import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Pool } from '../store/db';
import type { LandingReceipt } from '../domain/events';
import { git as runGit } from '../git/exec';
import { identifyWorktree } from '../git/repo';
import { authorsOf } from '../store/attributions';
import { describeReport, type Author } from '../store/attributions-schemas';
import { landedCommitsOfHead, landedCommitsOfReceipt, landingsOfPatchId, landingsOfPreLandCommit, recordedLandingsOf } from '../store/landing-commits';
import { landerPrincipalOf, receiptOf, receiptsByHead, receiptsOfRepo, type StoredReceipt } from '../store/provenance-rows';
import { recordLandedCommits } from './landing-commits';
import { RepoGit } from '../git/repo-git';
import { ProvenanceInputSchema, ProvenanceSchema, type Provenance } from '../contract/provenance';

/**
 * Provenance (docs/operations.md#landing-and-provenance): landed commit -> source branch/worktree -> execution session -> worker ->
 * conversation, from the landing receipts alone. Commit messages, trailers and notes are never
 * read (the control-plane receipt is canonical, docs/events.md#landing-receipts). Git is used only to place a commit
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

export { ProvenanceInputSchema, ProvenanceSchema, type Provenance, type ProvenanceInput } from '../contract/provenance';

/** How far back a first-parent line is walked; landings older than this are not placed by range. */
export const FIRST_PARENT_WALK_LIMIT = 100_000;

/** Resolves `sha` (full or >= 7 hex digits) in the repository at repoPath; null when no receipt accounts for it. */
export async function provenance(pool: Pool, repoPath: string, sha: string): Promise<Provenance | null> {
  const q = ProvenanceInputSchema.parse({ repoPath, sha });
  const repo = await openRepo(q.repoPath);
  const full = repo ? await repo.graph.resolve(q.sha) : null;
  const roots = repo?.roots ?? [];

  // (a) A landed head. Without the repository (deleted, or the commit gone) an abbreviation must still name one head.
  const direct = await receiptsByHead(pool, full ?? q.sha, roots);
  const heads = new Set(direct.map((r) => r.receipt.landedHead));
  if (direct.length > 0 && (full !== null || heads.size === 1))
    return withAuthors(pool, repo, full ?? direct[0]!.receipt.landedHead, direct[0]!, 'landed_head');

  const commit = full ?? (/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(q.sha) ? q.sha : null);
  // (b) One of the pre-land commits a landing recorded (the earliest landing first): a merged,
  // fast-forwarded or squashed-away commit, also after its branch, worktree and objects are gone.
  // Two queries, no walk: provenance stays fast however many receipts the repository has.
  if (commit) {
    for (const l of await landingsOfPreLandCommit(pool, roots, commit)) {
      const stored = await receiptOf(pool, l.ownershipId, l.landedHead);
      if (stored) return withAuthors(pool, repo, commit, stored, full !== null ? 'range' : 'pre_land');
    }
  }
  if (repo && full) {
    // (c) A copy of exactly one landing's pre-land commit (rebase, cherry-pick) inside that landing.
    const pid = (await new RepoGit(repo.cwd).patchIds([full])).get(full);
    if (pid !== undefined) {
      const same = await landingsOfPatchId(pool, pid, repo.roots);
      const only = same.length === 1 ? same[0]! : null;
      if (only && (await repo.graph.isAncestor(full, only.landedHead).catch(() => false))) {
        const stored = await receiptOf(pool, only.ownershipId, only.landedHead);
        if (stored) return withAuthors(pool, repo, full, stored, 'range');
      }
    }
    // (d) Inside a landing's range, among this repository's receipts (landings recorded before their commits were).
    const all = await receiptsOfRepo(pool, repo.roots);
    // Landings whose pre-land commits are recorded: (b) already looked at their source side.
    const covered = await recordedLandingsOf(pool, repo.roots);
    const found = await locate(repo.graph, full, all, covered);
    if (found) return withAuthors(pool, repo, full, all[found.order]!, found.via);
  }
  return null;
}

/** Authors and lander of `commit` under the landing `s`, placed as `via`. */
async function withAuthors(pool: Pool, repo: Repo | null, commit: string, s: StoredReceipt, via: Provenance['via']): Promise<Provenance> {
  const r = s.receipt;
  let rows = await landedCommitsOfReceipt(pool, r.ownershipId, r.landedHead);
  if (rows.length === 0 && repo) {
    // A receipt from before the landed commits were recorded, or whose host agent has not got to it yet.
    await recordLandedCommits(pool, repo.cwd, repo.roots[repo.roots.length - 1]!, r).catch(() => 0);
    rows = await landedCommitsOfReceipt(pool, r.ownershipId, r.landedHead);
  }
  const roots = repo?.roots ?? [];
  // Other ownerships landed in the same commit (a merge-queue batch): their pre-land commits count too.
  const together = (await receiptsByHead(pool, r.landedHead, roots)).filter((x) => x.receipt.landedHead === r.landedHead);
  if (new Set(together.map((x) => x.receipt.ownershipId)).size > 1) {
    if (repo) for (const other of together) await recordLandedCommits(pool, repo.cwd, repo.roots[repo.roots.length - 1]!, other.receipt).catch(() => 0);
    rows = await landedCommitsOfHead(pool, r.landedHead);
  }
  let commits: string[];
  if (via === 'pre_land' || rows.some((x) => x.commit === commit)) commits = [commit];
  else {
    // A copy on the landed branch (rebase, cherry-pick): its original is the one pre-land commit
    // with the same patch-id. Otherwise the landed head of a squash or a merge: all of them.
    const pid = repo ? (await new RepoGit(repo.cwd).patchIds([commit])).get(commit) : undefined;
    const original = pid === undefined ? [] : rows.filter((x) => x.patchId === pid);
    if (original.length === 1) commits = [original[0]!.commit];
    else if (commit === r.landedHead) commits = rows.map((x) => x.commit);
    else commits = [commit];
  }
  const authors: Author[] = await authorsOf(pool, roots, commits);
  return toProvenance(commit, s, via, authors, await landerOf(pool, r));
}

async function landerOf(pool: Pool, r: LandingReceipt): Promise<Provenance['lander']> {
  // The event's actor names the principal as "kind:id" (src/domain/decide.ts).
  const p = await landerPrincipalOf(pool, r.ownershipId, r.landedHead);
  const colon = p === null ? -1 : p.indexOf(':');
  const principal = p !== null && colon > 0 ? { kind: p.slice(0, colon), id: p.slice(colon + 1) } : null;
  return { principal, executionSessionId: r.executionSessionId };
}

// --- receipts ------------------------------------------------------------------------------------

function toProvenance(commit: string, s: StoredReceipt, via: Provenance['via'], authors: Author[], lander: Provenance['lander']): Provenance {
  const r = s.receipt;
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
    receiptKind: s.kind,
    inferredMethod: s.method,
    authors,
    lander,
  });
}

// --- git -----------------------------------------------------------------------------------------

interface Repo {
  graph: CommitGraph;
  /** a directory of the repository to run git in */
  cwd: string;
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
  // The service's git (exec.ts): no ambient GIT_* variable redirects it, nothing of the repository runs.
  const git = new PlainGit(real);
  let common: string;
  try {
    common = (await git.raw(['rev-parse', '--path-format=absolute', '--git-common-dir'])).trim();
  } catch {
    return null; // not a directory, or not a repository
  }
  const roots = new Set([real]);
  // A linked worktree or a subdirectory was given: receipts name the repository root the service
  // derived at bind (git/repo.ts identifyWorktree, the one derivation).
  const top = (await git.raw(['rev-parse', '--show-toplevel']).catch(() => '')).trim();
  const id = top ? await identifyWorktree(top).catch(() => null) : null;
  if (id) roots.add(id.repoRoot);
  else if (path.basename(common) === '.git') roots.add(await fs.realpath(path.dirname(common)).catch(() => path.dirname(common)));
  return { graph: new CommitGraph(git), cwd: real, roots: [...roots] };
}

/** git's stdout, or a rejection when it exits non-zero. */
class PlainGit {
  constructor(private readonly cwd: string) {}
  async raw(args: string[]): Promise<string> {
    return (await runGit(args, { cwd: this.cwd })).stdout;
  }
}

/** The few commit-graph questions provenance asks, with answers cached for one request. */
class CommitGraph {
  private readonly parents = new Map<string, string[]>();
  constructor(private readonly git: PlainGit) {}

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

async function locate(graph: CommitGraph, commit: string, stored: StoredReceipt[], covered: ReadonlySet<string> = new Set()): Promise<Match | null> {
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
    if (covered.has(`${l.receipt.ownershipId} ${l.receipt.landedHead}`)) continue;
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
    const boundary = await linearBoundary(
      graph,
      line,
      above.at,
      above.l,
      onLine.map((x) => x.at),
    );
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

/** Label/value rows for people (docs/cli.md#who): a missing link reads `unknown`, never a guess. The lander and the authors are told apart. */
export function provenanceFields(p: Provenance): { label: string; value: string }[] {
  const v = (x: string | null | undefined) => (x === null || x === undefined || x === '' ? 'unknown' : x);
  const matched = p.via === 'landed_head' ? 'landed head' : p.via === 'range' ? 'inside the landed range' : 'a pre-land commit this landing brought';
  const rows = [
    { label: 'Commit', value: p.commit },
    { label: 'Matched', value: matched },
    ...(p.receiptKind === undefined
      ? []
      : [{ label: 'Receipt', value: p.receiptKind === 'inferred' ? `inferred by landings scan (${v(p.inferredMethod)})` : 'sent by the landing controller' }]),
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
  if (p.lander) {
    const who = p.lander.principal ? `${p.lander.principal.kind} ${p.lander.principal.id}` : 'unknown';
    rows.push({ label: 'Landed by', value: `${who}, for owner session ${v(p.lander.executionSessionId)}` });
  }
  if (p.authors) {
    const sessions = new Set(p.authors.map((a) => a.executionSessionId ?? 'unknown'));
    rows.push({
      label: 'Authors',
      value:
        p.authors.length === 0
          ? "unknown (the landing's commits are not known)"
          : `${p.authors.length} commit${p.authors.length === 1 ? '' : 's'}, ${sessions.size} session${sessions.size === 1 ? '' : 's'}, oldest first`,
    });
    p.authors.forEach((a, i) => {
      const conv = a.conversation ? (a.conversation.title ?? a.conversation.conversationUrl ?? a.conversation.conversationId) : null;
      const how =
        a.via === 'owner_at_time'
          ? ' (no session id: the owner at the time)'
          : a.via === 'hold' && a.hold
            ? ` (child under hold ${a.hold.holdId} of parent session ${a.hold.parentExecutionSessionId})`
            : '';
      // Not attributed: the status says why, and each report what it claimed against the record.
      const unsettled = a.status !== undefined && a.status !== 'attributed' ? a.status : null;
      rows.push({
        label: '',
        value:
          a.via === 'unknown'
            ? `${i + 1}. ${a.commit.slice(0, 12)} ${unsettled ?? 'unknown'}`
            : `${i + 1}. ${a.commit.slice(0, 12)} session ${v(a.executionSessionId)}, epoch ${a.epoch ?? 'unknown'}, worker ${v(a.workerId)}, conversation ${v(conv)}${how}`,
      });
      for (const r of unsettled ? (a.reports ?? []) : []) rows.push({ label: '', value: `   ${describeReport(r)}` });
    });
  }
  return rows;
}

export function renderProvenance(p: Provenance): string {
  const rows = provenanceFields(p);
  const width = Math.max(...rows.map((r) => r.label.length)) + 2;
  return rows.map((r) => `${`${r.label}:`.padEnd(width)}${r.value}`).join('\n');
}
