import type { Command } from 'commander';
import { ApiError, type ApiClient } from '../../api/client';
import type { ClaimResponse, OwnershipViewOut } from '../../contract/http';
import { api, print, run, schemas, UsageError } from './service-run';
import { gitOut, ownershipIdFor } from './service-target';
import { envLine, fenced, type FenceOptions, newOwnerFields, type NewOwnerOptions, tenureOf } from './service-writes';

/**
 * The rest of an ownership's lifecycle for people at a terminal, through the authenticated API as
 * claim / release are: handoff, accept, cancel-handoff, reclaim (--force for admins) and submit.
 * Every input is checked before anything is sent (a usage error, exit 2); every refusal is the
 * service's own reason code and message (service-run.ts), so scripts branch on the same codes.
 */

// Loaded by the command that runs, not at start-up (src/cli/main.ts).
const identity = () => require('../../domain/identity') as typeof import('../../domain/identity');

interface Json {
  json?: boolean;
}

interface TargetOptions {
  ownership?: string;
  worktree?: string;
}

interface NewOwnerCommandOptions extends TargetOptions, NewOwnerOptions, Json {
  session?: string;
}

/** An identifier the API would take (IdString), checked here so that a bad one sends nothing. */
function idOption(value: string | undefined, flag: string): string | undefined {
  if (value !== undefined && !identity().IdString.safeParse(value).success)
    throw new UsageError(`${flag} must be an identifier (1 to 200 characters, no spaces)`);
  return value;
}

/** accept and reclaim name an ownership and the session that becomes its owner, as claim does. */
function newOwner(cmd: Command): Command {
  return cmd
    .option('--ownership <id>', 'ownership id (default: the ownership of --worktree or the current worktree)')
    .option('--worktree <path>', 'worktree (default: the current one)')
    .option('--session <id>', 'your execution session, the new owner (default: $OVERDECK_EXECUTION_SESSION_ID)')
    .option('--runtime <runtime>', 'your runtime (default: the executor binding’s)')
    .option('--worker <id>', 'the agent worker to act for (an admin must name one; an executor acts for its own)')
    .option('--run <id>', 'the worker’s run id')
    .option('--pid <pid>', 'your session’s process, reported for the local liveness authority')
    .option('--lease-ttl <ms>', 'your heartbeat lease in ms (default: the server’s)')
    .option('--parent <session>', 'parent execution session');
}

/** The new owner's session and fields, all checked before the service is asked anything. */
async function newOwnerBody(o: NewOwnerCommandOptions) {
  const session = idOption(o.session ?? process.env.OVERDECK_EXECUTION_SESSION_ID, '--session');
  if (!session) throw new UsageError('--session (or OVERDECK_EXECUTION_SESSION_ID) is required: the session that becomes the owner');
  return newOwnerFields(o, session);
}

/** The handoff pending on the ownership; none is the refusal the service itself answers to an accept then. */
async function pendingHandoff(client: ApiClient, ownershipId: string): Promise<string> {
  const pending = (await client.ownership(ownershipId)).handoff;
  if (pending) return pending.handoffId;
  const { REASONS } = require('../../domain/reasons') as typeof import('../../domain/reasons');
  const { REASON_HTTP_STATUS } = require('../../contract/errors') as typeof import('../../contract/errors');
  throw new ApiError(REASON_HTTP_STATUS.no_pending_handoff, { code: 'no_pending_handoff', message: REASONS.no_pending_handoff });
}

