import path from 'node:path';
import type { Command } from 'commander';
import { type ApiClient, ApiError, ApiUnreachableError } from '../../api/client';
import type { OwnershipItem } from '../../contract/http';
import type { GcOutput, RemovalRecord, RemovalResult, RemoveWorktreeResponse, ServiceSource } from '../../contract/removal';
import type { OwnershipFact } from '../../domain/removal';
import type { ReceiptRef } from '../../git/removal';
import { apiClient, apiEnv } from '../api-env';
import { EXIT } from '../exit-codes';
import { print, run, UsageError } from './service-run';

/**
 * `od-worktree remove` and `od-worktree gc` (docs/cleanup.md): lossless removal of worktrees on
 * this host. The decision is the rule's (src/domain/removal.ts) on facts from git
 * (src/git/removal.ts), the local projection (what the hooks read) and, when it answers, the
 * service (state, liveness, landing receipts); the output says which answered. The removal is
 * recorded with the service (`worktree_removed`) when the token may.
 */

// Loaded by the command that runs, not at start-up (src/cli/main.ts).
const removal = () => require('../../git/removal') as typeof import('../../git/removal');
const rule = () => require('../../domain/removal') as typeof import('../../domain/removal');
const guard = () => require('../../git/guard') as typeof import('../../git/guard');
const repo = () => require('../../git/repo') as typeof import('../../git/repo');
const contract = () => require('../../contract/removal') as typeof import('../../contract/removal');
const config = () => require('../../config') as typeof import('../../config');
const ranking = () => require('./gc') as typeof import('./gc');

const LIST_PAGES = 20;

/** What the service says of some worktrees, and whether it was asked at all. */
interface ServiceView {
  source: ServiceSource;
  items: OwnershipItem[];
}

async function askService(fn: (c: ApiClient) => Promise<OwnershipItem[]>): Promise<ServiceView> {
  const env = apiEnv();
  if (!env.token) return { source: { status: 'no_token', detail: 'OD_TOKEN is not set: the local projection alone was read' }, items: [] };
  try {
    return { source: { status: 'used', detail: env.baseUrl }, items: await fn(apiClient(env)) };
  } catch (err) {
    if (err instanceof ApiUnreachableError) return { source: { status: 'unreachable', detail: err.baseUrl }, items: [] };
    if (err instanceof ApiError) return { source: { status: 'refused', detail: `${err.code}: ${err.body.message}` }, items: [] };
    throw err;
  }
}

/** The ownership the service's items name for a worktree: the held one if any, else the newest (highest seq). */
function serviceOwnership(items: readonly OwnershipItem[], worktreePath: string): OwnershipItem | null {
  const mine = items.filter((i) => i.worktreePath === worktreePath);
  const held = mine.filter((i) => rule().holdsWorktree({ ownershipId: i.ownershipId, state: i.state, executionSessionId: null, source: 'service' }));
  const pick = (xs: OwnershipItem[]) => xs.reduce<OwnershipItem | null>((a, b) => (a === null || b.seq > a.seq ? b : a), null);
  return pick(held) ?? pick(mine);
}

interface Subject {
  ownership: OwnershipFact | null;
  liveness: 'alive' | 'dead' | 'unknown';
  receipts: ReceiptRef[];
  /** the service's ownership id, to record the removal with */
  recordId: string | null;
}

async function subjectOf(worktreePath: string, item: OwnershipItem | null): Promise<Subject> {
  const fromLocal = await removal().projectedOwnership(worktreePath);
  const fromService: OwnershipFact | null =
    item === null
      ? null
      : {
          ownershipId: item.ownershipId,
          state: item.state,
          executionSessionId: item.owner?.executionSessionId ?? null,
          source: 'service',
          ...((item.holds ?? []).length > 0
            ? { holds: item.holds!.map((h) => ({ holdId: h.holdId, executionSessionId: h.executionSessionId, runtime: h.runtime })) }
            : {}),
        };
  const verdict = item?.liveness?.verdict ?? (item?.liveness?.status === 'live' ? 'alive' : null);
  return {
    ownership: rule().mergeOwnership(fromLocal, fromService),
    liveness: verdict ?? 'unknown',
    receipts: (item?.landings ?? []).map((l) => ({ sourceHead: l.sourceHead, landedHead: l.landedHead, landedBranch: l.landedBranch })),
    recordId: item !== null && !item.worktreeRemoved ? item.ownershipId : null,
  };
}

