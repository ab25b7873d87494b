import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { tenureSecretHash } from '../../src/keys/tenure';
import { installHooks } from '../../src/git/guard';
import { applyLocalProjection } from '../../src/git/projection';
import { round } from '../breakdown';
import type { BenchContext } from '../context';
import { GIT_IDENTITY, type Worktree } from '../fixtures';
import { latencyRow, type Row } from '../report';
import { progressLine, runPair, summarize } from '../stats';
import { projectionFor } from './projection';

const OWNER = 'bench-commit-owner';

function commit(cwd: string, env: NodeJS.ProcessEnv): Promise<{ ok: boolean; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'git',
      ['commit', '--allow-empty', '-q', '-m', 'x'],
      { cwd, env: { ...process.env, ...GIT_IDENTITY, ...env }, encoding: 'utf8' },
      (err, _o, stderr) => resolve({ ok: err === null, stderr }),
    );
  });
}

/** The owner's proof (any string: the projection holds its hash, as the host agent writes it). */
const SECRET = 'odt1_bench-commit-secret-bench-commit-secret-be';

/**
 * 6. `git commit --allow-empty` in an owned worktree of a repository with the guard hooks installed
 *    (the caller is the owner: its session id and tenure secret, which the hook hashes) vs the same
 *    commit in a worktree of a repository without hooks. Before measuring, a commit with the owner's
 *    session id but no secret must be refused, so the hooks are known to be in force.
 */
export async function benchCommit(ctx: BenchContext, guarded: Worktree, plain: Worktree): Promise<Row> {
  const hooks = await installHooks(guarded.repoRoot);
  await applyLocalProjection(guarded.path, { ...projectionFor(1, 'lane-a', OWNER), tenureHash: tenureSecretHash(SECRET) }, { gitLock: true });
  const intruder = await commit(guarded.path, { OVERDECK_EXECUTION_SESSION_ID: OWNER });
  if (intruder.ok) throw new Error('guard hooks are not in force: a commit with the owner session id but no tenure secret went through');
  const env = { OVERDECK_EXECUTION_SESSION_ID: OWNER, OVERDECK_TENURE_SECRET: SECRET };
  const must = async (cwd: string) => {
    const r = await commit(cwd, env);
    if (!r.ok) throw new Error(`commit failed in ${cwd}: ${r.stderr.trim()}`);
  };
  const { warmup, iterations } = ctx.sizes.commit;
  const result = await runPair({
    warmup,
    iterations,
    ours: () => must(guarded.path),
    base: () => must(plain.path),
    progress: progressLine('commit with guard vs plain'),
  });

  // Where a guarded commit's extra time goes: git's own trace (trace2) of the processes it started.
  const guardedTrace = await traceCommits(guarded, env, 10);
  const plainTrace = await traceCommits(plain, env, 10);
  const ours = summarize(result.ours);
  const base = summarize(result.base);
  return latencyRow(
    'commit',
    'git commit with guard hooks',
    ours,
    base,
    'git commit, no hooks',
    { on: 'ratio', op: '<=', value: 1.3, stat: 'p50' },
    {
      hooks: hooks.hooks,
      oursMean: ours.mean,
      baseMean: base.mean,
      trace2P50: { guarded: guardedTrace, plain: plainTrace },
    },
  );
}

/** Medians over `runs` traced commits: git's own run time, hook processes and other child processes. */
async function traceCommits(wt: Worktree, env: NodeJS.ProcessEnv, runs: number): Promise<Record<string, number>> {
  const trace = path.join(path.dirname(wt.repoRoot), `commit-trace-${path.basename(wt.repoRoot)}.json`);
  const acc = { gitTotalMs: [] as number[], hookMs: [] as number[], hooks: [] as number[], otherChildMs: [] as number[], otherChildren: [] as number[] };
  for (let i = 0; i < runs; i++) {
    rmSync(trace, { force: true });
    const r = await commit(wt.path, { ...env, GIT_TRACE2_EVENT: trace });
    if (!r.ok) throw new Error(`traced commit failed: ${r.stderr.trim()}`);
    const classOf = new Map<number, string>();
    let hookMs = 0;
    let hooks = 0;
    let otherMs = 0;
    let others = 0;
    let total = 0;
    for (const line of readFileSync(trace, 'utf8').split('\n')) {
      if (!line) continue;
      const e = JSON.parse(line) as { event: string; sid: string; t_rel?: number; t_abs?: number; child_id?: number; child_class?: string };
      if (e.sid.includes('/')) continue; // events of the child processes themselves
      if (e.event === 'child_start' && e.child_id !== undefined) classOf.set(e.child_id, e.child_class ?? '?');
      if (e.event === 'child_exit' && e.child_id !== undefined && e.t_rel !== undefined) {
        if (classOf.get(e.child_id) === 'hook') {
          hookMs += e.t_rel * 1000;
          hooks++;
        } else {
          otherMs += e.t_rel * 1000;
          others++;
        }
      }
      if (e.event === 'exit' && e.t_abs !== undefined) total = e.t_abs * 1000;
    }
    acc.gitTotalMs.push(total);
    acc.hookMs.push(hookMs);
    acc.hooks.push(hooks);
    acc.otherChildMs.push(otherMs);
    acc.otherChildren.push(others);
  }
  rmSync(trace, { force: true });
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(acc)) out[k] = round(summarize(v).p50);
  return out;
}