/** --head: a full commit id as given, else a revision the worktree resolves to one (the service takes full ids only). */
async function headOf(rev: string | undefined, worktree: string | undefined): Promise<string | undefined> {
  if (rev === undefined) return undefined;
  if (identity().FULL_SHA.test(rev)) return rev;
  const sha = rev.startsWith('-') ? null : await gitOut(worktree ?? process.cwd(), ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`]);
  if (!sha) throw new UsageError(`--head ${rev}: not a commit of the worktree`);
  return sha;
}

const ownedBy = (v: OwnershipViewOut) => `ownership ${v.ownershipId}, epoch ${v.epoch}`;

/** accept and reclaim answer as claim does: the view, the new owner's tenure, and the environment to run git with. */
function printClaim(json: boolean, answer: ClaimResponse, session: string, headline: string): void {
  const { tenure, ...view } = answer;
  print(json, schemas().ClaimOutputSchema, { ok: true, ownership: view, tenure }, () => {
    const wip = view.latestWip ? [`the previous owner’s uncommitted work: ${view.latestWip.ref} (${view.latestWip.sha.slice(0, 12)})`] : [];
    return [`${headline}: ${ownedBy(view)}`, ...wip, envLine(tenure, session, view.epoch)].join('\n');
  });
}

function printView(json: boolean, view: OwnershipViewOut, human: string): void {
  print(json, schemas().OwnershipOutputSchema, { ok: true, ownership: view }, () => human);
}

export function registerLifecycleCommands(program: Command): void {
  fenced(program.command('handoff').description('hand the worktree to another session: it stays yours until that session accepts'))
    .option('--to <session>', 'the successor’s execution session (required)')
    .option('--to-worker <id>', 'the successor’s agent worker: only its executor may accept (default: your own)')
    .option('--reason <text>', 'why')
    .option('--json', 'machine-readable output')
    .action(async (o: FenceOptions & Json & { to?: string; toWorker?: string; reason?: string }) => {
      const json = o.json === true;
      await run(json, async () => {
        const to = idOption(o.to, '--to');
        if (!to) throw new UsageError('--to <session> is required: the session that is to accept the handoff');
        const toWorker = idOption(o.toWorker, '--to-worker');
        const { client, ownershipId, fence } = await tenureOf(o);
        const view = await client.handoff(ownershipId, {
          ...fence,
          toExecutionSessionId: to,
          ...(toWorker !== undefined ? { toWorkerId: toWorker } : {}),
          ...(o.reason !== undefined ? { reason: o.reason } : {}),
        });
        const h = view.handoff;
        printView(
          json,
          view,
          [
            `handoff ${h?.handoffId ?? '?'} of ${view.worktreePath} to session ${to} pending until ${h?.expiresAt ?? '?'} (${ownedBy(view)})`,
            `the successor accepts with: od-worktree accept --ownership ${view.ownershipId}${h ? ` --handoff ${h.handoffId}` : ''} --session ${to}`,
          ].join('\n'),
        );
      });
    });

  newOwner(program.command('accept').description('accept the handoff pending on the worktree, as the session it names'))
    .option('--handoff <id>', 'the handoff to accept (default: the one pending on the ownership)')
    .option('--json', 'machine-readable output')
    .action(async (o: NewOwnerCommandOptions & { handoff?: string }) => {
      const json = o.json === true;
      await run(json, async () => {
        const fields = await newOwnerBody(o);
        const given = idOption(o.handoff, '--handoff');
        const client = api();
        const ownershipId = await ownershipIdFor(client, o);
        const handoffId = given ?? (await pendingHandoff(client, ownershipId));
        const answer = await client.acceptHandoff(ownershipId, { ...fields, handoffId });
        printClaim(json, answer, fields.executionSessionId, `accepted handoff ${handoffId} of ${answer.worktreePath} for session ${fields.executionSessionId}`);
      });
    });

  fenced(program.command('cancel-handoff').description('cancel your pending handoff: the worktree stays yours'))
    .option('--json', 'machine-readable output')
    .action(async (o: FenceOptions & Json) => {
      const json = o.json === true;
      await run(json, async () => {
        const { client, ownershipId, fence } = await tenureOf(o);
        const view = await client.cancelHandoff(ownershipId, fence);
        printView(json, view, `cancelled the handoff of ${view.worktreePath}: session ${fence.executionSessionId} keeps it (${ownedBy(view)})`);
      });
    });

  newOwner(program.command('reclaim').description('take over a worktree whose owner is proven dead; its uncommitted work is saved first'))
    .option('--force', 'admin only: take it over whatever the owner’s liveness (needs --reason)')
    .option('--reason <text>', 'why: recorded in history')
    .option('--json', 'machine-readable output')
    .action(async (o: NewOwnerCommandOptions & { force?: boolean; reason?: string }) => {
      const json = o.json === true;
      await run(json, async () => {
        const fields = await newOwnerBody(o);
        if (o.force && !o.reason?.trim()) throw new UsageError('--force needs --reason <text>: why the owner is taken over (recorded in history)');
        const client = api();
        const ownershipId = await ownershipIdFor(client, o);
        const answer = await client.reclaim(ownershipId, {
          ...fields,
          ...(o.force ? { force: true } : {}),
          ...(o.reason !== undefined ? { reason: o.reason } : {}),
        });
        const from = answer.lineage.at(-1)?.previousExecutionSessionId;
        const how = o.force ? `forced reclaim (${o.reason ?? ''})` : 'reclaimed';
        printClaim(
          json,
          answer,
          fields.executionSessionId,
          `${how} ${answer.worktreePath}${from ? ` from ${from}` : ''} for session ${fields.executionSessionId}`,
        );
      });
    });

  fenced(program.command('submit').description('submit the work for landing'))
    .option('--head <rev>', 'the commit submitted (a full id, or a revision of the worktree)')
    .option('--json', 'machine-readable output')
    .action(async (o: FenceOptions & Json & { head?: string }) => {
      const json = o.json === true;
      await run(json, async () => {
        const head = await headOf(o.head, o.worktree);
        const { client, ownershipId, fence } = await tenureOf(o);
        const view = await client.submit(ownershipId, { ...fence, ...(head !== undefined ? { head } : {}) });
        printView(
          json,
          view,
          `submitted ${view.worktreePath} for landing (${ownedBy(view)}${view.submitted?.head ? `, head ${view.submitted.head.slice(0, 12)}` : ''})`,
        );
      });
    });
}
