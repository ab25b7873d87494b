/**
 * `od-worktree who` does what it shows in one request (GET /v1/ownership/live) and asks git only
 * what its argument needs: nothing for a worktree's top, one rev-parse for a directory inside it,
 * the repository (rev-parse, worktree list) only for a branch or lane. Requests are counted by a
 * proxy in front of the real API, git processes by a wrapper first on PATH.
 */
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { WhoOutputSchema } from '../../src/contract/cli-output';
import { OwnershipItemSchema } from '../../src/contract/http';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';

const BIN = path.join(__dirname, '../../bin/od-worktree.js');

let s: ApiStack;
let repo: RepoFixture;
let proxy: http.Server;
let proxyUrl: string;
let requests: string[] = [];
let gitLog: string;
let binDir: string;
let ownershipId: string;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(2);
  const wt = repo.worktrees[0]!;
  ownershipId = (
    await s.api(s.tokens.executor).bind({ worktreePath: wt.path, branch: wt.branch, executionSessionId: 'who-live', runtime: 'codex-cli', lane: 'who-lane' })
  ).ownershipId;

  const target = new URL(s.url);
  proxy = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    req.pipe(up);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const addr = proxy.address();
  proxyUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;

  const tmp = mkdtempSync(path.join(process.env.OD_TEST_TMP ?? '/tmp', 'who-git-'));
  binDir = path.join(tmp, 'bin');
  mkdirSync(binDir);
  gitLog = path.join(tmp, 'git.log');
  const realGit = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
  writeFileSync(path.join(binDir, 'git'), `#!/bin/sh\necho "$*" >> '${gitLog}'\nexec '${realGit}' "$@"\n`);
  chmodSync(path.join(binDir, 'git'), 0o755);
});
afterAll(async () => {
  proxy?.close();
  proxy?.closeAllConnections();
  await s?.stop();
});

interface Who {
  code: number;
  stdout: string;
  stderr: string;
  requests: string[];
  gits: string[];
}

/** A git call as its subcommand and arguments, without the overrides every service git run starts with (src/git/safe-env.ts). */
const withoutOverrides = (line: string): string => line.replace(/^--no-pager (-c \S*=\S* )*/, '');

function who(args: string[], cwd: string): Promise<Who> {
  const env: NodeJS.ProcessEnv = { ...process.env, OD_API_URL: proxyUrl, OD_TOKEN: s.tokens.reader, PATH: `${binDir}:${process.env.PATH}` };
  requests = [];
  writeFileSync(gitLog, '');
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, 'who', ...args], { cwd, env, encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({
        code: err ? (typeof err.code === 'number' ? err.code : -1) : 0,
        stdout,
        stderr,
        requests: [...requests],
        gits: readFileSync(gitLog, 'utf8').split('\n').filter(Boolean).map(withoutOverrides),
      }),
    );
  });
}

const parsedWho = (r: Who) => {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  return WhoOutputSchema.parse(JSON.parse(r.stdout));
};

test('who <worktree top> --json: one request, no git process; the record with its liveness', async () => {
  const wt = repo.worktrees[0]!;
  const r = await who([wt.path, '--json'], repo.repoRoot);
  const out = parsedWho(r);
  expect(r.requests).toEqual([`GET /v1/ownership/live?worktreePath=${encodeURIComponent(wt.path)}`]);
  expect(r.gits).toEqual([]);
  expect(out.ownership).toMatchObject({ ownershipId, worktreePath: wt.path, state: 'active', lane: 'who-lane' });
  expect(out.liveness?.status).toBe('live');
  expect(out.ownership.liveness).toEqual(out.liveness);
  expect(out.ownership.branchStatus ?? null).toEqual(out.branch ?? null);
});

test('who from inside a worktree: one rev-parse; by branch or lane: the repository, still one request for what is shown', async () => {
  const wt = repo.worktrees[0]!;
  const sub = path.join(wt.path, 'deep', 'er');
  mkdirSync(sub, { recursive: true });
  const inside = await who(['--json'], sub);
  expect(parsedWho(inside).ownership.ownershipId).toBe(ownershipId);
  expect(inside.gits).toEqual(['rev-parse --show-toplevel']);
  expect(inside.requests).toHaveLength(1);

  const byBranch = await who([wt.branch, '--json'], repo.repoRoot);
  expect(parsedWho(byBranch).ownership.ownershipId).toBe(ownershipId);
  expect(byBranch.requests).toEqual([`GET /v1/ownership/live?branch=${encodeURIComponent(wt.branch)}&repoRoot=${encodeURIComponent(repo.repoRoot)}`]);
  expect(byBranch.gits.length).toBeLessThanOrEqual(2);

  // A lane is found in the list, then shown with its liveness.
  const byLane = await who(['who-lane', '--json'], repo.repoRoot);
  expect(parsedWho(byLane).liveness?.status).toBe('live');
  expect(byLane.requests.at(-1)).toBe(`GET /v1/ownership/live?ownershipId=${ownershipId}`);
});

test('GET /v1/ownership/live: the record of GET /v1/ownership with the live view’s liveness and branch status', async () => {
  const api = s.api(s.tokens.reader);
  const wt = repo.worktrees[0]!;
  const item = OwnershipItemSchema.parse(await api.getLive({ worktreePath: wt.path }));
  const record = await api.get({ worktreePath: wt.path });
  const view = await api.ownership(ownershipId);
  const { liveness, branchStatus, enforcement, observers, ...rest } = item;
  expect(rest).toEqual(record);
  // The worktree's live read-only observers: none registered here.
  expect(observers).toEqual([]);
  expect(liveness).toEqual(view.liveness);
  // The live view's enforcement (this host's agent runs: the hooks enforce the record).
  expect(enforcement).toMatchObject({ hostId: record.hostId, state: 'enforced', hostAgent: 'up' });
  expect(view.enforcement).toMatchObject({ hostId: record.hostId, state: 'enforced', hostAgent: 'up' });
  expect(branchStatus).toEqual(view.projectionSync?.branch ?? null);
  // The same refusals as the record's route.
  await expect(api.getLive({ worktreePath: repo.worktrees[1]!.path })).rejects.toMatchObject({ status: 404, code: 'not_found' });
  await expect(s.api(s.tokens.reader).getLive({})).rejects.toMatchObject({ status: 400 });
});
