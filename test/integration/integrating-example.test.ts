import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ClaimResponse } from '../../src/contract/http';
import { installHooks } from '../../src/git/guard';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';

/**
 * docs/integrating.md's ten-line orchestrator, run as the doc writes it: its code block is taken
 * from the doc (so the doc and this test cannot drift), its one import of the package pointed at
 * this repository's source of that entry point, and run with tsx against the real API, in a
 * worktree with the guard hooks and the git gate first on PATH. Its agent commits: allowed only
 * because the agent runs with the bind answer's tenure env. The same commit with only the session
 * id and epoch (what the doc once said) is refused tenure_unproven.
 */

const ROOT = path.resolve(__dirname, '../..');
const GATE_DIR = path.join(ROOT, 'bin', 'git-gate');

/** The ```ts block right after "A ten-line orchestrator". */
function orchestratorExample(): string {
  const doc = readFileSync(path.join(ROOT, 'docs/integrating.md'), 'utf8');
  const at = doc.indexOf('A ten-line orchestrator');
  expect(at).toBeGreaterThanOrEqual(0);
  const block = /```ts\n([\s\S]*?)```/.exec(doc.slice(at));
  expect(block).not.toBeNull();
  return block![1]!;
}

/** The caller's environment without any of the session variables the gate reads. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('OVERDECK_') || k.startsWith('GIT_')) delete env[k];
  return {
    ...env,
    PATH: `${GATE_DIR}:${process.env.PATH ?? ''}`,
    GIT_AUTHOR_NAME: 'agent',
    GIT_AUTHOR_EMAIL: 'agent@example.invalid',
    GIT_COMMITTER_NAME: 'agent',
    GIT_COMMITTER_EMAIL: 'agent@example.invalid',
    ...extra,
  };
}

/** A process run to its end without blocking this one (the API under test answers from this process). */
function run(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, out });
    });
  });
}

/** The agent's command: a file written, added and committed through the gate. */
const agentCommit = (label: string) => ['sh', '-c', `echo ${label} > ${label}.txt && git add ${label}.txt && git commit -q -m ${label}`];

let s: ApiStack;
let repo: RepoFixture;
let dir: string;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(2);
  await installHooks(repo.repoRoot);
  dir = mkdtempSync(path.join(process.env.OD_TEST_TMP ?? os.tmpdir(), 'integrating-'));
}, 120_000);
afterAll(async () => s?.stop());

test('the example is ten lines or so of code and imports the package by its name', () => {
  const code = orchestratorExample();
  expect(code.split('\n').filter((l) => l.trim() !== '').length).toBeLessThanOrEqual(11);
  expect(code).toContain("from 'worktree-ownership/http'");
});

test('the orchestrator of docs/integrating.md, as written: binds, runs its agent with the tenure (the agent commits under the strict gate), releases', async () => {
  const code = orchestratorExample().replace("from 'worktree-ownership/http'", `from ${JSON.stringify(path.join(ROOT, 'src/exports/http.ts'))}`);
  const file = path.join(dir, 'orchestrator.mts');
  writeFileSync(file, code);
  const wt = repo.worktrees[0]!;
  const before = git(wt.path, 'rev-parse', 'HEAD');
  const res = await run(process.execPath, ['--import', 'tsx', file, wt.path, wt.branch, ...agentCommit('by-the-agent')], {
    cwd: ROOT,
    env: cleanEnv({ OD_API_URL: s.url, OD_TOKEN: s.tokens.executor }),
    timeoutMs: 120_000,
  });
  expect({ status: res.status, out: res.status === 0 ? '' : res.out }).toEqual({ status: 0, out: '' });
  // The agent's commit went through the gate and the hooks.
  expect(git(wt.path, 'rev-parse', 'HEAD^')).toBe(before);
  expect(git(wt.path, 'log', '-1', '--format=%s')).toBe('by-the-agent');
  // And the orchestrator released the worktree when its agent was done.
  const record = await s.raw('GET', `/v1/ownership?worktreePath=${encodeURIComponent(wt.path)}`, { token: s.tokens.reader });
  expect(record.status).toBe(200);
  expect(record.body).toMatchObject({ state: 'released', owner: { executionSessionId: 'sess-42' } });
}, 180_000);

test('without the tenure secret (the session id and epoch alone) the same agent is refused tenure_unproven', async () => {
  const wt = repo.worktrees[1]!;
  const bound = await s.raw('POST', '/v1/bind', {
    token: s.tokens.executor,
    body: { worktreePath: wt.path, branch: wt.branch, executionSessionId: 'sess-43', runtime: 'codex-cli' },
  });
  expect(bound.status).toBe(200);
  const own = bound.body as ClaimResponse;
  // Wait for the projection (with its tenure hash) on the worktree, so the gate judges this tenure.
  const deadline = Date.now() + 30_000;
  const epochOf = () => spawnSync('git', ['config', '--worktree', '--includes', 'overdeck.owner.epoch'], { cwd: wt.path, encoding: 'utf8' }).stdout.trim();
  while (epochOf() !== String(own.epoch) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const [cmd, ...args] = agentCommit('without-secret');
  const res = spawnSync(cmd!, args, {
    cwd: wt.path,
    env: cleanEnv({ OVERDECK_EXECUTION_SESSION_ID: 'sess-43', OVERDECK_EPOCH: String(own.epoch) }),
    encoding: 'utf8',
  });
  expect(res.status).not.toBe(0);
  // The gate's refusal (reason tenure_unproven) says what is missing.
  expect(`${res.stdout}${res.stderr}`).toContain("without this tenure's secret");
  // With the answer's tenure env, the same command goes through.
  const ok = spawnSync(cmd!, args, { cwd: wt.path, env: cleanEnv({ ...own.tenure!.env }), encoding: 'utf8' });
  expect({ status: ok.status, out: ok.status === 0 ? '' : `${ok.stdout}${ok.stderr}` }).toEqual({ status: 0, out: '' });
}, 120_000);
