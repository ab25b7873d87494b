import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { EXIT } from '../../src/cli/exit-codes';
import {
  ClaimOutputSchema,
  CliErrorSchema,
  HeartbeatOutputSchema,
  HistoryOutputSchema,
  ListOutputSchema,
  OwnershipOutputSchema,
  ProvenanceOutputSchema,
  WhoOutputSchema,
} from '../../src/contract/cli-output';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { runCli, type CliResult } from '../support/cli';

/** The real od-worktree binary against the real API server: --json output validated by the exported schemas, exit codes as documented. */

const CONV = '5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a';

let s: ApiStack;
let repo: RepoFixture;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(3);
});
afterAll(async () => s?.stop());

function cli(args: string[], o: { token?: string | null; cwd?: string; url?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, OD_API_URL: o.url ?? s.url };
  delete env.OD_TOKEN;
  delete env.OVERDECK_EXECUTION_SESSION_ID;
  delete env.OVERDECK_EPOCH;
  Object.assign(env, o.env ?? {});
  if (o.token !== null) env.OD_TOKEN = o.token ?? s.tokens.executor;
  return runCli(args, { cwd: o.cwd ?? repo.worktrees[0]!.path, env });
}

function parsed<S extends z.ZodType>(r: CliResult, schema: S, code: number = EXIT.ok): z.output<S> {
  expect({ code: r.code, stderr: r.code === code ? '' : r.stderr }).toEqual({ code, stderr: '' });
  return schema.parse(JSON.parse(r.stdout));
}

function refusedWith(r: CliResult, exit: number, code: string): void {
  expect({ exit: r.code, code: CliErrorSchema.parse(JSON.parse(r.stdout)).code }).toEqual({ exit, code });
  // one line on stderr
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
}

let ownershipId = '';

test('claim (online) binds the current worktree; another worker is refused (exit 1)', async () => {
  // the executor's conversation first, so the record carries it
  const observed = await s.api(s.tokens.executor).reportConversation({
    executor: 'chatgpt-web',
    executorInstanceId: 'ext-cli',
    sessionGeneration: 'g1',
    sequence: 1,
    conversation: { conversationId: CONV, conversationUrl: `https://chatgpt.com/c/${CONV}`, title: 'CLI lane', observedAt: new Date().toISOString() },
  });
  expect(observed.firstBound).toBe(true);

  const out = parsed(
    await cli(['claim', '--session', 'cli-s0', '--lane', 'cli-lane', '--plan', 'docs/cli.md', '--pid', String(process.pid), '--json']),
    ClaimOutputSchema,
  );
  expect(out.tenure).toMatchObject({ executionSessionId: 'cli-s0', epoch: 1, env: { OVERDECK_EXECUTION_SESSION_ID: 'cli-s0', OVERDECK_EPOCH: '1' } });
  expect(out.ownership).toMatchObject({
    worktreePath: repo.worktrees[0]!.path,
    branch: repo.worktrees[0]!.branch,
    repoRoot: repo.repoRoot,
    epoch: 1,
    lane: 'cli-lane',
  });
  expect(out.ownership.owner).toMatchObject({ executionSessionId: 'cli-s0', runtime: 'chatgpt-web', conversation: { conversationId: CONV } });
  expect(out.ownership.owner?.process?.pid).toBe(process.pid);
  ownershipId = out.ownership.ownershipId;

  const human = await cli(['claim', '--session', 'cli-s0']);
  expect(human.code).toBe(EXIT.ok);
  expect(human.stdout).toContain(`ownership ${ownershipId}, epoch 1`);
  expect(human.stdout).toContain('OVERDECK_EXECUTION_SESSION_ID=cli-s0 OVERDECK_EPOCH=1');

  refusedWith(await cli(['claim', '--session', 'cli-intruder', '--json'], { token: s.tokens.otherExecutor }), EXIT.refused, 'worktree_owned');
  refusedWith(await cli(['claim', '--session', 'x', '--worker', s.otherWorkerId, '--json'], { cwd: repo.worktrees[1]!.path }), EXIT.refused, 'worker_mismatch');
  refusedWith(await cli(['claim', '--session', 'has spaces', '--json'], { cwd: repo.worktrees[1]!.path }), EXIT.usage, 'invalid_input');
  refusedWith(await cli(['claim', '--json'], { cwd: repo.worktrees[1]!.path }), EXIT.usage, 'usage');
  refusedWith(await cli(['claim', '--session', 'x', '--json'], { cwd: repo.worktrees[1]!.path, token: s.tokens.reader }), EXIT.refused, 'forbidden');
});

