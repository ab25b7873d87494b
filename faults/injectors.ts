import path from 'node:path';
import { makeWorktrees, privateGitDir, waitForFile } from './git';
import type { Timeline } from './health';
import { Driver, type IntentResult, type LoadContext } from './load';
import type { Rng } from '../chaos/rng';
import type { FaultStack } from './stack';

/** How long each fault holds its component away. */
export interface Holds {
  /** a2: the worker's restart is delayed past the API's deadline */
  workerDelayMs: number;
  temporalDownMs: number;
  /** b2: a longer Temporal outage (clients back off their reconnects meanwhile) */
  temporalGoneMs: number;
  postgresDownMs: number;
  /** d1: the host agent frozen (SIGSTOP) */
  hostStoppedMs: number;
  /** d2: the host agent killed and back only after reclaim's own bound has passed */
  hostGoneMs: number;
}

export interface FaultContext {
  stack: FaultStack;
  load: LoadContext;
  timeline: Timeline;
  drivers: Driver[];
  rng: Rng;
  holds: Holds;
  phase: string;
  log: (line: string) => void;
  /** what fault e saw, for its checks and figures */
  deletions: DeletionResult[];
}

export interface DeletionResult {
  phase: string;
  slot: number;
  variant: 'before' | 'during';
  /** during: the deletion came while git was preserving the WIP (its private index existed) */
  hit: boolean;
  ownershipId: string | null;
  result: IntentResult | null;
  /** the reclaiming session (once acknowledged) */
  session: string | null;
  /** the driver could not get the worktree owned first */
  setupFailed: boolean;
}