/** The caller passes the worktree's guard as its owner (the hooks' rule, tenure proof included): only then is a held worktree theirs to remove. */
async function callerOwns(worktreePath: string, o: OwnershipFact | null): Promise<boolean> {
  if (o === null || !rule().holdsWorktree(o)) return false;
  const res = await guard().guardCheck(worktreePath, process.env);
  return res.allowed;
}

/** Short enough for the event's free text (500): what was kept where and how the commits were found landed; ids and shas only. */
export function recordReason(r: RemovalResult): string {
  const receipt = r.receipt;
  if (receipt === null) return 'od-worktree remove';
  const counts = new Map<string, number>();
  for (const a of receipt.accounted) counts.set(a.method, (counts.get(a.method) ?? 0) + 1);
  const parts = [
    `od-worktree remove: head ${receipt.head?.slice(0, 12) ?? 'none'}`,
    receipt.headLandedOn ? `on ${receipt.headLandedOn}` : '',
    counts.size > 0 ? `accounted ${[...counts].map(([m, n]) => `${m} ${n}`).join(', ')}` : '',
    ...receipt.preserved.map((p) => `preserved ${p.files} files in ${p.ref} ${p.sha.slice(0, 12)}`),
    r.branch ? `branch ${r.branch.status}` : '',
  ].filter(Boolean);
  return parts.join('; ').slice(0, 500);
}

async function record(id: string | null, result: RemovalResult): Promise<RemovalRecord> {
  if (id === null) return { status: 'not_sent', detail: 'no ownership of the service names this worktree' };
  const env = apiEnv();
  if (!env.token) return { status: 'not_sent', detail: 'OD_TOKEN is not set' };
  try {
    const receipt = result.receipt === null ? undefined : rule().removedReceipt(result.receipt, result.branch?.status ?? null);
    const res = (await apiClient(env).worktreeRemoved(id, { reason: recordReason(result), ...(receipt ? { receipt } : {}) })) as { status?: string };
    return { status: res.status === 'recorded' ? 'recorded' : 'accepted', detail: id };
  } catch (err) {
    if (err instanceof ApiUnreachableError) return { status: 'failed', detail: `unreachable at ${err.baseUrl}` };
    if (err instanceof ApiError) return { status: 'failed', detail: `${err.code}: ${err.body.message}` };
    throw err;
  }
}

/** One worktree, decided (and with `apply`, removed and recorded). A failed git step is `failed`, never `removed`. */
async function handle(worktree: string, item: OwnershipItem | null, o: { apply: boolean; sweeper: boolean; deleteBranch: boolean; targets: string[] }) {
  const s = await subjectOf(worktree, item);
  const outcome = await removal().removeWorktree(worktree, {
    ownership: s.ownership,
    // The sweeper is never anyone's owner: a held worktree stays whoever runs gc.
    callerIsOwner: o.sweeper ? false : await callerOwns(worktree, s.ownership),
    liveness: s.liveness,
    sources: { branches: o.targets, receipts: s.receipts },
    dryRun: !o.apply,
    deleteBranch: o.deleteBranch,
    allowedRoots: config().loadConfig().allowedRoots,
  });
  const result = removal().removalResult(worktree, outcome);
  if (outcome.status === 'removed') result.record = await record(s.recordId, result);
  return result;
}

/**
 * The caller holds the worktree (its guard passes as the owner's) and the service answers: the
 * removal goes through the service (POST /v1/worktrees/remove with the owner's session and epoch),
 * which releases first. null: not the owner, or no service to ask (then the local removal runs and
 * says the removal was not recorded).
 */
