import type { OwnershipView } from '../../src/client';
import { installHooks } from '../../src/git/guard';
import { ScanReportSchema } from '../../src/landings/scan';
import { shipJournal } from '../../src/provenance/attributions';
import { apiEnv, runCli, type CliResult } from '../support/cli';
import { commitAs, git, gitAs, makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { waitForView } from '../support/harness';

/**
 * od-worktree over the HTTP API (docs/operations.md#authors-and-lander): provenance shows the
 * authors and the lander apart, history shows refused attempts, `landings scan` records an inferred
 * receipt (landing principals only).
 */

let s: ApiStack;
let repo: RepoFixture;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(2);
  await installHooks(repo.repoRoot);
});
afterAll(async () => s?.stop());

function cli(args: string[], token: string): Promise<CliResult> {
  return runCli(args, { cwd: repo.repoRoot, env: apiEnv(s.url, token) });
}

const caughtUp = (v: OwnershipView): boolean => v.projectionSync.localSeq >= v.seq && v.projectionSync.error === null;

async function bind(i: number, session: string): Promise<{ ownershipId: string; path: string }> {
  const wt = repo.worktrees[i]!;
  const bound = await s
    .api(s.tokens.executor)
    .bind({ repoRoot: repo.repoRoot, worktreePath: wt.path, branch: wt.branch, executionSessionId: session, runtime: 'codex-cli' });
  const ref = { repoRoot: await s.h.client.normalize(repo.repoRoot), worktreePath: await s.h.client.normalize(wt.path) };
  await waitForView(s.h.client, ref, caughtUp);
  return { ownershipId: bound.ownershipId, path: ref.worktreePath };
}

test('provenance shows the authors and the lander apart; history shows the refused attempt', async () => {
  const a = await bind(0, 'cli-prov-A');
  const a1 = commitAs(a.path, 'cli-prov-A', 'a1.txt');
  const a2 = commitAs(a.path, 'cli-prov-A', 'a2.txt');
  expect(gitAs(a.path, 'cli-prov-intruder', 'reset', '-q', '--hard', 'HEAD~1')).not.toBe(0);
  git(repo.repoRoot, 'merge', '-q', '--squash', repo.worktrees[0]!.branch);
  git(repo.repoRoot, 'commit', '-q', '-m', 'squash');
  const squash = git(repo.repoRoot, 'rev-parse', 'HEAD');
  const landed = await s
    .api(s.tokens.landing)
    .land({ ownershipId: a.ownershipId, sourceHead: a2, landedBranch: 'main', landedHead: squash, landedAt: new Date().toISOString() });
  expect(landed.status).toBe('recorded');
  const deadline = Date.now() + 20_000;
  while ((await s.h.pool.query('SELECT 1 FROM landing_commits WHERE ownership_id = $1', [a.ownershipId])).rowCount !== 2) {
    if (Date.now() > deadline) throw new Error('no landing commits');
    await new Promise((r) => setTimeout(r, 100));
  }

  const p = await cli(['provenance', squash, '--repo', repo.repoRoot], s.tokens.reader);
  expect(p).toMatchObject({ code: 0, stderr: '' });
  expect(p.stdout).toMatch(/^Landed by: +landing landing-[a-z0-9]+, for owner session cli-prov-A$/m);
  expect(p.stdout).toMatch(/^Authors: +2 commits, 1 session, oldest first$/m);
  expect(p.stdout).toContain(`1. ${a1.slice(0, 12)} session cli-prov-A, epoch 1`);
  expect(p.stdout).toContain(`2. ${a2.slice(0, 12)} session cli-prov-A, epoch 1`);
  const pj = JSON.parse((await cli(['provenance', a1, '--repo', repo.repoRoot, '--json'], s.tokens.reader)).stdout) as {
    provenance: { authors: { commit: string; executionSessionId: string }[] };
  };
  expect(pj.provenance.authors.map((x) => [x.commit, x.executionSessionId])).toEqual([[a1, 'cli-prov-A']]);

  const h = await cli(['history', a.path], s.tokens.reader);
  expect(h).toMatchObject({ code: 0, stderr: '' });
  expect(h.stdout).toContain('Attempts (refused):');
  expect(h.stdout).toMatch(/not_owner {2}move of refs\/heads\/wt\/feature-0 [0-9a-f]{12} -> [0-9a-f]{12} by cli-prov-intruder \(owner cli-prov-A, epoch 1\)/);
});

test('landings scan records an inferred receipt for a cherry-pick; only landing principals may run it', async () => {
  const c = await bind(1, 'cli-prov-C');
  const c1 = commitAs(c.path, 'cli-prov-C', 'c1.txt');
  // Stands in for the host agent's 5 s shipping timer.
  await shipJournal(s.h.pool, c.path, { hostId: s.h.hostId, allowedRoots: [process.env.OD_TEST_TMP!] });
  git(repo.repoRoot, 'cherry-pick', c1);
  const picked = git(repo.repoRoot, 'rev-parse', 'HEAD');

  const refused = await cli(['landings', 'scan', '--repo', repo.repoRoot, '--json'], s.tokens.reader);
  expect(refused.code).toBe(1);
  expect(JSON.parse(refused.stdout)).toMatchObject({ ok: false, code: 'forbidden' });

  const r = await cli(['landings', 'scan', '--repo', repo.repoRoot, '--json'], s.tokens.landing);
  expect(r).toMatchObject({ code: 0, stderr: '' });
  const report = ScanReportSchema.parse((JSON.parse(r.stdout) as { report: unknown }).report);
  expect(report.results.find((x) => x.commit === picked)).toMatchObject({ status: 'inferred', method: 'patch_id', ownershipId: c.ownershipId, commits: [c1] });

  const text = await cli(['landings', 'scan', '--repo', repo.repoRoot], s.tokens.landing);
  expect(text.stdout).toContain(`${picked.slice(0, 12)}  already inferred by an earlier scan`);
  const p = await cli(['provenance', picked, '--repo', repo.repoRoot], s.tokens.reader);
  expect(p.stdout).toMatch(/^Receipt: +inferred by landings scan \(patch_id\)$/m);
  expect(p.stdout).toContain(`1. ${c1.slice(0, 12)} session cli-prov-C`);
});