test('who: by the current worktree, a path, a branch, a lane and a worktree name; the layout of docs/cli.md#who', async () => {
  const here = parsed(await cli(['who', '--json']), WhoOutputSchema);
  expect(here.ownership.ownershipId).toBe(ownershipId);
  expect(here.liveness?.status).toBe('live');
  for (const target of [repo.worktrees[0]!.path, repo.worktrees[0]!.branch, 'cli-lane', path.basename(repo.worktrees[0]!.path)]) {
    const r = parsed(await cli(['who', target, '--json'], { cwd: repo.repoRoot }), WhoOutputSchema);
    expect({ target, id: r.ownership.ownershipId }).toEqual({ target, id: ownershipId });
  }

  const text = await cli(['who']);
  expect(text.code).toBe(EXIT.ok);
  const lines = text.stdout.split('\n');
  expect(lines.slice(0, 12).map((l) => l.slice(0, 15))).toEqual([
    'Worktree:      ',
    'Branch:        ',
    'State:         ',
    'Lane:          ',
    'Plan:          ',
    'Owner runtime: ',
    'Conversation:  ',
    'Conversation:  ',
    'Worker:        ',
    'Session:       ',
    'Last activity: ',
    'Latest WIP:    ',
  ]);
  expect(text.stdout).toContain('State:         ACTIVE');
  expect(text.stdout).toContain('Owner runtime: ChatGPT Web');
  expect(text.stdout).toContain('Conversation:  CLI lane');
  expect(text.stdout).toContain(`Conversation:  https://chatgpt.com/c/${CONV}`);
  // a reader sees the conversation redacted, never guessed
  const asReader = await cli(['who'], { token: s.tokens.reader });
  expect(asReader.stdout).toContain('Conversation:  [redacted]');

  refusedWith(await cli(['who', 'wt/no-such-branch', '--json']), EXIT.notFound, 'not_found');
  refusedWith(await cli(['who', '--json'], { cwd: repo.worktrees[2]!.path }), EXIT.notFound, 'not_found');
  refusedWith(await cli(['who', '--json'], { token: null }), EXIT.refused, 'unauthenticated');
  refusedWith(await cli(['who', '--json'], { token: 'wrong' }), EXIT.refused, 'unauthenticated');
});

test('the service unreachable: one clear line, exit 4', async () => {
  const r = await cli(['who'], { url: 'http://127.0.0.1:1' });
  expect(r.code).toBe(EXIT.unreachable);
  expect(r.stdout).toBe('');
  expect(r.stderr).toBe('od-worktree: the ownership service is unreachable at http://127.0.0.1:1 (is it running? set OD_API_URL)\n');
  refusedWith(await cli(['list', '--owners', '--json'], { url: 'http://127.0.0.1:1' }), EXIT.unreachable, 'unreachable');
});

