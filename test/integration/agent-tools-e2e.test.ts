import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { HookSettings } from '../../src/adapters/install';
import { installHooks } from '../../src/git/guard';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { runCli } from '../support/cli';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';

/**
 * The adapters end to end (docs/integrating.md#agent-tools): `od-worktree integrate` installs the
 * hooks into a settings file, and a scripted stand-in for each tool sends the recorded payloads
 * (test/fixtures/adapters/) to exactly the commands installed there, as the tool would (stdin,
 * its cwd, its environment; Claude Code's session env file sourced before each shell command),
 * against the real stack: Temporal, PostgreSQL, the API, the host agent, git with the guard hooks.
 */

const ROOT = path.resolve(__dirname, '../..');
const FIXTURES = path.join(ROOT, 'test/fixtures/adapters');

let s: ApiStack;
let dir: string;

beforeAll(async () => {
  s = await startApiStack();
  dir = mkdtempSync(path.join(process.env.OD_TEST_TMP ?? os.tmpdir(), 'agent-tools-'));
}, 120_000);
afterAll(async () => s?.stop());

/** The environment a tool gives its hooks: the caller's, with the service's address and an executor token, and no session variables. */
function toolEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('OVERDECK_') || k.startsWith('GIT_') || k === 'CLAUDE_ENV_FILE') delete env[k];
  return {
    ...env,
    OD_API_URL: s.url,
    OD_TOKEN: s.tokens.executor,
    GIT_AUTHOR_NAME: 'agent',
    GIT_AUTHOR_EMAIL: 'agent@example.invalid',
    GIT_COMMITTER_NAME: 'agent',
    GIT_COMMITTER_EMAIL: 'agent@example.invalid',
    ...extra,
  };
}

function sh(script: string, o: { cwd: string; env: NodeJS.ProcessEnv; input?: string }): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', script], { cwd: o.cwd, env: o.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (x: string) => (stdout += x));
    child.stderr.setEncoding('utf8').on('data', (x: string) => (stderr += x));
    child.once('error', reject);
    child.once('close', (code) => resolve({ status: code ?? -1, stdout, stderr }));
    // A command that exits without reading its input (git config does) closes the pipe first: its answer is its exit status, not EPIPE.
    child.stdin.on('error', () => {});
    child.stdin.end(o.input ?? '');
  });
}

/** A tool as far as its hooks see it: the installed file, one session, the recorded payloads. */
class StandIn {
  readonly session = randomUUID();
  readonly envFile: string;
  constructor(
    readonly tool: 'claude-code' | 'codex',
    readonly settingsFile: string,
  ) {
    this.envFile = path.join(dir, `env-${this.session}.sh`);
    writeFileSync(this.envFile, '');
  }

  /** The commands the installed file runs for `hookEvent` (for PreToolUse, those whose matcher takes `toolName`). */
  commands(hookEvent: string, toolName?: string): string[] {
    const settings = JSON.parse(readFileSync(this.settingsFile, 'utf8')) as HookSettings;
    return (settings.hooks?.[hookEvent] ?? [])
      .filter((g) => toolName === undefined || g.matcher === undefined || new RegExp(`^(${g.matcher})$`).test(toolName))
      .flatMap((g) => g.hooks.map((h) => h.command!))
      .filter((c) => c.includes(' hook '));
  }

