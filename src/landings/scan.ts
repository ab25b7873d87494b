import path from 'node:path';
import type { Pool } from '../store/db';
import { LandingReceiptSchema, type LandingReceipt } from '../domain/events';
import { type OwnershipRecord } from '../domain/projection';
import { identifyWorktree } from '../git/repo';
import { RepoGit } from '../git/repo-git';
import { accountedLandings, recordAmbiguousLanding, recordInferredLanding, recordsOfRepo } from '../store/inferred-landings';
import { attributedAuthor, attributedCommitsOf } from '../store/attributions';
import { ScanInputSchema, type ScanMethod, type ScanInput, type ScanResult, type ScanReport } from '../contract/landings';

/**
 * Landings without a receipt (docs/operations.md#landings-without-a-receipt): walks the target
 * branch's first-parent commits and, for each one no receipt accounts for, looks for the one
 * ownership whose work it brought:
 *
 *  - `merge`: a merge commit whose merged side (`L ^L^1`, L itself aside) holds commits of exactly one ownership;
 *  - `fast_forward`: the commit itself is one the ownership's journal attributed to it (pushed or
 *    fast-forwarded as it was made), or its branch's tip;
 *  - `cherry_pick_x`: a `(cherry picked from commit X)` line naming a commit of the ownership;
 *  - `patch_id`: `git patch-id --stable` equal to one commit of one ownership (rebase, cherry-pick);
 *  - `squash`: its tree equal to one ownership's source tip tree, or its diff equal to the
 *    ownership's whole source range diff (base..tip).
 *
 * Precision first: when two candidates match, nothing is attributed and the row says why
 * (`landing_ambiguous`, with the candidates). The commits an ownership made come from its branch
 * while it exists and from its journal after (the commits attributed to it now: a disputed commit is
 * nobody's, src/store/attributions.ts), so a deleted branch still counts.
 */

export {
  SCAN_METHODS,
  SCAN_REASONS,
  ScanInputSchema,
  ScanResultSchema,
  ScanReportSchema,
  type ScanMethod,
  type ScanReason,
  type ScanInput,
  type ScanResult,
  type ScanReport,
} from '../contract/landings';

const CHERRY_X = /\(cherry picked from commit ([0-9a-f]{40}(?:[0-9a-f]{24})?)\)/g;

interface Candidate {
  record: OwnershipRecord;
  /** its commits in topological order, oldest first (branch range, then journal-only ones) */
  commits: string[];
  /** what a squash of it would fold: the branch's range while the branch exists, else its journal's commits */
  squashed: string[];
  tip: string | null;
  base: string | null;
  tipTree: string | null;
  rangePatch: string | null;
}

