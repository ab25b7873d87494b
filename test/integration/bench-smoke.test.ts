import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { withDatabase } from '../../src/infra/postgres';

const run = promisify(execFile);

/**
 * CI runs the benchmark's quick mode as a smoke test: each pair of the cases below is measured and
 * reported. The numbers are not a gate (noisy 2-core machine); `npm run bench` at full scale is
 * where they are read.
 *
 * Left out (BENCH_ONLY), as nothing below asserts them: the cases that build the package and start
 * its compiled processes, `cli` (row 9, the installed CLI's start-up) and `base-memory` (row 10,
 * compiled vs tsx), and `provenance` (row 12, no baseline). The build and the compiled CLI, worker
 * and API run in test/integration/package.test.ts, provenance lookups in the provenance tests; the
 * bench code of those three rows is not smoke-tested. Every case in quick mode:
 * `BENCH_SCALE=0.02 npm run bench`.
 */
const SMOKE_CASES = ['projection', 'commit', 'gate', 'bind', 'update', 'history', 'heartbeat', 'list', 'lookup', 'memory'];

test('npm run bench in quick mode (all but the compiled CLI, base memory and provenance rows) measures and reports every pair', async () => {
  const out = path.join(mkdtempSync(path.join(process.env.OD_TEST_TMP!, 'bench-')), 'smoke.json');
  const env = {
    ...process.env,
    BENCH_SCALE: '0.02',
    BENCH_ONLY: SMOKE_CASES.join(','),
    BENCH_RESULTS: out,
    // The run's PostgreSQL server (the bench makes and drops a database of its own on it): no second embedded server to start.
    DATABASE_URL: process.env.DATABASE_URL || withDatabase(process.env.OD_TEST_DATABASE_URL!, 'postgres'),
  };
  await run(process.execPath, [require.resolve('tsx/cli'), path.resolve(__dirname, '../../bench/run.ts')], {
    env,
    cwd: path.resolve(__dirname, '../..'),
    maxBuffer: 16 * 1024 * 1024,
    timeout: 300_000,
  });
  const results = JSON.parse(readFileSync(out, 'utf8')) as {
    rows: { id: string; name: string; ratio: number | null; base: unknown; ours: { p50: number | null } | null }[];
    machine: unknown;
  };
  const names = results.rows.map((r) => r.name).join('\n');
  for (const pair of [
    'bind',
    'owner-only update',
    'heartbeat throughput',
    'lookup by branch: store fn',
    'lookup by branch: over HTTP',
    'git projection write',
    'git commit with guard hooks',
    'git status through the gate',
    'listOwnerships',
    'worker RSS',
  ]) {
    expect(names).toContain(pair);
  }
  // Every pair has its ratio; a row with no baseline (the lifecycle's history count) has its figure.
  for (const r of results.rows.filter((x) => x.base !== null && !x.name.startsWith('worker RSS') && !x.name.includes('latency')))
    expect({ row: r.name, ratio: Number.isFinite(r.ratio) }).toEqual({ row: r.name, ratio: true });
  const history = results.rows.find((r) => r.id === 'lifecycle-history');
  expect(history?.ours?.p50).toBeGreaterThan(0);
  expect(results.machine).toBeTruthy();
}, 320_000);