async function ownerRemoval(
  worktreePath: string,
  item: OwnershipItem | null,
  source: ServiceSource,
  o: { dryRun: boolean; deleteBranch: boolean; targets: string[] },
): Promise<RemoveWorktreeResponse | null> {
  if (
    source.status !== 'used' ||
    item === null ||
    !rule().holdsWorktree({ ownershipId: item.ownershipId, state: item.state, executionSessionId: null, source: 'service' })
  )
    return null;
  const session = process.env.OVERDECK_EXECUTION_SESSION_ID;
  const epoch = Number(process.env.OVERDECK_EPOCH);
  if (!session || session !== item.owner?.executionSessionId || !Number.isInteger(epoch) || epoch < 1) return null;
  if (!(await callerOwns(worktreePath, { ownershipId: item.ownershipId, state: item.state, executionSessionId: session, source: 'service' }))) return null;
  return apiClient(apiEnv()).removeWorktree({
    worktreePath,
    hostId: config().loadConfig().hostId,
    executionSessionId: session,
    epoch,
    dryRun: o.dryRun,
    deleteBranch: o.deleteBranch,
    ...(o.targets.length > 0 ? { targets: o.targets } : {}),
  });
}

function why(r: RemovalResult): string {
  if (r.status === 'failed') return `failed: ${r.error ?? ''}`;
  if (r.refusals.length > 0) {
    return r.refusals
      .map((x) => {
        const n = typeof x.details?.count === 'number' ? ` ${x.details.count}` : '';
        if (x.code === 'owner_alive' || x.code === 'worktree_owned')
          return `${x.code} (${String(x.details?.state ?? '')}, ${String(x.details?.liveness ?? '')})`;
        return `${x.code}${n}`;
      })
      .join(', ');
  }
  const rc = r.receipt;
  if (rc === null) return '';
  const parts: string[] = [rc.headLandedOn ? `landed on ${rc.headLandedOn.replace(/^refs\/(heads|remotes)\//, '')}` : ''];
  const methods = new Map<string, number>();
  for (const a of rc.accounted) methods.set(a.method, (methods.get(a.method) ?? 0) + 1);
  for (const [m, n] of methods) parts.push(`${n} ${m}`);
  if (rc.snapshotPlanned) parts.push(`${r.facts?.dirtyFiles.length ?? 0} files to snapshot`);
  for (const p of rc.preserved) parts.push(`${p.files} files kept in ${p.ref}`);
  if (parts.join('') === '') parts.push('nothing to lose');
  return parts.filter(Boolean).join(', ');
}

const VERDICT: Readonly<Record<RemovalResult['status'], string>> = { removed: 'removed', would_remove: 'remove', refused: 'stays', failed: 'FAILED' };

function serviceLine(s: ServiceSource): string {
  if (s.status === 'used') return `ownership state and liveness: local projection and the service at ${s.detail ?? ''}`;
  return `ownership state: local projection only (service ${s.status}${s.detail ? `: ${s.detail}` : ''}); liveness unknown`;
}

function renderOne(r: RemovalResult, s: ServiceSource): string {
  const lines = [`${VERDICT[r.status]}  ${r.worktree}`, `  ${why(r)}`];
  for (const x of r.refusals) {
    const list = (x.details?.commits ?? x.details?.files) as unknown;
    lines.push(`  ${x.code}: ${x.message}`);
    if (Array.isArray(list)) for (const v of list.slice(0, 10)) lines.push(`    ${String(v)}`);
  }
  for (const p of r.receipt?.preserved ?? []) lines.push(`  snapshot: ${p.ref} ${p.sha}`);
  if (r.branch) lines.push(`  branch ${r.branch.name}: ${r.branch.status}${r.branch.detail ? ` (${r.branch.detail})` : ''}`);
  if (r.record) lines.push(`  worktree_removed: ${r.record.status}${r.record.detail ? ` (${r.record.detail})` : ''}`);
  lines.push(`  ${serviceLine(s)}`);
  return lines.join('\n');
}

function renderTable(rows: RemovalResult[], repoRoot: string, applied: boolean, s: ServiceSource): string {
  const shown = (p: string) => (p.startsWith(`${repoRoot}/`) ? p.slice(repoRoot.length + 1) : p);
  const wtWidth = Math.min(48, Math.max(8, ...rows.map((r) => shown(r.worktree).length)));
  const cut = (t: string, w: number) => (t.length > w ? `…${t.slice(t.length - w + 1)}` : t.padEnd(w));
  const lines = [`${'WORKTREE'.padEnd(wtWidth)}  VERDICT  WHY`];
  for (const r of rows) lines.push(`${cut(shown(r.worktree), wtWidth)}  ${VERDICT[r.status].padEnd(7)}  ${why(r)}`);
  if (rows.length === 0) lines.push('(no worktree besides the main one)');
  lines.push('', serviceLine(s));
  if (!applied && rows.some((r) => r.status === 'would_remove')) lines.push('dry run: nothing was changed; --apply removes the worktrees marked remove');
  return lines.join('\n');
}