export async function scanLandings(pool: Pool, input: ScanInput): Promise<ScanReport> {
  const q = ScanInputSchema.parse(input);
  const cwd = path.resolve(q.repo);
  const id = await identifyWorktree(cwd);
  const g = new RepoGit(id.worktreePath);
  const repoRoot = id.repoRoot;
  const roots = [...new Set([repoRoot, id.worktreePath])];
  const target = await g.resolve(`refs/heads/${q.branch}`);
  if (!target) return { repoRoot, branch: q.branch, scanned: 0, inferred: 0, ambiguous: 0, results: [] };
  const since = q.since ? await g.resolve(q.since) : null;
  const line = await g.revList(['--first-parent', `--max-count=${q.limit}`, target, ...(since ? [`^${since}`] : [])], false);
  line.reverse();

  // What receipts already account for.
  const { receiptHeads: heads, inferredHeads, landedCommits, landedPatches } = await accountedLandings(pool, roots);

  const candidates = await candidatesOf(pool, g, roots, target);
  const owners = new Map<string, Set<string>>(); // commit -> ownerships
  for (const c of candidates) for (const s of c.commits) (owners.get(s) ?? owners.set(s, new Set()).get(s)!).add(c.record.ownershipId);
  const allCommits = [...owners.keys()];
  const candPatch = await g.patchIds(allCommits);
  const byPatch = new Map<string, { commit: string; ownershipId: string }[]>();
  for (const [commit, pid] of candPatch)
    for (const o of owners.get(commit) ?? []) (byPatch.get(pid) ?? byPatch.set(pid, []).get(pid)!).push({ commit, ownershipId: o });
  const linePatch = await g.patchIds(line);
  const byId = new Map(candidates.map((c) => [c.record.ownershipId, c]));

  const results: ScanResult[] = [];
  for (const l of line) {
    const base: ScanResult = { commit: l, status: 'none', method: null, ownershipId: null, reason: null, candidates: [], commits: [] };
    if (inferredHeads.has(l)) {
      results.push({ ...base, status: 'already_inferred' });
      continue;
    }
    if (heads.has(l) || landedCommits.has(l) || (linePatch.has(l) && landedPatches.has(linePatch.get(l)!))) {
      results.push({ ...base, status: 'receipt' });
      continue;
    }
    const found = await infer(g, l, { owners, byPatch, linePatch, candidates });
    if (found === null) {
      results.push({ ...base, reason: 'landing_no_candidate' });
      continue;
    }
    const distinct = [...new Set(found.map((f) => f.ownershipId))];
    const method = found[0]!.method;
    // Two ownerships, or one ownership through two of its commits (the same patch twice): which one is not known.
    const originals = new Set(found.flatMap((f) => f.commits));
    if (distinct.length !== 1 || ((method === 'patch_id' || method === 'cherry_pick_x') && originals.size !== 1)) {
      results.push({ ...base, reason: 'landing_ambiguous', candidates: distinct.sort(), method: null });
      await recordAmbiguousLanding(pool, repoRoot, q.branch, l, distinct.sort(), method);
      continue;
    }
    const match = found[0]!;
    const c = byId.get(match.ownershipId)!;
    await recordInferred(pool, g, repoRoot, q.branch, l, c, match.method, match.commits);
    inferredHeads.add(l);
    results.push({ ...base, status: 'inferred', method: match.method, ownershipId: match.ownershipId, commits: match.commits });
  }
  return {
    repoRoot,
    branch: q.branch,
    scanned: line.length,
    inferred: results.filter((r) => r.status === 'inferred').length,
    ambiguous: results.filter((r) => r.reason === 'landing_ambiguous').length,
    results,
  };
}

interface Found {
  ownershipId: string;
  method: ScanMethod;
  commits: string[];
}

/** The matches of the first method that matches anything, in the order above; null when none does. */
async function infer(
  g: RepoGit,
  l: string,
  ctx: {
    owners: Map<string, Set<string>>;
    byPatch: Map<string, { commit: string; ownershipId: string }[]>;
    linePatch: Map<string, string>;
    candidates: Candidate[];
  },
): Promise<Found[] | null> {
  const parents = await g.parents(l);
  if (parents.length >= 2) {
    // Every side but the first (an octopus of a merge queue has several).
    const merged = (await g.revList(['--topo-order', '--max-count=2000', l, `^${parents[0]!}`])).filter((x) => x !== l);
    const hits = new Set<string>();
    for (const m of merged) for (const o of ctx.owners.get(m) ?? []) hits.add(o);
    return hits.size === 0 ? null : [...hits].map((o) => ({ ownershipId: o, method: 'merge', commits: merged }));
  }
  const direct = ctx.owners.get(l);
  if (direct && direct.size > 0) {
    // Made in the worktree itself (a rebase there, a revert): its originals, same patch, same ownership, landed with it.
    const pid = ctx.linePatch.get(l);
    const originals = (o: string) =>
      pid === undefined ? [] : (ctx.byPatch.get(pid) ?? []).filter((x) => x.ownershipId === o && x.commit !== l).map((x) => x.commit);
    return [...direct].map((o) => ({ ownershipId: o, method: 'fast_forward', commits: [...originals(o), l] }));
  }

  const named = [...(await g.message(l)).matchAll(CHERRY_X)].map((m) => m[1]!);
  const picked = named.flatMap((x) => [...(ctx.owners.get(x) ?? [])].map((o) => ({ ownershipId: o, method: 'cherry_pick_x' as const, commits: [x] })));
  if (picked.length > 0) return picked;

  const pid = ctx.linePatch.get(l);
  const same = pid === undefined ? [] : (ctx.byPatch.get(pid) ?? []).filter((x) => x.commit !== l);
  if (same.length > 0) return same.map((x) => ({ ownershipId: x.ownershipId, method: 'patch_id', commits: [x.commit] }));

  const tree = await g.tree(l);
  const diff = await g.rangePatchId(parents[0] ?? null, l);
  const squashes: Found[] = [];
  for (const c of ctx.candidates) {
    if (c.tip === null || c.commits.length === 0 || c.tip === l) continue;
    const byTree = tree !== null && c.tipTree === tree && !(await g.isAncestor(c.tip, l));
    const byDiff = diff !== null && c.rangePatch === diff;
    if (byTree || byDiff) squashes.push({ ownershipId: c.record.ownershipId, method: 'squash', commits: c.squashed });
  }
  return squashes.length > 0 ? squashes : null;
}