test('list --owners: compact table, filters, --json', async () => {
  const out = parsed(await cli(['list', '--owners', '--repo', repo.repoRoot, '--state', 'active', '--json']), ListOutputSchema);
  expect(out.items.map((i) => i.ownershipId)).toEqual([ownershipId]);
  expect(out.items[0]!.liveness?.status).toBe('live');
  const table = await cli(['list', '--owners', '--repo', repo.repoRoot], { token: s.tokens.admin });
  expect(table.code).toBe(EXIT.ok);
  const [head, row] = table.stdout.trim().split('\n');
  expect(head!.split(/\s{2,}/)).toEqual(['WORKTREE', 'BRANCH', 'HEAD', 'STATE', 'LIVENESS', 'RUNTIME', 'CONVERSATION', 'ACTIVITY', 'EPOCH']);
  // HEAD comes from the host agent: a short sha and ahead/behind the base branch.
  expect(row).toMatch(/\s[0-9a-f]{7} \+\d+\/-\d+\s+ACTIVE/);
  // The last activity as an age in the default table (docs/cli.md).
  expect(row).toMatch(/ACTIVE\s+live\s+ChatGPT Web\s+CLI lane\s+(just now|\d+ s ago|\d+ min ago)\s+1$/);
  expect(parsed(await cli(['list', '--owners', '--repo', repo.repoRoot, '--state', 'released', '--json']), ListOutputSchema).items).toEqual([]);
  refusedWith(await cli(['list', '--owners', '--state', 'sleeping', '--json']), EXIT.usage, 'invalid_input');
  refusedWith(await cli(['list', '--owners', '--limit', 'x', '--json']), EXIT.usage, 'usage');
});

test('heartbeat and release for scripts: fenced by session and epoch', async () => {
  const hb = parsed(await cli(['heartbeat', '--session', 'cli-s0', '--epoch', '1', '--json']), HeartbeatOutputSchema);
  expect(hb).toEqual({ ok: true, ownershipId, accepted: true });
  const byEnv = await cli(['heartbeat', '--ownership', ownershipId, '--json'], { env: { OVERDECK_EXECUTION_SESSION_ID: 'cli-s0', OVERDECK_EPOCH: '1' } });
  expect(parsed(byEnv, HeartbeatOutputSchema).ownershipId).toBe(ownershipId);
  refusedWith(await cli(['heartbeat', '--session', 'cli-s0', '--json']), EXIT.usage, 'usage');
  refusedWith(await cli(['heartbeat', '--ownership', 'nope', '--session', 'cli-s0', '--epoch', '1', '--json']), EXIT.usage, 'usage');
  refusedWith(await cli(['heartbeat', '--session', 'cli-s0', '--epoch', '1', '--json'], { token: s.tokens.otherExecutor }), EXIT.refused, 'worker_mismatch');

  refusedWith(await cli(['release', '--session', 'cli-s0', '--epoch', '2', '--json']), EXIT.refused, 'stale_epoch');
  refusedWith(await cli(['release', '--session', 'cli-other', '--epoch', '1', '--json']), EXIT.refused, 'not_owner');
  const released = parsed(await cli(['release', '--session', 'cli-s0', '--epoch', '1', '--reason', 'done', '--json']), OwnershipOutputSchema);
  expect(released.ownership.state).toBe('released');
  // claim again after the release: epoch 2
  const again = parsed(await cli(['claim', '--session', 'cli-s1', '--json']), ClaimOutputSchema);
  expect(again.ownership).toMatchObject({ ownershipId, epoch: 2 });
});

