/**
 * `od-worktree gc` and `od-worktree remove` on real repositories with no service (docs/cleanup.md):
 * the sweep's table says remove or stays and why, `--apply` removes only what it said, a worktree
 * a session holds is never touched, and the output names where the ownership state came from.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GcOutputSchema } from '../../src/contract/removal';
import { cleanGitEnv } from '../../src/git/exec';
import { writeProjection } from '../../src/git/projection';
import { g, makeRepo, projection, type Fixture } from './git-fixture';

const BIN = path.resolve(__dirname, '../../bin/od-worktree.js');

let fx: Fixture;
let wt3: string;
let wt4: string;
beforeAll(async () => {
  fx = makeRepo();
  // wt1: landed by a merge. wt2: held by a live session. wt3: a commit landed nowhere. wt4: unowned, an untracked file.
  writeFileSync(path.join(fx.wt1, 'a.txt'), 'landed\n');
  g(fx.wt1, 'commit', '-q', '-am', 'landed work');
  g(fx.repo, 'merge', '-q', '--no-ff', '-m', 'merge wt1', 'wt1');
  await writeProjection(fx.wt2, projection('B', 1));
  wt3 = path.join(fx.root, 'wt3');
  wt4 = path.join(fx.root, 'wt4');
  g(fx.repo, 'worktree', 'add', '-q', '-b', 'wt3', wt3);
  writeFileSync(path.join(wt3, 'c.txt'), 'unlanded\n');
  g(wt3, 'add', 'c.txt');
  g(wt3, 'commit', '-q', '-m', 'unlanded work');
  g(fx.repo, 'worktree', 'add', '-q', '-b', 'wt4', wt4);
  writeFileSync(path.join(wt4, 'draft.txt'), 'draft\n');
});
afterAll(() => fx.cleanup());

function cli(args: string[], env: Record<string, string> = {}) {
  const base = cleanGitEnv({ OD_ALLOWED_ROOTS: fx.root });
  for (const k of ['OVERDECK_EXECUTION_SESSION_ID', 'OVERDECK_EPOCH', 'OVERDECK_TENURE_SECRET', 'OD_TOKEN', 'OD_API_URL']) delete base[k];
  const res = spawnSync(process.execPath, [BIN, ...args], { cwd: fx.repo, env: { ...base, ...env }, encoding: 'utf8' });
  return { status: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

test('gc (a dry run) says remove or stays and why for each worktree, and changes nothing', () => {
  const res = cli(['gc', fx.repo]);
  expect(res.status).toBe(0);
  // The WORKTREE column: the path (relative to the repository when inside it, else cut from the left to fit).
  const row = (p: string) => res.stdout.split('\n').find((l) => (l.split(/ {2,}/)[0] ?? '').endsWith(`/${path.basename(p)}`)) ?? res.stdout;
  expect(row(fx.wt1)).toMatch(/ remove +landed on main$/);
  expect(row(fx.wt2)).toMatch(/ stays +worktree_owned \(active, unknown\)$/);
  expect(row(wt3)).toMatch(/ stays +unlanded_commits 1$/);
  expect(row(wt4)).toMatch(/ stays +dirty_files 1$/);
  expect(res.stdout).toContain('ownership state: local projection only (service no_token');
  expect(res.stdout).toContain('dry run: nothing was changed');
  for (const w of [fx.wt1, fx.wt2, wt3, wt4]) expect(existsSync(w)).toBe(true);
});

test('gc --every sweeps again and again as a dry run, one JSON document per sweep, and stops on SIGTERM; a bad interval is a usage error', async () => {
  expect(cli(['gc', fx.repo, '--every', '1s']).status).toBe(2);
  const base = cleanGitEnv({ OD_ALLOWED_ROOTS: fx.root });
  for (const k of ['OVERDECK_EXECUTION_SESSION_ID', 'OVERDECK_EPOCH', 'OVERDECK_TENURE_SECRET', 'OD_TOKEN', 'OD_API_URL']) delete base[k];
  const child = spawn(process.execPath, [BIN, 'gc', fx.repo, '--every', '5s', '--json'], { cwd: fx.repo, env: base, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  // Two sweeps: the first at once, the next one 5 s after it ended.
  while (out.split('\n').filter(Boolean).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  const sweeps = out
    .split('\n')
    .filter(Boolean)
    .map((l) => GcOutputSchema.parse(JSON.parse(l)));
  expect(sweeps.length).toBeGreaterThanOrEqual(2);
  for (const sweep of sweeps) expect(sweep.applied).toBe(false);
  for (const w of [fx.wt1, fx.wt2, wt3, wt4]) expect(existsSync(w)).toBe(true);
});

test('remove refuses with the unlanded sha (exit 1); --dry-run of a landed one says what it would keep (exit 0)', () => {
  const refused = cli(['remove', wt3, '--json']);
  expect(refused.status).toBe(1);
  const body = JSON.parse(refused.stdout);
  expect(body.result.refusal).toMatchObject({ code: 'unlanded_commits', details: { commits: [g(wt3, 'rev-parse', 'HEAD')] } });
  expect(body.service.status).toBe('no_token');

  const dry = cli(['remove', fx.wt1, '--dry-run', '--json']);
  expect(dry.status).toBe(0);
  expect(JSON.parse(dry.stdout)).toMatchObject({ ok: true, dryRun: true, result: { status: 'would_remove', receipt: { headLandedOn: 'refs/heads/main' } } });
  expect(existsSync(fx.wt1)).toBe(true);
});

test('an unreachable service is said, and the local projection still keeps a held worktree', () => {
  const res = cli(['remove', fx.wt2, '--json'], { OD_TOKEN: 'x', OD_API_URL: 'http://127.0.0.1:9' });
  expect(res.status).toBe(1);
  const body = JSON.parse(res.stdout);
  expect(body.service).toEqual({ status: 'unreachable', detail: 'http://127.0.0.1:9' });
  expect(body.result.refusal).toMatchObject({ code: 'worktree_owned', details: { ownershipId: 'own_B', source: 'projection' } });
  expect(existsSync(fx.wt2)).toBe(true);
});

test('gc --apply removes only what the dry run marked remove; the held worktree is untouched', () => {
  const res = cli(['gc', fx.repo, '--apply', '--json']);
  expect(res.status).toBe(0);
  const body = JSON.parse(res.stdout);
  const byPath = Object.fromEntries(body.results.map((r: { worktree: string; status: string }) => [r.worktree, r.status]));
  expect(byPath).toEqual({ [fx.wt1]: 'removed', [fx.wt2]: 'refused', [wt3]: 'refused', [wt4]: 'refused' });
  expect(existsSync(fx.wt1)).toBe(false);
  for (const w of [fx.wt2, wt3, wt4]) expect(existsSync(w)).toBe(true);
  expect(body.results[0].record).toEqual({ status: 'not_sent', detail: 'no ownership of the service names this worktree' });
});
