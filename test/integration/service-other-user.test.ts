/**
 * The service as its own Unix user (docs/operations.md#users): the host agent's activities run as
 * one user against a repository and worktree another user (the agent) owns, shared through a
 * group (`git init --shared=group`). Before safe.directory was passed (src/git/safe-directory.ts)
 * every discovering git call of the service died with `detected dubious ownership`, since the
 * service reads no global config where an operator could have said otherwise.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cannotRunHere } from '../support/ci';

const ROOT = path.resolve(__dirname, '../..');
const AGENT = 'odt-agent';
const SERVICE = 'odt-service';
const GROUP = 'odt-share';

const isRoot = process.getuid?.() === 0;
const hasSetpriv = spawnSync('setpriv', ['--version']).status === 0;

function ensureUsers(): void {
  if (spawnSync('getent', ['group', GROUP]).status !== 0) execFileSync('groupadd', [GROUP]);
  for (const u of [AGENT, SERVICE])
    if (spawnSync('id', [u]).status !== 0) execFileSync('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', '--groups', GROUP, u]);
}

const idOf = (flag: '-u' | '-g', u: string) => execFileSync('id', [flag, u], { encoding: 'utf8' }).trim();

/** `cmd` as user `u` (its own uid and gid, its groups), with a plain environment. */
function runAs(u: string, cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  return spawnSync('setpriv', [`--reuid=${idOf('-u', u)}`, `--regid=${idOf('-g', u)}`, '--init-groups', cmd, ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir(), LANG: 'C', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', ...env },
    timeout: 120_000,
  });
}

/** The agent's git, with the umask the deployment asks of agents (docs/operations.md#users): what it creates, its group may write. */
function agentGit(cwd: string, ...args: string[]): string {
  const r = runAs(AGENT, 'sh', ['-c', 'umask 002 && exec git -c user.name=agent -c user.email=agent@example.invalid "$@"', 'git', ...args], cwd);
  if (r.status !== 0) throw new Error(`agent git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

if (!isRoot || !hasSetpriv) {
  cannotRunHere('the service runs git as another Unix user than the agents', !isRoot ? 'needs root (useradd, setpriv)' : 'setpriv is missing');
} else {
  describe('the service as another Unix user than the agents', () => {
    let base: string;
    let repo: string;
    let wt: string;

    beforeAll(() => {
      ensureUsers();
      base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'od-svc-user-')));
      chmodSync(base, 0o755);
      const shared = path.join(base, 'repos');
      execFileSync('mkdir', [shared]);
      chownSync(shared, Number(idOf('-u', AGENT)), Number(execFileSync('getent', ['group', GROUP], { encoding: 'utf8' }).split(':')[2]));
      chmodSync(shared, 0o2775);
      repo = path.join(shared, 'repo');
      wt = path.join(shared, 'wt');
      // Everything below is the agent's: its repository, its worktree, its files.
      agentGit(shared, 'init', '-q', '--shared=group', '-b', 'main', repo);
      agentGit(repo, 'commit', '-q', '--allow-empty', '-m', 'first');
      agentGit(repo, 'worktree', 'add', '-q', '-b', 'feat', wt);
      const dirty = runAs(AGENT, 'sh', ['-c', 'echo work > notes.txt'], wt);
      expect(dirty.status).toBe(0);
    });

    afterAll(() => {
      if (base) rmSync(base, { recursive: true, force: true });
    });

    test('the fixture is live: a plain git as the service user is refused as dubious ownership', () => {
      const r = runAs(SERVICE, 'git', ['rev-parse', 'HEAD'], wt);
      expect(r.status).toBe(128);
      expect(r.stderr).toMatch(/dubious ownership/);
    });

    /** The host agent's activities (service-other-user.script.ts) as the service user: what each step answered. */
    function asService(phase: 'hold' | 'release' | 'liveness', first = base): Record<string, { ok?: unknown; error?: string }> {
      const r = runAs(
        SERVICE,
        path.join(ROOT, 'node_modules', '.bin', 'tsx'),
        [path.join(__dirname, 'service-other-user.script.ts'), phase, first, repo, wt],
        ROOT,
      );
      const line = r.stdout.trim().split('\n').pop() ?? '';
      try {
        return JSON.parse(line) as Record<string, { ok?: unknown; error?: string }>;
      } catch {
        throw new Error(`the script printed no result (exit ${r.status}): ${r.stdout}\n${r.stderr}`);
      }
    }
    const failed = (out: Record<string, { error?: string }>) => Object.entries(out).filter(([, v]) => v.error !== undefined);
    const agentSees = (key: string) => agentGit(wt, 'config', '--worktree', '--includes', '--default', '(none)', key);

    test('inspect, project, preserve work, presence and release all run as the service user', () => {
      const held = asService('hold');
      expect(failed(held)).toEqual([]);
      expect(held.inspect?.ok).toMatchObject({ worktreePath: wt, repoRoot: repo, branch: 'feat' });
      expect(held.wip?.ok).toMatchObject({ ref: expect.stringContaining('own_svc'), sha: expect.stringMatching(/^[0-9a-f]{40}$/) });
      expect(held.presence?.ok).toMatchObject({ present: true });
      // What the service wrote is what the agent's own git (and so its hooks) reads.
      expect(agentSees('overdeck.owner.state')).toBe('active');
      expect(agentSees('overdeck.owner.execution-session-id')).toBe('session_svc');
      expect(agentGit(repo, 'worktree', 'list', '--porcelain')).toMatch(/locked overdeck: owned by session session_svc/);

      const released = asService('release');
      expect(failed(released)).toEqual([]);
      expect(agentGit(repo, 'worktree', 'list', '--porcelain')).not.toMatch(/locked/);
    }, 180_000);

    test('the local authority as the service user: a process whose environment it cannot read is unknown, never alive', async () => {
      // A root process that does carry the session: the service user cannot read /proc/<pid>/environ, so nothing is proven.
      const daemon = spawn('sleep', ['60'], { env: { ...process.env, OVERDECK_EXECUTION_SESSION_ID: 'session_svc' } });
      try {
        await new Promise((r) => setTimeout(r, 100));
        const out = asService('liveness', String(daemon.pid));
        expect(out.verdict).toEqual({ ok: { verdict: 'unknown', detail: expect.stringMatching(/environment is unreadable/) } });
      } finally {
        daemon.kill('SIGKILL');
      }
    }, 60_000);
  });
}