test('history and provenance after a real landing', async () => {
  const wt = repo.worktrees[0]!;
  writeFileSync(path.join(wt.path, 'cli.txt'), 'cli\n');
  git(wt.path, 'add', 'cli.txt');
  git(wt.path, 'commit', '-q', '-m', 'cli work');
  const sourceHead = git(wt.path, 'rev-parse', 'HEAD');
  git(repo.repoRoot, 'merge', '-q', '--no-ff', '-m', 'land cli', wt.branch);
  const landed = git(repo.repoRoot, 'rev-parse', 'HEAD');
  const receipt = await s.api(s.tokens.landing).land({ ownershipId, sourceHead, landedBranch: 'main', landedHead: landed, landedAt: new Date().toISOString() });
  expect(receipt.status).toBe('recorded');

  for (const target of [wt.path, wt.branch, landed.slice(0, 9)]) {
    const h = parsed(await cli(['history', target, '--json'], { cwd: repo.repoRoot }), HistoryOutputSchema);
    expect({ target, ids: h.ownerships.map((o) => o.ownershipId) }).toEqual({ target, ids: [ownershipId] });
  }
  const text = await cli(['history', wt.branch]);
  expect(text.stdout).toContain(`Ownership ${ownershipId}  LANDED`);
  expect(text.stdout).toMatch(/epoch 2 {2}claim after release from cli-s0: cli-s1/);
  refusedWith(await cli(['history', 'wt/never', '--json']), EXIT.notFound, 'not_found');

  const prov = parsed(await cli(['provenance', landed, '--json'], { cwd: repo.repoRoot }), ProvenanceOutputSchema);
  expect(prov.provenance).toMatchObject({
    commit: landed,
    ownershipId,
    executionSessionId: 'cli-s1',
    conversation: { conversationId: CONV, title: 'CLI lane' },
  });
  const human = await cli(['provenance', landed.slice(0, 10), '--repo', repo.repoRoot], { cwd: '/' });
  expect(human.code).toBe(EXIT.ok);
  expect(human.stdout).toContain('Conversation:     CLI lane');
  expect(human.stdout).toContain(`Conversation URL: https://chatgpt.com/c/${CONV}`);
  refusedWith(await cli(['provenance', 'xyz', '--json']), EXIT.usage, 'invalid_input');
  const initial = git(repo.repoRoot, 'rev-list', '--max-parents=0', 'HEAD');
  refusedWith(await cli(['provenance', initial, '--json'], { cwd: repo.repoRoot }), EXIT.notFound, 'not_found');
});

test('who and history by the path of a removed worktree (absolute, ./…, relative with a slash); a branch spelled like a path still resolves', async () => {
  const wt = repo.worktrees[2]!;
  const bound = await s
    .api(s.tokens.executor)
    .bind({ repoRoot: repo.repoRoot, worktreePath: wt.path, branch: wt.branch, executionSessionId: 'cli-gone', runtime: 'codex-cli' });
  await s.api(s.tokens.executor).release(bound.ownershipId, { executionSessionId: 'cli-gone', epoch: 1 });
  git(repo.repoRoot, 'worktree', 'remove', '-f', '-f', wt.path);
  expect(existsSync(wt.path)).toBe(false);

  const rel = path.relative(repo.repoRoot, wt.path);
  for (const target of [wt.path, rel, `./${rel}`]) {
    const who = parsed(await cli(['who', target, '--json'], { cwd: repo.repoRoot }), WhoOutputSchema);
    expect({ target, id: who.ownership.ownershipId }).toEqual({ target, id: bound.ownershipId });
    const h = parsed(await cli(['history', target, '--json'], { cwd: repo.repoRoot }), HistoryOutputSchema);
    expect({ target, ids: h.ownerships.map((o) => o.ownershipId) }).toEqual({ target, ids: [bound.ownershipId] });
  }
  // From elsewhere, the relative spelling names another place: not found there, never guessed.
  refusedWith(await cli(['who', `./${rel}`, '--json'], { cwd: repo.worktrees[1]!.path }), EXIT.notFound, 'not_found');
  refusedWith(await cli(['history', path.join(repo.repoRoot, '.worktrees', 'never'), '--json']), EXIT.notFound, 'not_found');

  // `wt/feature-0` with a `wt/` directory beside it: tried as a path first, then found as the branch.
  mkdirSync(path.join(repo.repoRoot, 'wt'));
  const byBranch = parsed(await cli(['who', repo.worktrees[0]!.branch, '--json'], { cwd: repo.repoRoot }), WhoOutputSchema);
  expect(byBranch.ownership.ownershipId).toBe(ownershipId);
  const hb = parsed(await cli(['history', repo.worktrees[0]!.branch, '--json'], { cwd: repo.repoRoot }), HistoryOutputSchema);
  expect(hb.ownerships.map((o) => o.ownershipId)).toEqual([ownershipId]);
});
