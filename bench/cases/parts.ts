import type { OwnershipRecord } from '../../src/domain/projection';
import { newOwnershipId } from '../../src/ids/workflow-id';
import { applyLocalProjection } from '../../src/git/projection';
import { clearIdentityCache, identifyWorktree } from '../../src/git/repo';
import { readExecutorConversation } from '../../src/store/bindings';
import { appendEvents } from '../../src/store/event-store';
import { round } from '../breakdown';
import type { BenchContext } from '../context';
import type { Worktree } from '../fixtures';
import { summarize, timeOnce } from '../stats';
import { claimed, planBound, type SyntheticIdentity } from '../synthetic';
import { projectionFor } from './projection';

/**
 * The pieces bind and bindPlan are made of, each timed alone on this stack, for the breakdown:
 * the durable-store work their store activities do (same functions, same database, own pool) and
 * the git work of a first projection on a fresh worktree (what bind's host activity does), and
 * bind's own look at the worktree (identifyWorktree) cold and cached.
 */
export async function measureParts(ctx: BenchContext, fresh: Worktree[]): Promise<Record<string, number>> {
  const { pool } = ctx.stack;
  const n = 50;
  const ids: SyntheticIdentity[] = Array.from({ length: n }, (_, i) => ({
    ownershipId: newOwnershipId(),
    repoRoot: '/srv/bench-parts/product',
    worktreePath: `/srv/bench-parts/product/.worktrees/p-${i}`,
    branch: `parts/p-${i}`,
    hostId: 'bench-parts-host',
    executionSessionId: `parts-session-${i}`,
    workerId: `parts-worker-${i}`,
  }));
  const first: number[] = [];
  const next: number[] = [];
  const conv: number[] = [];
  const ping: number[] = [];
  // As the workflow writes: with the record the log folds to before the batch (one round trip).
  const records = new Map<string, OwnershipRecord | null>();
  for (const id of ids) {
    first.push(
      await timeOnce(async () => {
        const w = await appendEvents(pool, `ownership/parts/${id.ownershipId}`, [claimed(id, new Date().toISOString())], null);
        records.set(id.ownershipId, w.record);
      }),
    );
  }
  for (const id of ids) {
    const base = records.get(id.ownershipId) ?? null;
    next.push(await timeOnce(() => appendEvents(pool, `ownership/parts/${id.ownershipId}`, [planBound(id, 2, new Date().toISOString(), 'lane-a')], base)));
  }
  for (let i = 0; i < 200; i++) {
    conv.push(await timeOnce(() => readExecutorConversation(pool, `bench-worker-${i}`)));
    ping.push(await timeOnce(() => pool.query('SELECT 1')));
  }
  // What bind's client side asks git (identifyWorktree): nothing cached (rev-parse + worktree list),
  // the repository known from another of its worktrees (rev-parse), the worktree itself known (no process).
  const idCold: number[] = [];
  const idRepoKnown: number[] = [];
  const idKnown: number[] = [];
  for (let i = 0; i < fresh.length; i++) {
    clearIdentityCache();
    idCold.push(await timeOnce(() => identifyWorktree(fresh[i].path)));
    clearIdentityCache();
    await identifyWorktree(fresh[(i + 1) % fresh.length].path);
    idRepoKnown.push(await timeOnce(() => identifyWorktree(fresh[i].path)));
    idKnown.push(await timeOnce(() => identifyWorktree(fresh[i].path)));
  }
  clearIdentityCache();
  const firstProjection: number[] = [];
  for (const wt of fresh) {
    firstProjection.push(await timeOnce(() => applyLocalProjection(wt.path, projectionFor(1, 'bench', 'parts-session'), { gitLock: true })));
  }
  return {
    appendEventsFirstEventP50Ms: round(summarize(first).p50),
    appendEventsNextEventP50Ms: round(summarize(next).p50),
    readExecutorConversationP50Ms: round(summarize(conv).p50),
    pgRoundTripP50Ms: round(summarize(ping).p50),
    firstProjectionOnFreshWorktreeP50Ms: round(summarize(firstProjection).p50),
    firstProjectionSamples: firstProjection.length,
    identifyWorktreeNothingCachedP50Ms: round(summarize(idCold).p50),
    identifyWorktreeRepositoryKnownP50Ms: round(summarize(idRepoKnown).p50),
    identifyWorktreeKnownP50Ms: round(summarize(idKnown).p50),
  };
}