export interface Fault {
  id: string;
  title: string;
  /** too long for the short mode (it must outlast a bound of the service) */
  longOnly?: boolean;
  /** run only when named with --only (a known failure's reproduction) */
  optIn?: boolean;
  inject(ctx: FaultContext): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A fresh worktree `name` (slot `k`) outside the load, and a driver for it drawing from the run's seed forked by `salt`. */
async function driverOfItsOwn(ctx: FaultContext, name: string, k: number, salt: number): Promise<Driver> {
  const [wt] = await makeWorktrees(path.join(ctx.stack.repoDir, name), 1, 1, name, k);
  return new Driver(ctx.load, wt!, ctx.rng.fork(salt));
}

/** `kill -9` of the dev server, restarted on its SQLite file after `ms`: marked down in the timeline meanwhile. */
async function temporalAway(ctx: FaultContext, ms: number): Promise<void> {
  const d = ctx.timeline.down('temporal', ctx.phase);
  await ctx.stack.killTemporal();
  await sleep(ms);
  await ctx.stack.startTemporal();
  ctx.timeline.up(d);
}
const s = (ms: number) => `${Math.round(ms / 1000)} s`;

export function faultList(holds: Holds, short: boolean): Fault[] {
  const n = short ? 2 : 4;
  const all: Fault[] = [
    {
      id: 'a1',
      title: 'kill -9 the worker, restart at once',
      async inject(ctx) {
        const d = ctx.timeline.down('worker', ctx.phase);
        await ctx.stack.worker.kill9();
        await ctx.stack.worker.start();
        ctx.timeline.up(d);
      },
    },
    {
      id: 'a2',
      longOnly: true,
      title: `kill -9 the worker, restart after ${s(holds.workerDelayMs)} (past the API's deadline)`,
      async inject(ctx) {
        const d = ctx.timeline.down('worker', ctx.phase);
        await ctx.stack.worker.kill9();
        await sleep(ctx.holds.workerDelayMs);
        await ctx.stack.worker.start();
        ctx.timeline.up(d);
      },
    },
    {
      id: 'b',
      title: `kill -9 the Temporal dev server, restart it on its SQLite file after ${s(holds.temporalDownMs)}`,
      inject: (ctx) => temporalAway(ctx, ctx.holds.temporalDownMs),
    },
    {
      id: 'b2',
      longOnly: true,
      title: `kill -9 the Temporal dev server, restart it on its SQLite file after ${s(holds.temporalGoneMs)} (an outage past gRPC's reconnect backoff)`,
      inject: (ctx) => temporalAway(ctx, ctx.holds.temporalGoneMs),
    },
    {
      id: 'c',
      title: `stop PostgreSQL for ${s(holds.postgresDownMs)}`,
      async inject(ctx) {
        const d = ctx.timeline.down('postgres', ctx.phase);
        await ctx.stack.stopPostgres();
        await sleep(ctx.holds.postgresDownMs);
        await ctx.stack.startPostgres();
        ctx.timeline.up(d);
      },
    },
    {
      id: 'd1',
      title: `stop the host agent (SIGSTOP) for ${s(holds.hostStoppedMs)}`,
      async inject(ctx) {
        const d = ctx.timeline.down('hostAgent', ctx.phase);
        ctx.stack.hostAgent.signal('SIGSTOP');
        const reclaims = reclaimWhileAway(ctx);
        await sleep(ctx.holds.hostStoppedMs);
        ctx.stack.hostAgent.signal('SIGCONT');
        ctx.timeline.up(d);
        await reclaims;
      },
    },
    {
      id: 'd2',
      longOnly: true,
      title: `kill -9 the host agent, back after ${s(holds.hostGoneMs)} (past reclaim's own bound)`,
      async inject(ctx) {
        const d = ctx.timeline.down('hostAgent', ctx.phase);
        await ctx.stack.hostAgent.kill9();
        const reclaims = reclaimWhileAway(ctx);
        await sleep(ctx.holds.hostGoneMs);
        await ctx.stack.hostAgent.start();
        ctx.timeline.up(d);
        await reclaims;
      },
    },
    {
      id: 'e',
      title: 'rm -rf a worktree right before / while its reclaim runs (no worktree-removed message)',
      async inject(ctx) {
        const chosen = [...ctx.drivers].sort(() => ctx.rng.next() - 0.5).slice(0, n);
        await Promise.all(
          chosen.map(async (drv, i) => {
            const variant = i % 2 === 0 ? 'during' : 'before';
            await drv.stop();
            const ready = await drv.ensureActive(30_000);
            if (!ready) {
              ctx.deletions.push({
                phase: ctx.phase,
                slot: drv.wt.k,
                variant,
                hit: false,
                ownershipId: drv.belief.ownershipId,
                result: null,
                session: null,
                setupFailed: true,
              });
              drv.start();
              return;
            }
            // Enough uncommitted files that preserving them keeps git busy while the directory goes.
            drv.dirtyMany(1_000);
            const ownershipId = drv.belief.ownershipId;
            let result: IntentResult | null;
            let hit = false;
            if (variant === 'before') {
              drv.deleteWorktree();
              result = await drv.reclaim();
            } else {
              // The moment WIP preservation starts its private index, git is at work: delete then.
              const priv = privateGitDir(drv.wt);
              const started = priv ? waitForFile(priv, /^overdeck-wip-.*\.index$/, 5_000) : sleep(50).then(() => false);
              const pending = drv.reclaim();
              hit = await started;
              drv.deleteWorktree();
              result = await pending;
            }
            ctx.deletions.push({
              phase: ctx.phase,
              slot: drv.wt.k,
              variant,
              hit,
              ownershipId,
              result,
              session: result?.outcome === 'acked' ? drv.belief.ownerSession : null,
              setupFailed: false,
            });
            ctx.log(
              `e: ${drv.wt.name} deleted ${variant} its reclaim${hit ? ' (git was preserving its WIP)' : ''}: ${result?.outcome ?? 'not sent'}${result?.code ? ` ${result.code}` : ''} in ${result?.ms ?? 0} ms`,
            );
            drv.start();
          }),
        );
      },
    },
    {
      id: 'f',
      optIn: true,
      title: 'bind a worktree on a host no agent serves (a host gone for good); opt-in: --only f',
      async inject(ctx) {
        // A worktree no driver owns, named as being on a host whose agent never answers: the
        // workflow asks that host (hostNow, bounded) before the first claim.
        const drv = await driverOfItsOwn(ctx, 'ghost', 100, 99);
        const r = await drv.withGiveUp(5_000, () => drv.bind(`gone-${ctx.stack.tag}`));
        ctx.log(`f: bind on a host no agent serves: ${r.outcome} ${r.code ?? ''} after ${r.ms} ms`);
      },
    },
    {
      id: 'g',
      optIn: true,
      title: 'kill -9 the Temporal dev server the moment a claim is in PostgreSQL, before Temporal recorded it; opt-in: --only g',
      async inject(ctx) {
        // A worktree of its own (joined to the probes): released, then bound again while the log is watched.
        const drv = await driverOfItsOwn(ctx, 'race', 101, 77);
        ctx.drivers.push(drv);
        for (let attempt = 1; attempt <= 6; attempt++) {
          if (!(await drv.ensureActive(30_000))) continue;
          await drv.release();
          if (drv.belief.state !== 'released' || !drv.belief.ownershipId) continue;
          const { ownershipId, seq } = drv.belief;
          const inLog = watchLog(ctx.stack, ownershipId, seq, 15_000);
          const bind = drv.withGiveUp(1_000, () => drv.bind());
          const hit = await inLog;
          const d = ctx.timeline.down('temporal', ctx.phase);
          await ctx.stack.killTemporal();
          // Back only once the bind was answered (503 at the API's deadline) and given up, as a
          // client may: nobody sends that claim again.
          const answered = await bind;
          await ctx.stack.startTemporal();
          ctx.timeline.up(d);
          const split = hit ? await diverged(ctx, ownershipId) : null;
          ctx.log(
            `g: try ${attempt}: claim ${hit ? 'in the log' : 'not seen'} at the kill, bind ${answered.outcome}${answered.code ? ` ${answered.code}` : ''}; ${split ?? 'workflow and log agree'}`,
          );
          if (split) return;
        }
      },
    },
  ];
  return all;
}

/** Resolves true as soon as the log holds an event of `ownershipId` past `seq` (polled as fast as PostgreSQL answers). */
async function watchLog(stack: FaultStack, ownershipId: string, seq: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const r = await stack.pool.query('SELECT 1 FROM ownership_events WHERE ownership_id = $1 AND seq > $2 LIMIT 1', [ownershipId, seq]).catch(() => null);
    if (r && r.rowCount) return true;
  }
  return false;
}

