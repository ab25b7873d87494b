import path from 'node:path';
import { type ApiClient, ApiError } from '../../api/client';
import type { GetQuery, ListResponse, OwnershipItem, WireRecord } from '../../contract/http';
import { git } from '../../git/exec';
import { NotFound, UsageError } from './service-run';

/** What the user named, resolved: a worktree, branch, lane or ownership, and the fence of a tenure. */

// Loaded by the command that runs, not at start-up (src/cli/main.ts).
const identity = () => require('../../domain/identity') as typeof import('../../domain/identity');
const targets = () => require('../target') as typeof import('../target');

export async function gitOut(cwd: string, args: string[]): Promise<string | null> {
  const res = await git(args, { cwd, okCodes: [1, 128] }).catch(() => null);
  return res && res.code === 0 ? res.stdout.trim() : null;
}

/** The top of the worktree containing `dir`, else `dir` itself. */
export async function worktreeTop(dir: string): Promise<string> {
  return (await gitOut(dir, ['rev-parse', '--show-toplevel'])) ?? path.resolve(dir);
}

/** The repository root as the service derives it (git/repo.ts identifyWorktree, the one derivation), from any of its worktrees. */
export async function repoRootOf(dir: string): Promise<string | null> {
  const { identifyWorktree } = require('../../git/repo') as typeof import('../../git/repo');
  // identifyWorktree finds the top itself (one rev-parse answers both).
  return identifyWorktree(dir).then(
    (id) => id.repoRoot,
    () => null,
  );
}

const LANE_SCAN_PAGES = 10;

/** An ownership whose lane or worktree directory name is `name`, most recent change first. */
async function byLaneOrName(client: ApiClient, name: string, repoRoot: string | undefined): Promise<WireRecord | null> {
  let cursor: string | undefined;
  for (let page = 0; page < LANE_SCAN_PAGES; page++) {
    const res: ListResponse = await client.list({ ...(repoRoot ? { repoRoot } : {}), limit: 500, ...(cursor ? { cursor } : {}) });
    const hit = res.items.find((r) => r.lane === name) ?? res.items.find((r) => path.basename(r.worktreePath) === name);
    if (hit) return hit;
    if (!res.nextCursor) return null;
    cursor = res.nextCursor;
  }
  return null;
}

export const notFoundOr404 = async <T>(p: Promise<T>): Promise<T | null> =>
  p.catch((err: unknown) => {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  });

/** The repository that narrows a branch or lane: --repo, else the one containing the current directory, else none. */
export async function scopeRepo(repo: string | undefined): Promise<string | undefined> {
  return repo ? path.resolve(repo) : ((await repoRootOf(process.cwd())) ?? undefined);
}

/**
 * `who`'s target: a worktree path (default: the current one; a removed worktree's too, see
 * ../target.ts), else a branch, else a lane or worktree name; names are looked up in the current
 * repository (or --repo) when there is one. The repository is looked up only for a name: a path
 * names its worktree alone. With `live`, the answer carries the liveness and branch status of
 * the running lifecycle, asked in the same request (GET /v1/ownership/live).
 */
export async function resolveOwnership(client: ApiClient, given: string | undefined, repo: string | undefined, live: true): Promise<OwnershipItem>;
export async function resolveOwnership(client: ApiClient, given: string | undefined, repo: string | undefined, live?: false): Promise<WireRecord>;
export async function resolveOwnership(
  client: ApiClient,
  given: string | undefined,
  repo: string | undefined,
  live = false,
): Promise<WireRecord | OwnershipItem> {
  const lookup = (q: GetQuery) => notFoundOr404<WireRecord | OwnershipItem>(live ? client.getLive(q) : client.get(q));
  const target = given ?? '.';
  const t = await targets().resolveTarget(target);
  if (t.kind === 'path') {
    const found = await lookup({ worktreePath: t.path });
    if (found) return found;
    if (!t.fallback) throw new NotFound(`no ownership recorded for worktree ${t.path}`);
  }
  const repoRoot = await scopeRepo(repo);
  const byBranch = await lookup({ branch: target, ...(repoRoot ? { repoRoot } : {}) });
  if (byBranch) return byBranch;
  const byLane = await byLaneOrName(client, target, repoRoot);
  if (byLane) return live ? ((await lookup({ ownershipId: byLane.ownershipId })) ?? byLane) : byLane;
  throw new NotFound(`no ownership found for worktree, branch or lane "${target}"`);
}

/** heartbeat/release address an ownership by id, or by the worktree (default: the current one). */
export async function ownershipIdFor(client: ApiClient, o: { ownership?: string; worktree?: string }): Promise<string> {
  if (o.ownership !== undefined) {
    if (!identity().OwnershipIdSchema.safeParse(o.ownership).success) throw new UsageError('--ownership must be an ownership id (own_<ULID>)');
    return o.ownership;
  }
  return (await resolveOwnership(client, o.worktree ?? process.cwd(), undefined)).ownershipId;
}

export function sessionAndEpoch(o: { session?: string; epoch?: string }): { executionSessionId: string; epoch: number } {
  const session = o.session ?? process.env.OVERDECK_EXECUTION_SESSION_ID;
  const epoch = o.epoch ?? process.env.OVERDECK_EPOCH;
  if (!session || !identity().IdString.safeParse(session).success)
    throw new UsageError('--session (or OVERDECK_EXECUTION_SESSION_ID) is required: an identifier');
  if (!epoch || !/^[1-9]\d*$/.test(epoch)) throw new UsageError('--epoch (or OVERDECK_EPOCH) is required: the positive epoch of your tenure');
  return { executionSessionId: session, epoch: Number(epoch) };
}

export function positiveInt(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(v)) throw new UsageError(`${flag} must be a positive integer`);
  return Number(v);
}
