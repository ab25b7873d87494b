/**
 * `od-worktree gc --dry-run` ranks the worktrees by what removing each would lose
 * (docs/cleanup.md#ranked-by-what-removal-would-lose), and `--apply --rank` removes only the
 * lossless ones, through the same lossless removal: real repositories and worktrees, no service.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GcRankedOutputSchema } from '../../src/cli/commands/gc';
import * as wire from '../../src/exports/schemas';
import { cleanGitEnv } from '../../src/git/exec';
import { writeProjection } from '../../src/git/projection';
import { g, makeRepo, projection, type Fixture } from './git-fixture';

const BIN = path.resolve(__dirname, '../../bin/od-worktree.js');

let fx: Fixture;
let wt3: string;
let wt4: string;
let wt5: string;
let wt6: string;
beforeAll(async () => {
  fx = makeRepo();
  const remote = path.join(fx.root, 'remote.git');
  g(fx.root, 'init', '-q', '--bare', remote);
  g(fx.repo, 'remote', 'add', 'origin', remote);
  g(fx.repo, 'push', '-q', 'origin', 'main');
  // wt1: landed by a merge (lossless). wt2: held by a live session. wt3: two commits landed nowhere and pushed nowhere.
  // wt4: unowned, one untracked file. wt5: one commit landed nowhere but pushed. wt6: released, three dirty files (lossless: snapshotted first).
  writeFileSync(path.join(fx.wt1, 'a.txt'), 'landed\n');
  g(fx.wt1, 'commit', '-q', '-am', 'landed work');
  g(fx.repo, 'merge', '-q', '--no-ff', '-m', 'merge wt1', 'wt1');
  await writeProjection(fx.wt2, projection('B', 1));
  wt3 = path.join(fx.root, 'wt3');
  wt4 = path.join(fx.root, 'wt4');
  wt5 = path.join(fx.root, 'wt5');
  g(fx.repo, 'worktree', 'add', '-q', '-b', 'wt3', wt3);
  for (const f of ['c.txt', 'd.txt']) {
    writeFileSync(path.join(wt3, f), `${'x'.repeat(5000)}\n`);
    g(wt3, 'add', f);
    g(wt3, 'commit', '-q', '-m', f);
  }
  g(fx.repo, 'worktree', 'add', '-q', '-b', 'wt4', wt4);
  writeFileSync(path.join(wt4, 'draft.txt'), 'draft\n');
  g(fx.repo, 'worktree', 'add', '-q', '-b', 'wt5', wt5);
  writeFileSync(path.join(wt5, 'e.txt'), 'pushed\n');
  g(wt5, 'add', 'e.txt');
  g(wt5, 'commit', '-q', '-m', 'pushed work');
  g(wt5, 'push', '-q', 'origin', 'wt5');
  wt6 = path.join(fx.root, 'wt6');
  g(fx.repo, 'worktree', 'add', '-q', '-b', 'wt6', wt6);
  await writeProjection(wt6, projection('R', 2, { state: 'released' }));
  for (const f of ['x.txt', 'y.txt', 'z.txt']) writeFileSync(path.join(wt6, f), 'kept\n');
});
afterAll(() => fx.cleanup());

function cli(args: string[]) {
  const env = cleanGitEnv({ OD_ALLOWED_ROOTS: fx.root });
  for (const k of ['OVERDECK_EXECUTION_SESSION_ID', 'OVERDECK_EPOCH', 'OVERDECK_TENURE_SECRET', 'OD_TOKEN', 'OD_API_URL']) delete env[k];
  const res = spawnSync(process.execPath, [BIN, ...args], { cwd: fx.repo, env, encoding: 'utf8' });
  return { status: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

test('gc --dry-run --json ranks lossless first, then by what would be lost, held last; changes nothing', () => {
  const res = cli(['gc', fx.repo, '--dry-run', '--json']);
  expect({ status: res.status, stderr: res.stderr }).toEqual({ status: 0, stderr: '' });
  const out = GcRankedOutputSchema.parse(JSON.parse(res.stdout));
  // The schema the CLI checks its output with is the one worktree-ownership/schemas exports, and it
  // is strict: a row without its measure, or with a field it does not name, is refused.
  expect(wire.GcRankedOutputSchema.parse(JSON.parse(res.stdout))).toEqual(out);
  const row = JSON.parse(res.stdout).ranking[0] as Record<string, unknown>;
  const doctor = (r: Record<string, unknown>) => wire.GcRankedOutputSchema.safeParse({ ...JSON.parse(res.stdout), ranking: [r] }).success;
  expect(doctor(row)).toBe(true);
  expect(doctor({ ...row, lossless: 'yes' })).toBe(false);
  expect(doctor({ ...row, sizeBytes: -1 })).toBe(false);
  expect(doctor({ ...row, extra: 1 })).toBe(false);
  const { loses: _loses, ...withoutLoses } = row;
  expect(doctor(withoutLoses)).toBe(false);
  expect(out.applied).toBe(false);
  expect(out.ranking.map((r) => [path.basename(r.worktree), r.verdict, r.loses])).toEqual([
    ['wt1', 'remove', 'nothing'],
    ['wt6', 'remove', 'nothing (3 files snapshotted first)'],
    ['wt4', 'stays', '1 dirty file'],
    ['wt5', 'stays', '1 unlanded commit'],
    ['wt3', 'stays', '2 unlanded commits, 2 unpushed'],
    ['wt2', 'held', 'held by a session: never removed'],
  ]);
  const byName = Object.fromEntries(out.ranking.map((r) => [path.basename(r.worktree), r]));
  expect(byName.wt3).toMatchObject({ rank: 5, lossless: false, unlandedCommits: 2, unpushedCommits: 2, dirtyFiles: 0 });
  expect(byName.wt5).toMatchObject({ unlandedCommits: 1, unpushedCommits: 0 });
  expect(byName.wt1).toMatchObject({ rank: 1, lossless: true });
  // sizes of the files, not of git's: wt3 holds two 5 kB files more than the others
  expect(byName.wt3!.sizeBytes).toBeGreaterThan(byName.wt4!.sizeBytes + 9000);
  for (const r of out.ranking) expect(Date.parse(r.lastActivity ?? '')).toBeGreaterThan(Date.now() - 600_000);
  for (const w of [fx.wt1, fx.wt2, wt3, wt4, wt5, wt6]) expect(existsSync(w)).toBe(true);
});

test('the readable table has one ranked row per worktree and says what --apply would remove', () => {
  const res = cli(['gc', fx.repo, '--dry-run']);
  expect(res.status).toBe(0);
  const lines = res.stdout.split('\n');
  expect(lines[0]).toMatch(/^RANK +WORKTREE +VERDICT +LOSES +DIRTY +UNLANDED +UNPUSHED +SIZE +ACTIVE$/);
  expect(lines[1]).toMatch(/^1 +\S*wt1 +remove +nothing +0 +0 +0 +\S+ \S+ +(just now|\d+ s ago)$/);
  expect(lines[5]).toMatch(/^5 +\S*wt3 +stays +2 unlanded commits, 2 unpushed +0 +2 +2 +/);
  expect(res.stdout).toContain('dry run: nothing was changed; --apply removes the 2 lossless worktrees (verdict remove), never another');
  expect(cli(['gc', fx.repo, '--dry-run', '--apply']).status).toBe(2);
});

test('gc --apply --rank removes only the lossless worktree, through the lossless removal, and ranks it as removed', () => {
  const res = cli(['gc', fx.repo, '--apply', '--rank', '--json']);
  expect({ status: res.status, stderr: res.stderr }).toEqual({ status: 0, stderr: '' });
  const out = GcRankedOutputSchema.parse(JSON.parse(res.stdout));
  expect(out.ranking.map((r) => [path.basename(r.worktree), r.verdict])).toEqual([
    ['wt1', 'removed'],
    ['wt6', 'removed'],
    ['wt4', 'stays'],
    ['wt5', 'stays'],
    ['wt3', 'stays'],
    ['wt2', 'held'],
  ]);
  // measured before it was removed
  expect(out.ranking[0]!.sizeBytes).toBeGreaterThan(0);
  expect(out.results.find((r) => r.worktree === out.ranking[0]!.worktree)?.receipt?.headLandedOn).toBe('refs/heads/main');
  expect(out.results.find((r) => r.worktree === out.ranking[1]!.worktree)?.receipt?.preserved).toEqual([
    expect.objectContaining({ ref: expect.stringMatching(/^refs\/overdeck\/wip\/own_R\//), files: 3 }),
  ]);
  expect(existsSync(fx.wt1)).toBe(false);
  expect(existsSync(wt6)).toBe(false);
  for (const w of [fx.wt2, wt3, wt4, wt5]) expect(existsSync(w)).toBe(true);
});
