import { execFile } from 'node:child_process';
import path from 'node:path';
import { writeFileAtomic } from '../../src/git/atomic';
import { lockFromProjection, lockWorktree } from '../../src/git/lock';
import { writeLockIn } from '../../src/git/lock-file';
import { applyLocalProjection, GIT_LOCK_PREFIX, gitLockReason, renderProjection, writeProjectionIn, type LocalProjection } from '../../src/git/projection';
import { worktreeDirs } from '../../src/git/repo';
import { round } from '../breakdown';
import type { BenchContext } from '../context';
import type { Worktree } from '../fixtures';
import { latencyRow, type Row } from '../report';
import { progressLine, runPair, summarize, timeOnce } from '../stats';

export function gitConfigSpawn(cwd: string, args = ['config', '--get', 'core.bare']): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, encoding: 'utf8' }, (err) => (err && err.code !== 1 ? reject(err) : resolve()));
  });
}

export function projectionFor(seq: number, lane: string, executionSessionId = 'bench-proj-session'): LocalProjection {
  const at = new Date().toISOString();
  return {
    ownershipId: 'own_01HZZZZZZZZZZZZZZZZZZZZZZZ',
    executionSessionId,
    runtime: 'codex-cli',
    conversationId: null,
    conversationUrl: null,
    workerId: 'bench-proj-worker',
    runId: null,
    lane,
    planRef: 'docs/plans/bench.md',
    epoch: 1,
    seq,
    state: 'active',
    claimedAt: at,
    lastSeenAt: at,
  };
}

/**
 * 5. The git-side projection write on an existing, already projected worktree (steady state: the
 *    include and extension are in place, the worktree lock is held; each call carries a higher seq
 *    so it really writes) vs one `git config --get core.bare` process spawned from Node.
 */
export async function benchProjection(ctx: BenchContext, wt: Worktree): Promise<Row> {
  const { warmup, iterations } = ctx.sizes.projection;
  let seq = 1;
  await applyLocalProjection(wt.path, projectionFor(seq, 'lane-a'), { gitLock: true });
  const result = await runPair({
    warmup,
    iterations,
    ours: async () => {
      seq++;
      const res = await applyLocalProjection(wt.path, projectionFor(seq, seq % 2 ? 'lane-a' : 'lane-b'), { gitLock: true });
      if (res !== 'written') throw new Error(`projection seq ${seq}: ${res}`);
    },
    base: () => gitConfigSpawn(wt.path),
    progress: progressLine('projection vs git config'),
  });

  // Breakdown: the three steps applyLocalProjection chains, each timed alone (same worktree, higher
  // seq each time), plus the one git process the first step spawns, as the probe spawns it.
  const dirs = await worktreeDirs(wt.path);
  const probeArgs = ['config', '-z', '--file', path.join(dirs.privateDir, 'config.worktree'), '--includes', '--get-regexp', '^(include\\.path|overdeck\\..*)$'];
  const parts = {
    writeProjectionIn: [] as number[],
    writeLockIn: [] as number[],
    lockWorktreeUnchanged: [] as number[],
    gitProbeSpawn: [] as number[],
    atomicWriteWithFsync: [] as number[],
  };
  const scratch = path.join(dirs.privateDir, 'bench-scratch');
  for (let i = 0; i < Math.min(50, iterations); i++) {
    const p = projectionFor(++seq, seq % 2 ? 'lane-a' : 'lane-b');
    parts.writeProjectionIn.push(await timeOnce(() => writeProjectionIn(wt.path, p, {})));
    parts.writeLockIn.push(await timeOnce(() => writeLockIn(dirs, lockFromProjection(p))));
    parts.lockWorktreeUnchanged.push(await timeOnce(() => lockWorktree(wt.path, GIT_LOCK_PREFIX + gitLockReason(p))));
    parts.gitProbeSpawn.push(await timeOnce(() => gitConfigSpawn(wt.path, probeArgs)));
    parts.atomicWriteWithFsync.push(await timeOnce(() => writeFileAtomic(scratch, renderProjection(p))));
  }
  const breakdownP50: Record<string, number | string> = {
    note: 'applyLocalProjection = writeProjectionIn (1 git process: the probe; 1 atomic write with fsync) + writeLockIn (1 atomic write with fsync) + lockWorktree (reads the lock reason; unchanged: no process)',
  };
  for (const [k, v] of Object.entries(parts)) breakdownP50[k] = round(summarize(v).p50);
  const ours = summarize(result.ours);
  const base = summarize(result.base);
  return latencyRow(
    'projection',
    'git projection write (steady state)',
    ours,
    base,
    "execFile('git', ['config','--get','core.bare'])",
    { on: 'ratio', op: '<=', value: 2, stat: 'p50' },
    {
      oursMean: ours.mean,
      baseMean: base.mean,
      breakdownP50,
    },
  );
}
