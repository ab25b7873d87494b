import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { z } from 'zod';
import { ApiClient, ApiError, ApiUnreachableError, DEFAULT_API_URL } from '../../api/client';
import type { BindBody, BranchStatusWire, ListResponse, Liveness, WireRecord } from '../../api/schemas';
import { IdString, OwnershipIdSchema, type ProcessIdentity } from '../../domain/identity';
import { OWNERSHIP_STATES } from '../../domain/projection';
import { git } from '../../git/exec';
import { EXIT } from '../exit-codes';
import {
  CliErrorSchema,
  HeartbeatOutputSchema,
  HistoryOutputSchema,
  ListOutputSchema,
  OwnershipOutputSchema,
  ProvenanceOutputSchema,
  renderHistory,
  renderOwnersTable,
  renderProvenance,
  renderWho,
  WhoOutputSchema,
} from '../render';
import { setOnlineClaimHandler } from './git';

/**
 * Commands served by the HTTP API (OD_API_URL, default http://127.0.0.1:8787, with OD_TOKEN):
 * who, list --owners, history, provenance, and claim / heartbeat / release for scripts. Every one
 * takes --json (validated against the exported schemas of ../render/schemas) and exits with the
 * documented codes: refused 1, usage 2, not found 3, unreachable 4.
 */

class UsageError extends Error {}
class NotFound extends Error {}

function api(): ApiClient {
  const token = process.env.OD_TOKEN;
  return new ApiClient({ baseUrl: process.env.OD_API_URL || DEFAULT_API_URL, ...(token ? { token } : {}) });
}

function print(json: boolean, schema: z.ZodType, value: unknown, human: () => string): void {
  if (json) process.stdout.write(`${JSON.stringify(schema.parse(value), null, 2)}\n`);
  else process.stdout.write(`${human()}\n`);
}

function exitFor(err: ApiError): number {
  if (err.status === 400 || err.status === 413 || err.status === 415) return EXIT.usage;
  if (err.status === 401 || err.status === 403 || err.status === 409) return EXIT.refused;
  if (err.status === 404) return EXIT.notFound;
  if (err.status === 503) return EXIT.unreachable;
  return EXIT.internal;
}

/** One line on stderr, a `{ok: false, code, error}` object on stdout with --json, and the exit code. */
function fail(json: boolean, exitCode: number, code: string, message: string): void {
  if (json) process.stdout.write(`${JSON.stringify(CliErrorSchema.parse({ ok: false, code, error: message }), null, 2)}\n`);
  process.stderr.write(`od-worktree: ${message}\n`);
  process.exitCode = exitCode;
}

async function run(json: boolean, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ApiUnreachableError) {
      fail(json, EXIT.unreachable, 'unreachable', `the ownership service is unreachable at ${err.baseUrl} (is it running? set OD_API_URL)`);
    } else if (err instanceof ApiError) {
      const hint = err.status === 503 ? ' (retry shortly)' : err.status === 401 ? ' (set OD_TOKEN)' : '';
      fail(json, exitFor(err), err.code, `${err.code}: ${err.body.message}${hint}`);
    } else if (err instanceof UsageError) {
      fail(json, EXIT.usage, 'usage', err.message);
    } else if (err instanceof NotFound) {
      fail(json, EXIT.notFound, 'not_found', err.message);
    } else {
      throw err;
    }
  }
}

// --- resolving what the user named ------------------------------------------------------------

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

async function gitOut(cwd: string, args: string[]): Promise<string | null> {
  const res = await git(args, { cwd, okCodes: [1, 128] }).catch(() => null);
  return res && res.code === 0 ? res.stdout.trim() : null;
}

/** The top of the worktree containing `dir`, else `dir` itself. */
async function worktreeTop(dir: string): Promise<string> {
  return (await gitOut(dir, ['rev-parse', '--show-toplevel'])) ?? path.resolve(dir);
}

