import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { tenureSecretHash } from '../../src/keys/tenure';
import { installHooks } from '../../src/git/guard';
import { applyLocalProjection } from '../../src/git/projection';
import type { BenchContext } from '../context';
import { GIT_IDENTITY, makeWorktrees } from '../fixtures';
import { latencyRow, type Row } from '../report';
import { progressLine, runPair, summarize } from '../stats';
import { projectionFor } from './projection';

/** The gate's directory (bin/git-gate), whose `git` od-worktree exec / shell-init put first on PATH. */
const GATE_DIR = path.resolve(__dirname, '../../bin/git-gate');
const OWNER = 'bench-gate-owner';
/** The owner's proof (any string: the projection holds its hash, as the host agent writes it). */
const SECRET = 'odt1_bench-gate-secret-bench-gate-secret-bench';
/** What the gate may add to any git an agent runs (docs/agent-gate.md). */
export const GATE_BUDGET_MS = 5;

function git(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ ok: boolean; code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile('git', args, { cwd, env: { ...process.env, ...GIT_IDENTITY, ...env }, encoding: 'utf8' }, (err, _o, stderr) =>
      resolve({ ok: err === null, code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stderr }),
    );
  });
}

/**
 * 6b. git through the agent-side gate vs the same git without it, in an owned worktree with the
 *     guard hooks installed, its owner as the caller: `git status`, which the gate lets through on
 *     its first look at the subcommand, and `git commit --allow-empty` and `git add -A`, which it
 *     judges first (where git writes, found with builtins here; the guard sourced; the owner's
 *     secret hashed: one process). The goal is absolute: at most 5 ms added to the
 *     bare command's p50. Before measuring, another session's `reset --hard` must be refused, so
 *     the gate is known to be in force.
 */
export async function benchGate(ctx: BenchContext, reposDir: string): Promise<Row[]> {
  const [owned] = await makeWorktrees(reposDir, 'gate', 1);
  await installHooks(owned!.repoRoot);
  await applyLocalProjection(owned!.path, { ...projectionFor(1, 'lane-gate', OWNER), tenureHash: tenureSecretHash(SECRET) }, { gitLock: true });
  const gated = { PATH: `${GATE_DIR}${path.delimiter}${process.env.PATH ?? ''}`, OVERDECK_EXECUTION_SESSION_ID: OWNER, OVERDECK_TENURE_SECRET: SECRET };
  const bare = { OVERDECK_EXECUTION_SESSION_ID: OWNER, OVERDECK_TENURE_SECRET: SECRET };
  const resolved = execFileSync('sh', ['-c', 'command -v git'], { env: { ...process.env, ...gated }, encoding: 'utf8' }).trim();
  if (resolved !== path.join(GATE_DIR, 'git')) throw new Error(`the gate is not the git found on its PATH (${resolved})`);
  const intruder = await git(owned!.path, ['reset', '--hard'], {
    ...gated,
    OVERDECK_EXECUTION_SESSION_ID: OWNER,
    OVERDECK_TENURE_SECRET: 'odt1_copied-session-id-without-the-secret',
  });
  if (intruder.ok || !intruder.stderr.includes('refused'))
    throw new Error('the gate is not in force: the owner session id without its secret ran reset --hard');

  const must = (args: string[], env: NodeJS.ProcessEnv) => async () => {
    const r = await git(owned!.path, args, env);
    if (!r.ok) throw new Error(`git ${args.join(' ')} failed: ${r.stderr.trim()}`);
  };
  const rows: Row[] = [];
  const cases: { id: string; name: string; args: string[]; sizes: { warmup: number; iterations: number } }[] = [
    { id: 'gate-status', name: 'git status through the gate (passed on sight)', args: ['status', '--porcelain'], sizes: ctx.sizes.projection },
    { id: 'gate-commit', name: 'git commit through the gate (judged, owner)', args: ['commit', '--allow-empty', '-q', '-m', 'x'], sizes: ctx.sizes.commit },
    { id: 'gate-add', name: 'git add through the gate (judged, owner: one sha256 of the secret)', args: ['add', '-A'], sizes: ctx.sizes.commit },
  ];
  for (const c of cases) {
    const result = await runPair({ ...c.sizes, ours: must(c.args, gated), base: must(c.args, bare), progress: progressLine(c.name) });
    const ours = summarize(result.ours);
    const base = summarize(result.base);
    const goal = { on: 'absolute' as const, op: '<=' as const, value: Math.round((base.p50 + GATE_BUDGET_MS) * 100) / 100 };
    rows.push(
      latencyRow(c.id, c.name, ours, base, `bare git ${c.args[0]}`, goal, {
        addedP50Ms: ours.p50 - base.p50,
        budgetMs: GATE_BUDGET_MS,
        oursMean: ours.mean,
        baseMean: base.mean,
      }),
    );
  }
  return rows;
}