function collect(v: string, acc: string[]): string[] {
  return [...acc, v];
}

/** remove and gc. */
export function registerCleanupCommands(program: Command): void {
  program
    .command('remove')
    .argument('<worktree>', 'the worktree to remove')
    .description(
      'remove a worktree without losing work: refused while another session holds it or while its branch has commits landed nowhere; uncommitted and untracked files are snapshotted first (docs/cleanup.md)',
    )
    .option('--dry-run', 'decide and say; change nothing')
    .option('--delete-branch', 'also delete its branch when every commit is accounted for and no other worktree has it checked out')
    .option('--target <branch>', 'another branch whose commits count as landed (repeatable; main, master and trunk always do)', collect, [])
    .option('--json', 'machine-readable output')
    .action(async (given: string, o: { dryRun?: boolean; deleteBranch?: boolean; target: string[]; json?: boolean }) => {
      const json = o.json === true;
      await run(json, async () => {
        const top = await repo()
          .worktreeDirs(path.resolve(given))
          .catch(() => {
            throw new UsageError(`not a git worktree: ${given}`);
          });
        if (top.isMain) throw new UsageError('the main worktree of a repository is never removed');
        const view = await askService(async (c) => {
          const found = await c.getLive({ worktreePath: top.worktreePath }).catch((err: unknown) => {
            if (err instanceof ApiError && err.status === 404) return null;
            throw err;
          });
          return found === null ? [] : [found];
        });
        // The owner removing its own held worktree, with a token: through the service, which
        // releases the ownership first (its own release) and removes on this host, so the
        // service never goes on believing a worktree that is gone is held.
        const viaService = await ownerRemoval(top.worktreePath, serviceOwnership(view.items, top.worktreePath), view.source, {
          dryRun: o.dryRun === true,
          deleteBranch: o.deleteBranch === true,
          targets: o.target,
        });
        if (viaService !== null) {
          const r = viaService.result;
          const source: ServiceSource = { status: 'used', detail: `${apiEnv().baseUrl} (released ${viaService.released ?? 'nothing'} first)` };
          print(json, contract().RemoveOutputSchema, { ok: viaService.ok, dryRun: viaService.dryRun, service: source, result: r }, () => renderOne(r, source));
          if (r.status === 'refused') process.exitCode = EXIT.refused;
          else if (r.status === 'failed' || r.branch?.status === 'delete_failed') process.exitCode = EXIT.internal;
          return;
        }
        let result: RemovalResult;
        try {
          result = await handle(top.worktreePath, serviceOwnership(view.items, top.worktreePath), {
            apply: o.dryRun !== true,
            sweeper: false,
            deleteBranch: o.deleteBranch === true,
            targets: o.target,
          });
        } catch (err) {
          result = removal().failedRemoval(top.worktreePath, err);
        }
        const ok = result.status === 'removed' || result.status === 'would_remove';
        print(json, contract().RemoveOutputSchema, { ok, dryRun: o.dryRun === true, service: view.source, result }, () => renderOne(result, view.source));
        if (result.status === 'refused') process.exitCode = EXIT.refused;
        else if (result.status === 'failed' || result.branch?.status === 'delete_failed') process.exitCode = EXIT.internal;
      });
    });

  program
    .command('gc')
    .argument('<repo>', 'the repository (any of its worktrees)')
    .description(
      'for each worktree of the repository: remove or stays, and why (live owner, unlanded commits, dirty files); a dry run unless --apply, and never a worktree a session holds (docs/cleanup.md)',
    )
    .option('--apply', 'remove the worktrees marked remove (snapshotting their files first)')
    .option('--dry-run', 'change nothing, and rank the worktrees by what removing each would lose (implies --rank)')
    .option('--rank', 'rank the worktrees by what removing each would lose: dirty files, unlanded and unpushed commits, size, last activity')
    .option('--target <branch>', 'another branch whose commits count as landed (repeatable; main, master and trunk always do)', collect, [])
    .option('--every <interval>', 'sweep again every interval (30s, 10m, 1h) until stopped (SIGINT, SIGTERM); still a dry run unless --apply')
    .option('--json', 'machine-readable output (with --every: one document per line per sweep)')
    .action(async (given: string, o: { apply?: boolean; dryRun?: boolean; rank?: boolean; target: string[]; every?: string; json?: boolean }) => {
      const json = o.json === true;
      await run(json, async () => {
        if (o.apply && o.dryRun) throw new UsageError('--dry-run and --apply: one or the other');
        const ranked = o.rank === true || o.dryRun === true;
        const everyMs = o.every === undefined ? null : intervalMs(o.every);
        const id = await repo()
          .identifyWorktree(path.resolve(given))
          .catch(() => {
            throw new UsageError(`not a git repository: ${given}`);
          });
        const once = async (): Promise<GcOutput> => {
          const view = await askService(async (c) => {
            const items: OwnershipItem[] = [];
            let cursor: string | undefined;
            for (let page = 0; page < LIST_PAGES; page++) {
              const res = await c.list({ repoRoot: id.repoRoot, liveness: true, limit: 500, ...(cursor ? { cursor } : {}) });
              items.push(...res.items);
              if (!res.nextCursor) break;
              cursor = res.nextCursor;
            }
            return items;
          });
          const results: RemovalResult[] = [];
          const activity: import('./gc').Activity[] = [];
          for (const w of await removal().listWorktrees(id.worktreePath)) {
            if (w.main || w.prunable) continue;
            // Measured before the removal: what it would lose is what it holds now.
            if (ranked) activity.push(await ranking().activityOf(w.path));
            try {
              results.push(
                await handle(w.path, serviceOwnership(view.items, w.path), { apply: o.apply === true, sweeper: true, deleteBranch: false, targets: o.target }),
              );
            } catch (err) {
              results.push(removal().failedRemoval(w.path, err));
            }
          }
          const out: GcOutput = {
            ok: results.every((r) => r.status !== 'failed'),
            repo: id.repoRoot,
            applied: o.apply === true,
            service: view.source,
            results,
          };
          return ranked ? ranking().withRanking(out, activity) : out;
        };
        const schema = ranked ? ranking().GcRankedOutputSchema : contract().GcOutputSchema;
        const table = (out: GcOutput) =>
          ranked
            ? ranking().renderRanked(out as import('./gc').GcRankedOutput, id.repoRoot, serviceLine(out.service))
            : renderTable(out.results, id.repoRoot, out.applied, out.service);
        if (everyMs === null) {
          const out = await once();
          print(json, schema, out, () => table(out));
          if (!out.ok) process.exitCode = EXIT.internal;
          return;
        }
        await sweepEvery(everyMs, async () => {
          const out = await once();
          if (json) process.stdout.write(`${JSON.stringify(schema.parse(out))}\n`);
          else process.stdout.write(`${new Date().toISOString()} sweep of ${id.repoRoot}\n${table(out)}\n\n`);
          if (!out.ok) process.exitCode = EXIT.internal;
        });
      });
    });
}

/** `30s`, `10m`, `1h` (at least 5 s: a sweep reads every worktree's git). */
export function intervalMs(text: string): number {
  const m = /^(\d{1,6})(s|m|h)$/.exec(text.trim());
  const ms = m ? Number(m[1]) * { s: 1_000, m: 60_000, h: 3_600_000 }[m[2] as 's' | 'm' | 'h'] : NaN;
  if (!(ms >= 5_000)) throw new UsageError(`--every: an interval such as 30s, 10m or 1h, at least 5s (got ${JSON.stringify(text)})`);
  return ms;
}

/** Sweeps now and then every `ms` after the last one ended, until SIGINT or SIGTERM; a sweep under way finishes first. */
async function sweepEvery(ms: number, sweep: () => Promise<void>): Promise<void> {
  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  let stopping = false;
  const onSignal = () => {
    stopping = true;
    stop();
  };
  // Kept for the life of the process (it ends with the sweeps): a signal after the last sweep is the same request.
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  while (!stopping) {
    await sweep();
    if (stopping) break;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([stopped, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }
}
