import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { OwnershipView } from '../../src/client';
import { cleanGitEnv } from '../../src/git/exec';
import { installHooks } from '../../src/git/guard';
import { scanLandings, type ScanReport, type ScanResult } from '../../src/landings/scan';
import { shipJournal } from '../../src/provenance/attributions';
import { provenance } from '../../src/provenance/provenance';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { withTenureSecret } from '../support/tenure-env';
import { executorPrincipal as executor, startHarness, waitForView, type Harness } from '../support/harness';

/**
 * docs/operations.md#landings-without-a-receipt: commits that reached main with no receipt are
 * inferred by merge structure, fast-forward, `-x`, patch-id and squash tree/diff, on a real
 * repository; two candidates for one commit record nothing and say why.
 */

let h: Harness;
let repo: RepoFixture;
let repoRoot: string;
const IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' };
const NAMES = ['merge', 'ff', 'pickx', 'pick', 'rebase', 'squash', 'twinA', 'twinB'] as const;
type Name = (typeof NAMES)[number];
const own: Record<string, { ownershipId: string; session: string; path: string; branch: string }> = {};
const sha: Record<string, string> = {};
let report: ScanReport;

beforeAll(async () => {
  h = await startHarness();
  repo = makeRepo(NAMES.length);
  repoRoot = await h.client.normalize(repo.repoRoot);
  await installHooks(repo.repoRoot);
  const caughtUp = (v: OwnershipView): boolean => v.projectionSync.localSeq >= v.seq && v.projectionSync.error === null;
  for (const [i, name] of NAMES.entries()) {
    const wt = repo.worktrees[i]!;
    const ref = { repoRoot, worktreePath: await h.client.normalize(wt.path) };
    const session = `session-scan-${name}`;
    const view = await h.client.bind({
      ...ref,
      branch: wt.branch,
      executionSessionId: session,
      runtime: 'codex-cli',
      worker: { runId: null, workerId: `worker-scan-${name}` },
      principal: executor(`worker-scan-${name}`),
    });
    await waitForView(h.client, ref, caughtUp);
    own[name] = { ownershipId: view.ownershipId, session, path: ref.worktreePath, branch: wt.branch };
  }
});
afterAll(async () => h?.shutdown());