  payload(event: string, fill: Record<string, string>): string {
    let text = readFileSync(path.join(FIXTURES, this.tool, `${event}.json`), 'utf8');
    for (const [k, v] of Object.entries({ SESSION: this.session, TRANSCRIPT: path.join(dir, `${this.session}.jsonl`), ...fill }))
      text = text.replaceAll(`{{${k}}}`, v.replace(/\\/g, '\\\\').replace(/"/g, '\\"'));
    return text;
  }

  /** Sends the recorded payload of `event` to the one command installed for it, in `cwd`. */
  async send(event: string, hookEvent: string, fill: Record<string, string> & { CWD: string }, toolName?: string, env: Record<string, string> = {}) {
    const [command, ...more] = this.commands(hookEvent, toolName);
    expect({ hookEvent, command: typeof command, more }).toEqual({ hookEvent, command: 'string', more: [] });
    const extra: Record<string, string> = { ...env, ...(hookEvent === 'SessionStart' && this.tool === 'claude-code' ? { CLAUDE_ENV_FILE: this.envFile } : {}) };
    return sh(command!, { cwd: fill.CWD, env: toolEnv(extra), input: this.payload(event, fill) });
  }

  /** A shell command as Claude Code's Bash tool runs it: the session env file sourced first. */
  bash(command: string, cwd: string) {
    return sh(`. '${this.envFile}' && ${command}`, { cwd, env: toolEnv() });
  }
}

/** The repository's registry as a tool without us reads it: the file and jq. */
async function registryOwners(repoRoot: string): Promise<string[]> {
  const r = await sh(`jq -r '.worktrees[] | "\\(.path) \\(.executionSessionId) \\(.epoch)"' .git/od-worktree/registry.json`, { cwd: repoRoot, env: toolEnv() });
  expect(r.stderr).toBe('');
  return r.stdout.split('\n').filter(Boolean);
}

async function record(worktreePath: string): Promise<{ state: string; epoch: number; ownershipId: string; owner?: { executionSessionId: string } }> {
  const r = await s.raw('GET', `/v1/ownership?worktreePath=${encodeURIComponent(worktreePath)}`, { token: s.tokens.reader });
  expect(r.status).toBe(200);
  return r.body as { state: string; epoch: number; ownershipId: string; owner?: { executionSessionId: string } };
}

/** The host agent projects the bind a moment after it answers: the gate judges what is projected. */
async function projected(worktreePath: string, session: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  const owner = async () =>
    (await sh('git config --worktree --includes overdeck.owner.execution-session-id', { cwd: worktreePath, env: toolEnv() })).stdout.trim();
  while ((await owner()) !== session && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(await owner()).toBe(session);
}

describe('claude-code', () => {
  let repo: RepoFixture;
  let settings: string;
  beforeAll(async () => {
    repo = makeRepo(0);
    await installHooks(repo.repoRoot);
    settings = path.join(dir, 'claude-settings.json');
    writeFileSync(settings, readFileSync(path.join(FIXTURES, 'claude-code/settings.user.json')));
    const installed = await runCli(['integrate', 'claude-code', '--settings', settings], { cwd: repo.repoRoot, env: toolEnv() });
    expect({ code: installed.code, stderr: installed.stderr }).toEqual({ code: 0, stderr: '' });
  }, 60_000);

  test('a session binds the worktree it creates, commits there through the gate, refuses another session, removes losslessly and releases at its end', async () => {
    const a = new StandIn('claude-code', settings);
    const b = new StandIn('claude-code', settings);
    const sessionA = `claude-code-${a.session}`;
    const top = repo.repoRoot;

    // SessionStart: the env file names the session and holds no secret.
    expect((await a.send('session-start', 'SessionStart', { CWD: top })).status).toBe(0);
    expect((await b.send('session-start', 'SessionStart', { CWD: top })).status).toBe(0);
    expect(readFileSync(a.envFile, 'utf8')).toContain(`OVERDECK_EXECUTION_SESSION_ID='${sessionA}'`);
    expect(readFileSync(a.envFile, 'utf8')).not.toMatch(/TENURE_SECRET=/);

    // WorktreeCreate: made, bound, its path on stdout.
    const created = await a.send('worktree-create', 'WorktreeCreate', { CWD: top, NAME: 'lane-a' });
    const laneA = path.join(top, '.claude/worktrees/lane-a');
    expect({ status: created.status, stdout: created.stdout, stderr: created.stderr }).toEqual({ status: 0, stdout: `${laneA}\n`, stderr: '' });
    expect(await record(laneA)).toMatchObject({ state: 'active', owner: { executionSessionId: sessionA } });
    await projected(laneA, sessionA);
    // The host agent's projection wrote the registry other tools read.
    expect(await registryOwners(top)).toEqual([`${laneA} ${sessionA} ${(await record(laneA)).epoch}`]);

    // Another session creating the same worktree is refused; the worktree stays A's.
    const taken = await b.send('worktree-create', 'WorktreeCreate', { CWD: top, NAME: 'lane-a' });
    expect({ status: taken.status, stdout: taken.stdout, stderr: taken.stderr }).toEqual({
      status: 1,
      stdout: '',
      stderr: expect.stringContaining(`refused: worktree_owned: ${laneA} is owned by session ${sessionA}`),
    });
    expect(await record(laneA)).toMatchObject({ state: 'active', owner: { executionSessionId: sessionA } });

    // A's shell commits in its worktree: the env file fetched the tenure, the gate and the hooks let it through.
    const before = git(laneA, 'rev-parse', 'HEAD');
    const commit = await a.bash('echo a > a.txt && git add a.txt && git commit -q -m by-a', laneA);
    expect({ status: commit.status, stderr: commit.stderr }).toEqual({ status: 0, stderr: '' });
    expect(git(laneA, 'rev-parse', 'HEAD^')).toBe(before);
    // B's shell is refused there (the hooks, whatever the PreToolUse said).
    const bCommit = await b.bash('echo b > b.txt && git add b.txt && git commit -q -m by-b', laneA);
    expect(bCommit.status).not.toBe(0);
    expect(git(laneA, 'log', '-1', '--format=%s')).toBe('by-a');

    // PreToolUse: the gate's check with each session's identity.
    const mine = await a.send('pre-tool-use', 'PreToolUse', { CWD: laneA, COMMAND: 'git reset --hard HEAD' }, 'Bash');
    expect({ status: mine.status, stderr: mine.stderr }).toEqual({ status: 0, stderr: '' });
    const theirs = await b.send('pre-tool-use', 'PreToolUse', { CWD: laneA, COMMAND: 'git reset --hard HEAD' }, 'Bash');
    expect({ status: theirs.status, stderr: theirs.stderr }).toEqual({ status: 2, stderr: expect.stringContaining(`owned by session ${sessionA}`) });
    expect(a.commands('PreToolUse', 'Edit')).toEqual([]);

    // WorktreeRemove of a worktree with a commit landed nowhere: kept, and still A's.
    const kept = await a.send('worktree-remove', 'WorktreeRemove', { CWD: top, WORKTREE: laneA });
    expect({ status: kept.status, stderr: kept.stderr }).toEqual({ status: 1, stderr: expect.stringContaining('unlanded_commits') });
    expect(existsSync(path.join(laneA, 'a.txt'))).toBe(true);
    expect(await record(laneA)).toMatchObject({ state: 'active', owner: { executionSessionId: sessionA } });

    // A clean worktree of A's, with an untracked file: removed through the lossless removal, the file kept in a snapshot.
    const laneB = (await a.send('worktree-create', 'WorktreeCreate', { CWD: top, NAME: 'lane-b' })).stdout.trim();
    await projected(laneB, sessionA);
    writeFileSync(path.join(laneB, 'notes.txt'), 'keep me\n');
    const removed = await a.send('worktree-remove', 'WorktreeRemove', { CWD: top, WORKTREE: laneB });
    expect({ status: removed.status, stderr: removed.stderr }).toEqual({
      status: 0,
      stderr: expect.stringMatching(/removed .*lane-b \(1 files kept in refs\/overdeck\/wip\//),
    });
    expect(existsSync(laneB)).toBe(false);

    // SessionEnd: A's remaining worktree is released.
    const ended = await a.send('session-end', 'SessionEnd', { CWD: top });
    expect({ status: ended.status, stderr: ended.stderr }).toEqual({ status: 0, stderr: expect.stringContaining(`released ${laneA}`) });
    expect(await record(laneA)).toMatchObject({ state: 'released' });
    const deadline = Date.now() + 30_000;
    while ((await registryOwners(top)).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await registryOwners(top)).toEqual([]);
  }, 300_000);

  test('with OD_HANDOFF_TO set, the end of the session hands its worktrees off instead', async () => {
    const e = new StandIn('claude-code', settings);
    const top = repo.repoRoot;
    const lane = (await e.send('worktree-create', 'WorktreeCreate', { CWD: top, NAME: 'lane-e' })).stdout.trim();
    expect(await record(lane)).toMatchObject({ state: 'active', owner: { executionSessionId: `claude-code-${e.session}` } });
    const ended = await e.send('session-end', 'SessionEnd', { CWD: lane }, undefined, { OD_HANDOFF_TO: 'claude-code-successor' });
    expect({ status: ended.status, stderr: ended.stderr }).toEqual({
      status: 0,
      stderr: expect.stringContaining(`handed ${lane} off to claude-code-successor`),
    });
    expect(await record(lane)).toMatchObject({ state: 'handoff_pending' });
  }, 120_000);
});

describe('codex', () => {
  test('a session binds the worktree it starts in, the gate judges each session by its identity, and a turn beats', async () => {
    const repo = makeRepo(1);
    await installHooks(repo.repoRoot);
    const file = path.join(dir, 'codex-hooks.json');
    writeFileSync(file, readFileSync(path.join(FIXTURES, 'codex/hooks.user.json')));
    expect((await runCli(['integrate', 'codex', '--settings', file], { cwd: repo.repoRoot, env: toolEnv() })).code).toBe(0);
    const c = new StandIn('codex', file);
    const d = new StandIn('codex', file);
    const wt = repo.worktrees[0]!.path;

    const started = await c.send('session-start', 'SessionStart', { CWD: wt });
    expect({ status: started.status, stdout: started.stdout }).toEqual({
      status: 0,
      stdout: expect.stringContaining(`this session (codex-${c.session}) owns`),
    });
    expect(await record(wt)).toMatchObject({ state: 'active', owner: { executionSessionId: `codex-${c.session}` } });
    await projected(wt, `codex-${c.session}`);

    const other = await d.send('session-start', 'SessionStart', { CWD: wt });
    expect(other.stdout).toContain(`owned by session codex-${c.session}`);
    const refused = await d.send('pre-tool-use', 'PreToolUse', { CWD: wt, COMMAND: 'git checkout -- .' }, 'Bash');
    expect({ status: refused.status, stderr: refused.stderr }).toEqual({ status: 2, stderr: expect.stringContaining(`owned by session codex-${c.session}`) });
    const allowed = await c.send('pre-tool-use', 'PreToolUse', { CWD: wt, COMMAND: 'git checkout -- .' }, 'Bash');
    expect({ status: allowed.status, stderr: allowed.stderr }).toEqual({ status: 0, stderr: '' });
    expect((await c.send('stop', 'Stop', { CWD: wt })).status).toBe(0);
    expect(await record(wt)).toMatchObject({ state: 'active', owner: { executionSessionId: `codex-${c.session}` } });
  }, 180_000);
});
