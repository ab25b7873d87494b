import type { BenchContext } from '../context';
import { judge, type Row } from '../report';
import { summarize, timeOnce } from '../stats';
import { provenance } from '../../src/provenance/provenance';

/**
 * 12. Provenance lookup at 100,000 receipts (issue goal: under 5 ms from the store). Synthetic rows,
 * inserted in SQL: `receipts` landing receipts (100,000 at BENCH_SCALE=1), each with two pre-land
 * commits (landing_commits) attributed to two sessions (commit_attributions). Timed: provenance()
 * of a landed head and of a pre-land commit, rotating over the rows, with a repository path that
 * does not exist, so only the store answers (no git): the receipt, the landing's commits and their
 * authors. Goal: p50 <= 5 ms.
 */
const ROOT = '/bench-provenance/repo';

export async function benchProvenance(ctx: BenchContext, samples = 300): Promise<Row[]> {
  const { pool } = ctx.stack;
  const receipts = Math.max(1_000, Math.round(100_000 * ctx.scale));
  const sha = (tag: string) => `substr(md5('${tag}' || g) || md5('${tag}x' || g), 1, 40)`;
  await pool.query(
    `INSERT INTO landing_receipts (ownership_id, landed_head, seq, repo_root, source_branch, source_head, landed_branch, landed_at, receipt)
     SELECT 'bench-prov-' || g, ${sha('h')}, 10, $1, 'wt/bench-' || g, ${sha('s')}, 'main', now() - make_interval(secs => $2 - g),
            jsonb_build_object('ownershipId', 'bench-prov-' || g, 'sourceBranch', 'wt/bench-' || g, 'sourceHead', ${sha('s')}, 'landedBranch', 'main',
              'landedHead', ${sha('h')}, 'landedAt', to_char((now() - make_interval(secs => $2 - g)) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
              'worktreePath', '/bench-provenance/wt-' || g, 'executionSessionId', 'bench-prov-session-' || g,
              'worker', jsonb_build_object('workerId', 'bench-prov-worker', 'runId', null), 'conversation', null)
       FROM generate_series(1, $2) g`,
    [ROOT, receipts],
  );
  for (const k of [1, 2]) {
    await pool.query(
      `INSERT INTO landing_commits (repo_root, ownership_id, landed_head, position, commit_sha, patch_id)
       SELECT $1, 'bench-prov-' || g, ${sha('h')}, $3 - 1, ${sha(`c${k}`)}, ${sha(`p${k}`)} FROM generate_series(1, $2) g`,
      [ROOT, receipts, k],
    );
    await pool.query(
      `INSERT INTO commit_attributions (repo_root, commit_sha, ownership_id, epoch, execution_session_id, worker_id, conversation_id, via, ref, worktree_path, host_id, journal_offset)
       SELECT $1, ${sha(`c${k}`)}, 'bench-prov-' || g, $3::int, 'bench-prov-session-' || g || '-' || $3::int, 'bench-prov-worker', null, 'session', 'refs/heads/wt/bench-' || g, '/bench-provenance/wt-' || g, 'bench-host', g
         FROM generate_series(1, $2) g`,
      [ROOT, receipts, k],
    );
  }
  await pool.query('ANALYZE landing_receipts; ANALYZE landing_commits; ANALYZE commit_attributions');

  const pick = async (i: number, tag: string): Promise<string> => {
    const g = 1 + ((i * 7919) % receipts);
    const r = await pool.query<{ s: string }>(`SELECT substr(md5($1 || $2::int) || md5($1 || 'x' || $2::int), 1, 40) AS s`, [tag, g]);
    return r.rows[0]!.s;
  };
  const missingRepo = '/bench-provenance/gone';
  const run = async (tag: string, via: string, authors: number) => {
    const times: number[] = [];
    for (let i = 0; i < samples + 20; i++) {
      const commit = await pick(i, tag);
      let got: Awaited<ReturnType<typeof provenance>> = null;
      const ms = await timeOnce(async () => (got = await provenance(pool, missingRepo, commit)));
      const p = got as Awaited<ReturnType<typeof provenance>>;
      if (!p || p.via !== via || (p.authors ?? []).length !== authors)
        throw new Error(`provenance bench: ${commit} answered ${p ? `${p.via}, ${(p.authors ?? []).length} authors` : 'nothing'}`);
      if (i >= 20) times.push(ms); // the first calls warm the pool and the plans
    }
    return summarize(times);
  };
  const goal = { on: 'absolute' as const, op: '<=' as const, value: 5 };
  const rows: Row[] = [];
  for (const [id, tag, via, what, n] of [
    ['provenance-head', 'h', 'landed_head', 'a landed head', 2],
    ['provenance-preland', 'c1', 'pre_land', 'a pre-land commit', 1],
  ] as const) {
    const s = await run(tag, via, n);
    rows.push({
      id,
      name: `provenance lookup at ${receipts.toLocaleString('en-US')} receipts (${what}, store only)`,
      unit: 'ms',
      ours: { p50: s.p50, p99: s.p99 },
      base: null,
      baseLabel: 'none',
      ratio: null,
      goal,
      met: judge(goal, null, s.p50),
      samples: { ours: s.n, base: 0 },
      details: { receipts, landingCommits: receipts * 2, attributions: receipts * 2, mean: s.mean, max: s.max },
    });
  }
  return rows;
}