/**
 * Each ownership of the repository with what it made: the commits of its branch not on the target
 * (while the branch exists) and every commit its journal attributed to it whose objects remain.
 */
async function candidatesOf(pool: Pool, g: RepoGit, roots: string[], target: string): Promise<Candidate[]> {
  const out: Candidate[] = [];
  for (const record of await recordsOfRepo(pool, roots)) {
    // Attributed now: a disputed commit is nobody's here (commit_authorship).
    const attributed = await attributedCommitsOf(pool, record.ownershipId);
    let tip: string | null = null;
    for (const name of [...record.branchNames].reverse()) {
      tip = await g.resolve(`refs/heads/${name}`);
      if (tip) break;
    }
    const present = attributed.length === 0 ? [] : await g.revList(['--no-walk=unsorted', '--ignore-missing', ...attributed], false);
    const fromBranch = tip ? await g.revList(['--topo-order', '--max-count=2000', tip, `^${target}`]) : [];
    if (!tip) tip = present[present.length - 1] ?? null;
    const commits = [...new Set([...fromBranch, ...present])];
    if (commits.length === 0) {
      out.push({ record, commits, squashed: commits, tip, base: null, tipTree: null, rangePatch: null });
      continue;
    }
    const mb = tip ? (await g.raw(['merge-base', tip, target], [1, 128])).stdout.trim() : '';
    const base = /^[0-9a-f]{40,64}$/.test(mb) && mb !== tip ? mb : null;
    out.push({
      record,
      commits,
      squashed: fromBranch.length > 0 ? fromBranch : present,
      tip,
      base,
      tipTree: tip ? await g.tree(tip) : null,
      rangePatch: tip && base ? await g.rangePatchId(base, tip) : null,
    });
  }
  return out;
}

async function committedAt(g: RepoGit, sha: string): Promise<string> {
  const r = await g.raw(['log', '-1', '--format=%ct', sha], [128]);
  const n = Number(r.stdout.trim());
  return new Date(Number.isFinite(n) && n > 0 ? n * 1000 : Date.now()).toISOString();
}

/** The receipt a landing controller would have sent, from the ownership and the author of its newest commit. */
async function inferredReceipt(pool: Pool, g: RepoGit, branch: string, l: string, c: Candidate, commits: string[]): Promise<LandingReceipt> {
  const last = commits[commits.length - 1] ?? l;
  const who = await attributedAuthor(pool, last, c.record.ownershipId);
  const session = who?.executionSessionId ?? c.record.owner?.executionSessionId ?? null;
  const workerId = who?.workerId ?? null;
  const owner = c.record.owner && c.record.owner.executionSessionId === session ? c.record.owner : null;
  return LandingReceiptSchema.parse({
    ownershipId: c.record.ownershipId,
    sourceBranch: c.record.branch,
    sourceHead: /^[0-9a-f]{40,64}$/.test(last) ? last : l,
    landedBranch: branch,
    landedHead: l,
    landedAt: await committedAt(g, l),
    worktreePath: c.record.worktreePath,
    executionSessionId: session,
    worker: owner?.worker ?? (workerId ? { workerId, runId: null } : null),
    conversation: owner?.conversation ?? null,
  });
}

async function recordInferred(
  pool: Pool,
  g: RepoGit,
  repoRoot: string,
  branch: string,
  l: string,
  c: Candidate,
  method: ScanMethod,
  commits: string[],
): Promise<void> {
  const receipt = await inferredReceipt(pool, g, branch, l, c, commits);
  const pids = await g.patchIds(commits);
  await recordInferredLanding(pool, { repoRoot, branch, landedHead: l, ownershipId: c.record.ownershipId, method, receipt, commits, patchIds: pids });
}
