import { PACKAGE_VERSION } from '../../src/version';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ListOutputSchema, WhoOutputSchema } from '../../src/contract/cli-output';
import { EXIT } from '../../src/cli/exit-codes';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';

/**
 * od-worktree as a newcomer meets it, the real binary against the real API: a bare host:port
 * URL, a URL that is none, an unknown token, bad input, `who --json` and `list --json` in one
 * shape, the table in 120 columns, Head's age, and running it from outside the project.
 */

const ROOT = path.resolve(__dirname, '../..');
const BIN = path.join(ROOT, 'bin/od-worktree.js');

let s: ApiStack;
let repo: RepoFixture;
let ownershipId = '';

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(1);
  const wt = repo.worktrees[0]!;
  const v = await s.api(s.tokens.executor).bind({
    worktreePath: wt.path,
    branch: wt.branch,
    executionSessionId: 'day-one-cli',
    runtime: 'claude-code',
    lane: 'a lane with a rather long name for the table',
  });
  ownershipId = v.ownershipId;
});
afterAll(async () => s?.stop());

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], o: { env?: Record<string, string | undefined>; cwd?: string } = {}): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, OD_API_URL: s.url, OD_TOKEN: s.tokens.reader };
  for (const [k, v] of Object.entries(o.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return new Promise((resolve) => {
    execFile(file, args, { cwd: o.cwd ?? repo.worktrees[0]!.path, env, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

const cli = (args: string[], o: { env?: Record<string, string | undefined>; cwd?: string } = {}) => run(process.execPath, [BIN, ...args], o);

test('OD_API_URL as host:port works; one that is no URL is a usage error (exit 2) naming the variable', async () => {
  const bare = await cli(['list', '--owners', '--json'], { env: { OD_API_URL: s.url.replace(/^http:\/\//, '') } });
  expect({ code: bare.code, stderr: bare.stderr }).toEqual({ code: EXIT.ok, stderr: '' });
  for (const bad of ['::', 'ftp://127.0.0.1:1']) {
    const r = await cli(['who', '--json'], { env: { OD_API_URL: bad } });
    expect(r.code).toBe(EXIT.usage);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: 'usage' });
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^od-worktree: OD_API_URL is not an http\(s\) URL/)]);
  }
});

test('an unknown or missing token says where npm start keeps its dev tokens', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'od-day-one-data-'));
  const unknown = await cli(['who'], { env: { OD_TOKEN: 'not-a-token', OD_DATA_DIR: dataDir } });
  expect(unknown.code).toBe(EXIT.refused);
  expect(unknown.stderr).toContain(
    `OD_TOKEN is not a token this service knows; \`npm start\` keeps its dev tokens in ${path.join(dataDir, 'dev-principals.json.secret.json')}`,
  );
  const missing = await cli(['who'], { env: { OD_TOKEN: undefined, OD_DATA_DIR: undefined } });
  expect(missing.code).toBe(EXIT.refused);
  expect(missing.stderr).toContain(
    `OD_TOKEN is not set: set it to a bearer token; \`npm start\` keeps its dev tokens in ${path.join(ROOT, '.data', 'dev-principals.json.secret.json')}`,
  );
});

test('bad input prints the fields the API refused', async () => {
  const r = await cli(['list', '--owners', '--state', 'sleeping']);
  expect(r.code).toBe(EXIT.usage);
  expect(r.stderr.trim()).toBe('od-worktree: invalid_input: the message does not match its schema (fields: state.0)');
});

test('who --json and list --json describe an ownership with one shape', async () => {
  const who = WhoOutputSchema.parse(JSON.parse((await cli(['who', '--json'])).stdout));
  const list = ListOutputSchema.parse(JSON.parse((await cli(['list', '--owners', '--repo', repo.repoRoot, '--json'])).stdout));
  const item = list.items.find((i) => i.ownershipId === ownershipId)!;
  // One shape, and `who` adds the worktree's live read-only observers (one worktree's detail; a list leaves them out).
  const { observers, ...whoItem } = who.ownership;
  expect(Object.keys(whoItem).sort()).toEqual(Object.keys(item).sort());
  expect(observers).toEqual([]);
  expect(Object.keys(item)).toEqual(expect.arrayContaining(['liveness', 'branchStatus']));
  expect(who.ownership.liveness?.status).toBe('live');
  expect(item.liveness?.status).toBe('live');
  // the fields beside it, kept for earlier scripts, say the same
  expect(who.liveness?.status).toBe(who.ownership.liveness?.status);
});

test('Head says how long ago the host agent saw it; the table fits 120 columns, --wide prints it whole', async () => {
  const deadline = Date.now() + 30_000;
  while (!(await s.api(s.tokens.reader).ownership(ownershipId)).projectionSync?.branch) {
    if (Date.now() > deadline) throw new Error('no branch status from the host agent');
    await new Promise((r) => setTimeout(r, 200));
  }
  const who = await cli(['who']);
  expect(who.stdout).toMatch(/^Head: +[0-9a-f]{12} \(0 ahead, 0 behind main; seen \S+, (just now|\d+ s ago|\d+ min ago)\)$/m);
  const table = await cli(['list', '--owners', '--repo', repo.repoRoot]);
  expect(table.code).toBe(EXIT.ok);
  for (const line of table.stdout.trimEnd().split('\n')) expect([...line].length).toBeLessThanOrEqual(120);
  const wide = await cli(['list', '--owners', '--repo', repo.repoRoot, '--wide']);
  expect(wide.stdout).toContain(repo.worktrees[0]!.path);
});

test('outside the project: npm exec --offline --prefix runs this checkout’s od-worktree, never a registry package', async () => {
  const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'od-day-one-elsewhere-'));
  const r = await run('npm', ['exec', '--offline', '--prefix', ROOT, '--', 'od-worktree', '--version'], { cwd: elsewhere, env: { npm_config_yes: 'false' } });
  expect({ code: r.code, stdout: r.stdout.trim() }).toEqual({ code: 0, stdout: PACKAGE_VERSION });
});