/** The live view (the workflow) and the durable row disagreeing on the owner, said in one line; null when they agree. */
async function diverged(ctx: FaultContext, ownershipId: string): Promise<string | null> {
  const headers = { authorization: `Bearer ${ctx.stack.tokens.reader}` };
  for (let i = 0; i < 20; i++) {
    const live = await fetch(`${ctx.stack.url}/v1/ownerships/${ownershipId}`, { headers })
      .then((r) => (r.ok ? (r.json() as Promise<View>) : null))
      .catch(() => null);
    const row = await ctx.stack.pool
      .query<{ owner_session_id: string | null; epoch: number; seq: number; state: string }>(
        'SELECT owner_session_id, epoch, seq, state FROM ownerships WHERE ownership_id = $1',
        [ownershipId],
      )
      .catch(() => null);
    const r = row?.rows[0];
    if (live && r && live.liveness) {
      if (live.seq === r.seq) return null;
      return `DIVERGED: the log says ${r.state} ${r.owner_session_id} epoch ${r.epoch} seq ${r.seq}, the workflow ${live.state} ${live.owner?.executionSessionId ?? null} epoch ${live.epoch} seq ${live.seq}`;
    }
    await sleep(500);
  }
  return null;
}

interface View {
  state: string;
  epoch: number;
  seq: number;
  owner: { executionSessionId: string } | null;
  liveness: unknown;
}

/** The faults of a run: those named by --only (opt-in ones included), else the mode's own. */
export function selectFaults(all: readonly Fault[], short: boolean, only: readonly string[] | null): Fault[] {
  if (only) return all.filter((f) => only.includes(f.id));
  return all.filter((f) => !f.optIn && (!short || !f.longOnly));
}

/**
 * While the host agent is away, two drivers are made to reclaim (WIP preservation needs the
 * missing host): each reclaim must still be answered within its own bound. Returns once those
 * reclaims are sent; the promise they settle on is handed back for after the host's return.
 */
function reclaimWhileAway(ctx: FaultContext): Promise<void> {
  const chosen = [...ctx.drivers].sort(() => ctx.rng.next() - 0.5).slice(0, 2);
  return Promise.all(
    chosen.map(async (drv) => {
      await drv.stop();
      if (await drv.ensureActive(10_000)) {
        drv.dirtyMany(5);
        await drv.reclaim();
      }
      drv.start();
    }),
  ).then(() => undefined);
}