/** The repository's main worktree (where a repository's branches land), from any of its worktrees. */
async function repoRootOf(dir: string): Promise<string | null> {
  const common = await gitOut(dir, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
  if (!common) return null;
  return path.basename(common) === '.git' ? path.dirname(common) : common;
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

const notFoundOr404 = async <T>(p: Promise<T>): Promise<T | null> =>
  p.catch((err: unknown) => {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  });

/** The repository that narrows a branch or lane: --repo, else the one containing the current directory, else none. */
async function scopeRepo(repo: string | undefined): Promise<string | undefined> {
  return repo ? path.resolve(repo) : ((await repoRootOf(process.cwd())) ?? undefined);
}

/**
 * `who`'s target: a worktree path (default: the current one), else a branch, else a lane or
 * worktree name; names are looked up in the current repository (or --repo) when there is one.
 */
async function resolveOwnership(client: ApiClient, target: string | undefined, repo: string | undefined): Promise<WireRecord> {
  const repoRoot = await scopeRepo(repo);
  if (target === undefined || isDir(target)) {
    const top = await worktreeTop(target ?? process.cwd());
    const found = await notFoundOr404(client.get({ worktreePath: top }));
    if (!found) throw new NotFound(`no ownership recorded for worktree ${top}`);
    return found;
  }
  const byBranch = await notFoundOr404(client.get({ branch: target, ...(repoRoot ? { repoRoot } : {}) }));
  if (byBranch) return byBranch;
  const byLane = await byLaneOrName(client, target, repoRoot);
  if (byLane) return byLane;
  throw new NotFound(`no ownership found for worktree, branch or lane "${target}"`);
}

/** The live liveness while the lifecycle runs; null (rendered unknown) when the service cannot say. */
/** What only the live workflow knows: liveness, and the host agent's view of the branch. */
async function liveOf(client: ApiClient, ownershipId: string): Promise<{ liveness: Liveness | null; branch: BranchStatusWire | null }> {
  const view = await notFoundOr404(client.ownership(ownershipId));
  return { liveness: view?.liveness ?? null, branch: view?.projectionSync?.branch ?? null };
}

/** heartbeat/release address an ownership by id, or by the worktree (default: the current one). */
async function ownershipIdFor(client: ApiClient, o: { ownership?: string; worktree?: string }): Promise<string> {
  if (o.ownership !== undefined) {
    if (!OwnershipIdSchema.safeParse(o.ownership).success) throw new UsageError('--ownership must be an ownership id (own_<ULID>)');
    return o.ownership;
  }
  return (await resolveOwnership(client, o.worktree ?? process.cwd(), undefined)).ownershipId;
}

function sessionAndEpoch(o: { session?: string; epoch?: string }): { executionSessionId: string; epoch: number } {
  const session = o.session ?? process.env.OVERDECK_EXECUTION_SESSION_ID;
  const epoch = o.epoch ?? process.env.OVERDECK_EPOCH;
  if (!session || !IdString.safeParse(session).success) throw new UsageError('--session (or OVERDECK_EXECUTION_SESSION_ID) is required: an identifier');
  if (!epoch || !/^[1-9]\d*$/.test(epoch)) throw new UsageError('--epoch (or OVERDECK_EPOCH) is required: the positive epoch of your tenure');
  return { executionSessionId: session, epoch: Number(epoch) };
}

function positiveInt(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(v)) throw new UsageError(`${flag} must be a positive integer`);
  return Number(v);
}

// --- commands ----------------------------------------------------------------------------------

interface ClaimOptions {
  worktree?: string;
  session?: string;
  runtime?: string;
  worker?: string;
  run?: string;
  lane?: string;
  plan?: string;
  json?: boolean;
  repo?: string;
  branch?: string;
  pid?: string;
  leaseTtl?: string;
  parent?: string;
  request?: string;
}

async function processIdentity(pidText: string | undefined): Promise<ProcessIdentity | undefined> {
  const pid = positiveInt(pidText, '--pid');
  if (pid === undefined) return undefined;
  // Loaded on demand: reading /proc is all it does.
  const { currentProcessIdentity } = require('../../activities/liveness') as typeof import('../../activities/liveness');
  const { loadConfig } = require('../../config') as typeof import('../../config');
  try {
    return await currentProcessIdentity(loadConfig().hostId, pid);
  } catch {
    throw new UsageError(`--pid ${pid}: no such process on this host`);
  }
}

/** `claim` (online): bind the worktree for a session through the API; --offline is the git side's. */
async function claimOnline(o: ClaimOptions): Promise<void> {
  const json = o.json === true;
  await run(json, async () => {
    const top = await worktreeTop(o.worktree ?? process.cwd());
    const session = o.session ?? process.env.OVERDECK_EXECUTION_SESSION_ID;
    if (!session) throw new UsageError('--session (or OVERDECK_EXECUTION_SESSION_ID) is required');
    const repoRoot = o.repo ? path.resolve(o.repo) : await repoRootOf(top);
    if (!repoRoot) throw new UsageError('not inside a git repository: pass --repo and --worktree');
    const branch = o.branch ?? (await gitOut(top, ['symbolic-ref', '--short', 'HEAD']));
    if (!branch) throw new UsageError('the worktree has no current branch: pass --branch');
    const processId = await processIdentity(o.pid);
    const leaseTtlMs = positiveInt(o.leaseTtl, '--lease-ttl');
    const body: BindBody = {
      repoRoot,
      worktreePath: top,
      branch,
      executionSessionId: session,
      ...(o.runtime !== undefined ? { runtime: o.runtime } : {}),
      ...(o.worker !== undefined ? { worker: { workerId: o.worker, ...(o.run !== undefined ? { runId: o.run } : {}) } } : o.run !== undefined ? { runId: o.run } : {}),
      ...(o.lane !== undefined ? { lane: o.lane } : {}),
      ...(o.plan !== undefined ? { planRef: o.plan } : {}),
      ...(o.request !== undefined ? { requestId: o.request } : {}),
      ...(o.parent !== undefined ? { parentExecutionSessionId: o.parent } : {}),
      ...(processId ? { process: processId } : {}),
      ...(leaseTtlMs !== undefined ? { leaseTtlMs } : {}),
    };
    const view = await api().bind(body);
    print(json, OwnershipOutputSchema, { ok: true, ownership: view }, () =>
      [`claimed ${view.worktreePath} for session ${session}: ownership ${view.ownershipId}, epoch ${view.epoch}`, `OVERDECK_EXECUTION_SESSION_ID=${session} OVERDECK_EPOCH=${view.epoch}`].join('\n'),
    );
  });
}

export function registerServiceCommands(program: Command): void {
  program
    .command('who')
    .argument('[target]', 'worktree path, branch or lane (default: the current worktree)')
    .description('who owns this worktree: the fields of spec §12, liveness, epoch, handoff lineage, submitted/landed')
    .option('--repo <path>', 'repository root for a branch or lane (default: the current repository)')
    .option('--json', 'machine-readable output')
    .action(async (target: string | undefined, o: { repo?: string; json?: boolean }) => {
      const json = o.json === true;
      await run(json, async () => {
        const client = api();
        const record = await resolveOwnership(client, target, o.repo);
        const { liveness, branch } = await liveOf(client, record.ownershipId);
        print(json, WhoOutputSchema, { ok: true, ownership: record, liveness, branch }, () => renderWho(record, liveness, branch));
      });
    });

  program
    .command('list')
    .description('ownerships as a compact table (with --owners): worktree, branch, state, liveness, owner, conversation, activity, epoch')
    .option('--owners', 'list ownerships (the default and only listing)')
    .option('--repo <path>', 'only this repository')
    .option('--state <states>', `only these states, comma-separated (${OWNERSHIP_STATES.join(', ')})`)
    .option('--limit <n>', 'at most this many (default 50)')
    .option('--cursor <cursor>', 'continue after a previous page (nextCursor)')
    .option('--json', 'machine-readable output')
    .action(async (o: { repo?: string; state?: string; limit?: string; cursor?: string; json?: boolean }) => {
      const json = o.json === true;
      await run(json, async () => {
        const limit = positiveInt(o.limit, '--limit');
        const states = o.state?.split(',').filter(Boolean);
        const page = await api().list({
          ...(o.repo ? { repoRoot: path.resolve(o.repo) } : {}),
          ...(states ? { state: states as ListResponse['items'][number]['state'][] } : {}),
          ...(limit !== undefined ? { limit } : {}),
          ...(o.cursor ? { cursor: o.cursor } : {}),
          liveness: true,
        });
        print(json, ListOutputSchema, { ok: true, ...page }, () => renderOwnersTable(page.items) + (page.nextCursor ? `\n(more: --cursor ${page.nextCursor})` : ''));
      });
    });

  program
    .command('history')
    .argument('<target>', 'worktree path, branch or landed commit')
    .description('every ownership of a worktree, branch or landed commit: owner chain, WIP, landings, events')
    .option('--repo <path>', 'repository root for a branch (default: the current repository)')
    .option('--json', 'machine-readable output')
    .action(async (target: string, o: { repo?: string; json?: boolean }) => {
      const json = o.json === true;
      await run(json, async () => {
        const client = api();
        const repoRoot = await scopeRepo(o.repo);
        const byBranch = () => client.history({ branch: target, ...(repoRoot ? { repoRoot } : {}) });
        let h;
        if (isDir(target)) h = await client.history({ worktreePath: await worktreeTop(target) });
        else if (/^[0-9a-fA-F]{7,64}$/.test(target)) {
          h = await client.history({ landedCommit: target });
          if (h.ownerships.length === 0) h = await byBranch();
        } else h = await byBranch();
        if (h.ownerships.length === 0) throw new NotFound(`no ownership history for "${target}"`);
        const out = h;
        print(json, HistoryOutputSchema, { ok: true, ...out }, () => renderHistory(out));
      });
    });

  program
    .command('provenance')
    .argument('<commit>', 'a landed commit (full or abbreviated)')
    .description('landed commit -> source branch/worktree -> session -> worker -> conversation')
    .option('--repo <path>', 'the repository (default: the one containing the current directory)')
    .option('--json', 'machine-readable output')
    .action(async (commit: string, o: { repo?: string; json?: boolean }) => {
      const json = o.json === true;
      await run(json, async () => {
        const repo = o.repo ? path.resolve(o.repo) : ((await repoRootOf(process.cwd())) ?? process.cwd());
        const p = await api().provenance(commit, repo);
        print(json, ProvenanceOutputSchema, { ok: true, provenance: p }, () => renderProvenance(p));
      });
    });

  // `claim` is one command with the git side's --offline: register the online path on it.
  const claim = program.commands.find((c) => c.name() === 'claim');
  const online = claim ?? program.command('claim').description('claim the worktree for a session through the service').option('--worktree <path>').option('--session <id>').option('--runtime <runtime>').option('--worker <id>').option('--run <id>').option('--lane <lane>').option('--plan <ref>').option('--json');
  online
    .option('--repo <path>', 'repository root (default: the main worktree of the current repository)')
    .option('--branch <name>', 'branch (default: the worktree’s current branch)')
    .option('--pid <pid>', 'the session’s process, reported for the local liveness authority')
    .option('--lease-ttl <ms>', 'this owner’s heartbeat lease in ms (default: the server’s)')
    .option('--parent <session>', 'parent execution session')
    .option('--request <id>', 'request id');
  if (claim) setOnlineClaimHandler(program, (opts) => claimOnline(opts as ClaimOptions));
  else online.action((opts: ClaimOptions) => claimOnline(opts));

  program
    .command('heartbeat')
    .description('heartbeat of the owner session (for scripts)')
    .option('--ownership <id>', 'ownership id (default: the ownership of --worktree or the current worktree)')
    .option('--worktree <path>', 'worktree (default: the current one)')
    .option('--session <id>', 'execution session (default: $OVERDECK_EXECUTION_SESSION_ID)')
    .option('--epoch <n>', 'tenure epoch (default: $OVERDECK_EPOCH)')
    .option('--json', 'machine-readable output')
    .action(async (o: { ownership?: string; worktree?: string; session?: string; epoch?: string; json?: boolean }) => {
      const json = o.json === true;
      await run(json, async () => {
        const fence = sessionAndEpoch(o);
        const client = api();
        const ownershipId = await ownershipIdFor(client, o);
        await client.heartbeat(ownershipId, fence);
        print(json, HeartbeatOutputSchema, { ok: true, ownershipId, accepted: true }, () => `heartbeat sent for ${ownershipId} (session ${fence.executionSessionId}, epoch ${fence.epoch})`);
      });
    });

  program
    .command('release')
    .description('release the worktree held by the session (for scripts)')
    .option('--ownership <id>', 'ownership id (default: the ownership of --worktree or the current worktree)')
    .option('--worktree <path>', 'worktree (default: the current one)')
    .option('--session <id>', 'execution session (default: $OVERDECK_EXECUTION_SESSION_ID)')
    .option('--epoch <n>', 'tenure epoch (default: $OVERDECK_EPOCH)')
    .option('--reason <text>', 'why')
    .option('--json', 'machine-readable output')
    .action(async (o: { ownership?: string; worktree?: string; session?: string; epoch?: string; reason?: string; json?: boolean }) => {
      const json = o.json === true;
      await run(json, async () => {
        const fence = sessionAndEpoch(o);
        const client = api();
        const ownershipId = await ownershipIdFor(client, o);
        const view = await client.release(ownershipId, { ...fence, ...(o.reason !== undefined ? { reason: o.reason } : {}) });
        print(json, OwnershipOutputSchema, { ok: true, ownership: view }, () => `released ${view.worktreePath} (ownership ${view.ownershipId}, epoch ${view.epoch})`);
      });
    });
}