function run(cwd: string, env: Record<string, string>, ...args: string[]): string {
  const base = cleanGitEnv(IDENTITY);
  delete base.OVERDECK_EXECUTION_SESSION_ID;
  delete base.OVERDECK_EPOCH;
  return execFileSync('git', args, { cwd, env: withTenureSecret(cwd, { ...base, ...env }), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** A commit in worktree `name` by its session. */
function work(name: Name, file: string, content = `${name} ${file}\n`): string {
  const o = own[name]!;
  const env = { OVERDECK_EXECUTION_SESSION_ID: o.session };
  writeFileSync(path.join(o.path, file), content);
  run(o.path, env, 'add', file);
  run(o.path, env, 'commit', '-q', '-m', `${name}: ${file}`);
  return run(o.path, env, 'rev-parse', 'HEAD');
}

const main = (...args: string[]): string => run(repo.repoRoot, {}, ...args);
const head = (): string => main('rev-parse', 'HEAD');
const resultOf = (commit: string): ScanResult | undefined => report.results.find((r) => r.commit === commit);

test('landings of every style, none with a receipt', async () => {
  // merge --no-ff
  sha.m1 = work('merge', 'm1.txt');
  sha.m2 = work('merge', 'm2.txt');
  main('merge', '-q', '--no-ff', '-m', 'merge without receipt', own.merge!.branch);
  sha.merge = head();
  // fast-forward: the branch catches up with main (a move that creates nothing), commits, main fast-forwards
  run(own.ff!.path, { OVERDECK_EXECUTION_SESSION_ID: own.ff!.session }, 'merge', '-q', '--ff-only', 'main');
  sha.f1 = work('ff', 'f1.txt');
  main('merge', '-q', '--ff-only', own.ff!.branch);
  expect(head()).toBe(sha.f1);
  // cherry-pick -x and without -x
  sha.px = work('pickx', 'px.txt');
  main('cherry-pick', '-x', sha.px);
  sha.pickedX = head();
  sha.p = work('pick', 'p.txt');
  main('cherry-pick', sha.p);
  sha.picked = head();
  // a rebase the landing controller did on main: copies of r1, r2
  sha.r1 = work('rebase', 'r1.txt');
  sha.r2 = work('rebase', 'r2.txt');
  main('cherry-pick', sha.r1, sha.r2);
  sha.rebased2 = head();
  sha.rebased1 = main('rev-parse', 'HEAD~1');
  // squash
  sha.s1 = work('squash', 's1.txt');
  sha.s2 = work('squash', 's2.txt');
  main('merge', '-q', '--squash', own.squash!.branch);
  main('commit', '-q', '-m', 'squash without receipt');
  sha.squash = head();
  // the same change made in two worktrees, one copy landed: which one is not knowable
  sha.twinA = work('twinA', 'twin.txt', 'the same line\n');
  sha.twinB = work('twinB', 'twin.txt', 'the same line\n');
  main('cherry-pick', sha.twinA);
  sha.twin = head();

  for (const name of NAMES) await shipJournal(h.pool, own[name]!.path, { hostId: h.hostId, allowedRoots: [process.env.OD_TEST_TMP!] });
  report = await scanLandings(h.pool, { repo: repo.repoRoot, branch: 'main' });
  expect(report.repoRoot).toBe(repoRoot);
});

test.each([
  ['merge (parent structure)', 'merge', 'merge', 'merge', ['m1', 'm2']],
  ['fast-forward', 'f1', 'fast_forward', 'ff', ['f1']],
  ['cherry-pick -x', 'pickedX', 'cherry_pick_x', 'pickx', ['px']],
  ['cherry-pick without -x (patch-id)', 'picked', 'patch_id', 'pick', ['p']],
  ['rebase by the controller, first copy (patch-id)', 'rebased1', 'patch_id', 'rebase', ['r1']],
  ['rebase by the controller, second copy (patch-id)', 'rebased2', 'patch_id', 'rebase', ['r2']],
  ['squash (diff of the source range)', 'squash', 'squash', 'squash', ['s1', 's2']],
] as const)('%s: an inferred receipt naming the method, and provenance answers from it', async (_label, commit, method, name, originals) => {
  const r = resultOf(sha[commit]!);
  expect(r).toMatchObject({ status: 'inferred', method, ownershipId: own[name]!.ownershipId, reason: null });
  expect(r!.commits).toEqual(originals.map((o) => sha[o]));
  const p = await provenance(h.pool, repoRoot, sha[commit]!);
  expect(p).toMatchObject({ receiptKind: 'inferred', inferredMethod: method, ownershipId: own[name]!.ownershipId });
  const expectedAuthors = commit === 'merge' || commit === 'squash' ? originals.map((o) => sha[o]) : [sha[originals[0]]];
  expect(p!.authors!.map((a) => [a.commit, a.executionSessionId])).toEqual(expectedAuthors.map((c) => [c, own[name]!.session]));
});

test('two candidates for one commit: nothing is recorded, and the reason and candidates are said', async () => {
  const r = resultOf(sha.twin!);
  expect(r).toMatchObject({ status: 'none', reason: 'landing_ambiguous', ownershipId: null, method: null });
  expect(r!.candidates).toEqual([own.twinA!.ownershipId, own.twinB!.ownershipId].sort());
  expect(await provenance(h.pool, repoRoot, sha.twin!)).toBeNull();
  // The initial commit is nobody's.
  expect(resultOf(main('rev-list', '--max-parents=0', 'HEAD'))).toMatchObject({ status: 'none', reason: 'landing_no_candidate' });
});

test('a second scan records nothing new; --since limits the walk', async () => {
  const again = await scanLandings(h.pool, { repo: repo.repoRoot, branch: 'main' });
  expect(again.inferred).toBe(0);
  expect(
    again.results
      .filter((r) => r.status === 'already_inferred')
      .map((r) => r.commit)
      .sort(),
  ).toEqual([sha.merge, sha.f1, sha.pickedX, sha.picked, sha.rebased1, sha.rebased2, sha.squash, sha.twin].sort());
  const recent = await scanLandings(h.pool, { repo: repo.repoRoot, branch: 'main', since: sha.rebased2! });
  expect(recent.results.map((r) => r.commit)).toEqual([sha.squash, sha.twin]);
});
