import path from 'node:path';
import type { Command } from 'commander';
import type { BindBody, ClaimResponse } from '../../contract/http';
import type { ProcessIdentity } from '../../domain/identity';
import { setOnlineClaimHandler } from './git';
import { api, print, run, schemas, UsageError } from './service-run';
import { gitOut, ownershipIdFor, positiveInt, repoRootOf, sessionAndEpoch, worktreeTop } from './service-target';

/** The writes for scripts: claim (online; --offline is the git side's), heartbeat and release. */

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

/** What claim, accept and reclaim (service-lifecycle.ts) say of the new owner: the same options, the same body fields. */
export interface NewOwnerOptions {
  runtime?: string;
  worker?: string;
  run?: string;
  parent?: string;
  pid?: string;
  leaseTtl?: string;
}

export type NewOwnerFields = Pick<BindBody, 'executionSessionId' | 'runtime' | 'worker' | 'runId' | 'parentExecutionSessionId' | 'process' | 'leaseTtlMs'>;

export async function newOwnerFields(o: NewOwnerOptions, session: string): Promise<NewOwnerFields> {
  const processId = await processIdentity(o.pid);
  const leaseTtlMs = positiveInt(o.leaseTtl, '--lease-ttl');
  return {
    executionSessionId: session,
    ...(o.runtime !== undefined ? { runtime: o.runtime } : {}),
    ...(o.worker !== undefined
      ? { worker: { workerId: o.worker, ...(o.run !== undefined ? { runId: o.run } : {}) } }
      : o.run !== undefined
        ? { runId: o.run }
        : {}),
    ...(o.parent !== undefined ? { parentExecutionSessionId: o.parent } : {}),
    ...(processId ? { process: processId } : {}),
    ...(leaseTtlMs !== undefined ? { leaseTtlMs } : {}),
  };
}

/** The environment to run git with after claim, accept or reclaim: the tenure secret too, or the hooks refuse the owner's own changes. */
export function envLine(tenure: ClaimResponse['tenure'], session: string, epoch: number): string {
  return tenure
    ? Object.entries(tenure.env)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')
    : `OVERDECK_EXECUTION_SESSION_ID=${session} OVERDECK_EPOCH=${epoch}`;
}

/** `claim` (online): bind the worktree for a session through the API; --offline is the git side's. */
async function claimOnline(o: ClaimOptions): Promise<void> {
  const json = o.json === true;
  await run(json, async () => {
    const top = await worktreeTop(o.worktree ?? process.cwd());
    const session = o.session ?? process.env.OVERDECK_EXECUTION_SESSION_ID;
    if (!session) throw new UsageError('--session (or OVERDECK_EXECUTION_SESSION_ID) is required');
    // The service derives the repository root from git; --repo is sent only to be checked.
    if (!(await repoRootOf(top))) throw new UsageError('not inside a git worktree: pass --worktree');
    const branch = o.branch ?? (await gitOut(top, ['symbolic-ref', '--short', 'HEAD']));
    if (!branch) throw new UsageError('the worktree has no current branch: pass --branch');
    const body: BindBody = {
      ...(o.repo ? { repoRoot: path.resolve(o.repo) } : {}),
      worktreePath: top,
      branch,
      ...(await newOwnerFields(o, session)),
      ...(o.lane !== undefined ? { lane: o.lane } : {}),
      ...(o.plan !== undefined ? { planRef: o.plan } : {}),
      ...(o.request !== undefined ? { requestId: o.request } : {}),
    };
    const { tenure, ...view } = await api().bind(body);
    print(json, schemas().ClaimOutputSchema, { ok: true, ownership: view, tenure }, () =>
      [`claimed ${view.worktreePath} for session ${session}: ownership ${view.ownershipId}, epoch ${view.epoch}`, envLine(tenure, session, view.epoch)].join(
        '\n',
      ),
    );
  });
}

/** Registered after the lookups, on the git side's `claim` when it is there. */
export function registerWriteCommands(program: Command): void {
  // `claim` is one command with the git side's --offline: register the online path on it.
  const claim = program.commands.find((c) => c.name() === 'claim');
  const online =
    claim ??
    program
      .command('claim')
      .description('claim the worktree for a session through the service')
      .option('--worktree <path>')
      .option('--session <id>')
      .option('--runtime <runtime>')
      .option('--worker <id>')
      .option('--run <id>')
      .option('--lane <lane>')
      .option('--plan <ref>')
      .option('--json');
  online
    .option('--repo <path>', 'repository root (default: the main worktree of the current repository)')
    .option('--branch <name>', 'branch (default: the worktree’s current branch)')
    .option('--pid <pid>', 'the session’s process, reported for the local liveness authority')
    .option('--lease-ttl <ms>', 'this owner’s heartbeat lease in ms (default: the server’s)')
    .option('--parent <session>', 'parent execution session')
    .option('--request <id>', 'request id');
  if (claim) setOnlineClaimHandler(program, (opts) => claimOnline(opts as ClaimOptions));
  else online.action((opts: ClaimOptions) => claimOnline(opts));

  fenced(program.command('heartbeat').description('heartbeat of the owner session (for scripts)'))
    .option('--json', 'machine-readable output')
    .action(async (o: FenceOptions & { json?: boolean }) => {
      const json = o.json === true;
      await run(json, async () => {
        const { client, ownershipId, fence } = await tenureOf(o);
        await client.heartbeat(ownershipId, fence);
        print(
          json,
          schemas().HeartbeatOutputSchema,
          { ok: true, ownershipId, accepted: true },
          () => `heartbeat sent for ${ownershipId} (session ${fence.executionSessionId}, epoch ${fence.epoch})`,
        );
      });
    });

  fenced(program.command('release').description('release the worktree held by the session (for scripts)'))
    .option('--reason <text>', 'why')
    .option('--json', 'machine-readable output')
    .action(async (o: FenceOptions & { reason?: string; json?: boolean }) => {
      const json = o.json === true;
      await run(json, async () => {
        const { client, ownershipId, fence } = await tenureOf(o);
        const view = await client.release(ownershipId, { ...fence, ...(o.reason !== undefined ? { reason: o.reason } : {}) });
        print(
          json,
          schemas().OwnershipOutputSchema,
          { ok: true, ownership: view },
          () => `released ${view.worktreePath} (ownership ${view.ownershipId}, epoch ${view.epoch})`,
        );
      });
    });
}

export interface FenceOptions {
  ownership?: string;
  worktree?: string;
  session?: string;
  epoch?: string;
}

/** The options that name an ownership and the caller's tenure in it. */
export function fenced(cmd: Command): Command {
  return cmd
    .option('--ownership <id>', 'ownership id (default: the ownership of --worktree or the current worktree)')
    .option('--worktree <path>', 'worktree (default: the current one)')
    .option('--session <id>', 'execution session (default: $OVERDECK_EXECUTION_SESSION_ID)')
    .option('--epoch <n>', 'tenure epoch (default: $OVERDECK_EPOCH)');
}

/** The fence first (a usage error needs no service), then the ownership it is for. */
export async function tenureOf(o: FenceOptions) {
  const fence = sessionAndEpoch(o);
  const client = api();
  return { client, fence, ownershipId: await ownershipIdFor(client, o) };
}
