import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { git } from '../../src/git/exec';
import { refusedServiceGit, serviceGitArgs, serviceGitEnv } from '../../src/git/safe-env';
import { stopGitSpawner, useGitSpawner } from '../../src/git/spawner';
import { preserveWip } from '../../src/git/wip';
import { RepoGit } from '../../src/git/repo-git';
import { makeHostileRepo, type HostileRepo } from '../support/hostile-repo';
import { g, makeRepo, run, type Fixture } from './git-fixture';

/**
 * The service never runs repository code (src/git/safe-env.ts): what a git child of the service
 * sees of its environment, and what runs when the service's git works in a repository whose every
 * agent-writable place names a program. Real git, real helper process, real repositories.
 */

afterEach(() => stopGitSpawner());

describe('the environment of a service git run', () => {
  let shim: string;
  let dump: string;
  const saved: Record<string, string | undefined> = {};
  const planted = {
    DATABASE_URL: 'postgres://canary:canary-password@db.invalid/od',
    OD_TOKEN: 'od-canary-token',
    OD_TOKENS_JSON: '{"canary":true}',
    HOME: '/home/canary',
    GIT_EXTERNAL_DIFF: '/canary/external-diff',
    GIT_PAGER: '/canary/pager',
    GIT_SSH_COMMAND: '/canary/ssh',
    GIT_ASKPASS: '/canary/askpass',
    GIT_CONFIG_PARAMETERS: "'core.hookspath'='/canary/hooks'",
    GIT_TRACE: '/canary/trace',
    TZ: 'Europe/Paris',
  };
  beforeEach(() => {
    // A `git` first on PATH that writes down its environment, then runs the real one: the git child itself.
    shim = mkdtempSync(path.join(os.tmpdir(), 'od-git-env-'));
    dump = path.join(shim, 'env');
    const realGit = run('sh', ['-c', 'command -v git'], os.tmpdir()).stdout.trim();
    writeFileSync(path.join(shim, 'git'), `#!/bin/sh\nenv > '${dump}'\nexec '${realGit}' "$@"\n`);
    chmodSync(path.join(shim, 'git'), 0o755);
    for (const k of [...Object.keys(planted), 'PATH']) saved[k] = process.env[k];
    Object.assign(process.env, planted, { PATH: `${shim}:${process.env.PATH ?? ''}` });
  });
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(shim, { recursive: true, force: true });
  });

  const seen = (): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const line of readFileSync(dump, 'utf8').split('\n')) {
      const eq = line.indexOf('=');
      if (eq > 0) out[line.slice(0, eq)] = line.slice(eq + 1);
    }
    return out;
  };
  /** What sh itself adds to any environment it runs with. */
  const SHELL_OWN = new Set(['PWD', 'OLDPWD', 'SHLVL', '_']);

  test.each([
    ['spawned directly', false],
    ['through the workers’ helper process', true],
  ])('%s, git sees only the allow-list and the per-call values: no DATABASE_URL, token, HOME or program-naming variable', async (_label, helper) => {
    if (helper) useGitSpawner();
    await git(['rev-parse', '--git-dir'], { cwd: os.tmpdir(), okCodes: [128], env: { GIT_AUTHOR_NAME: 'per-call' } });
    const env = seen();
    const names = Object.keys(env)
      .filter((k) => !SHELL_OWN.has(k))
      .sort();
    expect(names).toEqual(['GIT_AUTHOR_NAME', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_NOSYSTEM', 'GIT_TERMINAL_PROMPT', 'LANG', 'LC_ALL', 'PATH', 'TZ']);
    expect(env).toMatchObject({ GIT_AUTHOR_NAME: 'per-call', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C', TZ: 'Europe/Paris' });
    expect(readFileSync(dump, 'utf8')).not.toMatch(/canary/);
  });

  test('a per-call variable outside the allow-list is refused before anything runs', () => {
    expect(() => serviceGitEnv({ GIT_EXTERNAL_DIFF: '/x' } as never)).toThrow(/not allowed/);
  });
});

test('only subcommands that read no worktree file through filters and start no program are run; log/show/diff never use drivers', () => {
  for (const ok of [
    ['rev-parse', 'HEAD'],
    ['-c', 'core.quotePath=true', 'ls-files', '-s', '--debug'],
    ['diff', 'a', 'b'],
    ['hash-object', '-w', '--no-filters', '--stdin-paths'],
    ['update-index', '--index-info'],
    ['notes', '--ref=refs/notes/x', 'add', '-f', '-m', 'm', 'HEAD'],
    ['worktree', 'list', '--porcelain'],
  ])
    expect([ok, refusedServiceGit(ok)]).toEqual([ok, null]);
  for (const bad of [
    ['status'],
    ['add', '-A'],
    ['stash'],
    ['checkout', 'x'],
    ['commit', '-m', 'x'],
    ['fetch'],
    ['my-alias'],
    ['diff'],
    ['diff', 'HEAD'],
    ['diff', 'a', 'b', '--textconv'],
    ['log', '--show-signature'],
    ['log', '--format=%G?'],
    ['hash-object', 'file'],
    ['update-index', '--refresh'],
    ['update-index', '--add', 'f'],
    ['ls-files', '-m'],
    ['read-tree', '-u', 'HEAD'],
    ['commit-tree', '-S', 't'],
    ['cat-file', '--textconv', 'HEAD:f'],
    ['worktree', 'add', 'x'],
    ['notes', '--ref=refs/notes/x', 'edit', 'HEAD'],
    ['notes', '--ref=refs/notes/x', 'add', 'HEAD'],
    ['config', '--edit'],
    ['-C', '/elsewhere', 'rev-parse'],
    ['--exec-path=/x', 'rev-parse'],
    ['-c', 'core.hooksPath=/evil', 'rev-parse'],
    ['-c', 'Core.FSMonitor=/evil', 'rev-parse'],
  ])
    expect([bad, refusedServiceGit(bad)]).toEqual([bad, expect.any(String)]);
  const argv = serviceGitArgs(['show', 'HEAD']);
  expect(argv.slice(argv.indexOf('show'))).toEqual(['show', '--no-textconv', '--no-ext-diff', 'HEAD']);
  expect(argv.slice(0, argv.indexOf('show'))).toEqual(
    expect.arrayContaining(['--no-pager', 'core.hooksPath=/dev/null', 'core.fsmonitor=', 'protocol.allow=never', 'commit.gpgSign=false']),
  );
});

describe('a repository whose every agent-writable place names a program', () => {
  let hr: HostileRepo;
  let root: string;
  const saved: Record<string, string | undefined> = {};
  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'od-hostile-'));
    hr = makeHostileRepo(1, root);
    // The service process itself carries the hostile variables (and a system config it may not read).
    for (const k of [...Object.keys(hr.hostileEnv), 'GIT_CONFIG_NOSYSTEM']) saved[k] = process.env[k];
    Object.assign(process.env, hr.hostileEnv);
    delete process.env.GIT_CONFIG_NOSYSTEM;
  });
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(root, { recursive: true, force: true });
  });

  const dirty = (wt: string) => {
    for (const f of ['a.proc', 'b.inc', 'c.glob', 'd.sys', 'e.txt']) writeFileSync(path.join(wt, f), `${f}\r\nline two\r\n`);
    writeFileSync(path.join(wt, 'README.md'), '# changed by the owner\r\n');
  };

  test('the fixture is live: the same work done by a plain git (not the agent, not the service) runs its programs', () => {
    const wt = hr.worktrees[0]!.path;
    dirty(wt);
    const plain = { ...process.env };
    run('git', ['status', '--porcelain'], wt, plain as Record<string, string>);
    try {
      execFileSync('git', ['add', '-A'], { cwd: wt, env: plain, stdio: 'pipe' });
    } catch {
      // the process filter ends at once: git gives up after running it
    }
    expect(hr.marks().length).toBeGreaterThan(0);
    expect(hr.marks().join('\n')).toMatch(/core\.fsmonitor|filter/);
  });

  test.each([
    ['spawned directly', false],
    ['through the workers’ helper process', true],
  ])('%s: WIP preservation, ref and notes writes and the landing questions run none of them', async (_label, helper) => {
    if (helper) useGitSpawner();
    const wt = hr.worktrees[0]!.path;
    // The agent's own history: signed commits (gpg.program), through hooks and filters, quietly.
    writeFileSync(path.join(wt, 'work.txt'), 'work\n');
    hr.agentGit(wt, null, 'add', 'work.txt');
    hr.agentGit(wt, null, 'commit', '-q', '-m', 'work');
    const head = hr.agentGit(wt, null, 'rev-parse', 'HEAD');
    dirty(wt);
    symlinkSync('work.txt', path.join(wt, 'link'));
    expect(hr.marks()).toEqual([]);

    // Every step settles (today's code failed some: the process filter breaks `git add`); what ran is asserted first.
    const settle = <T>(p: Promise<T>): Promise<T | Error> => p.catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
    const wip = await settle(preserveWip(wt, 'own_HOSTILE', 1));
    const ref = await settle(git(['update-ref', 'refs/overdeck/test', head], { cwd: wt }));
    const note = await settle(
      git(['notes', '--ref=refs/notes/overdeck-test', 'add', '-f', '-m', 'note', head], {
        cwd: wt,
        env: { GIT_AUTHOR_NAME: 'o', GIT_AUTHOR_EMAIL: 'o@x', GIT_COMMITTER_NAME: 'o', GIT_COMMITTER_EMAIL: 'o@x' },
      }),
    );
    const repo = new RepoGit(hr.repoRoot);
    const patchIds = await settle(repo.patchIds([head]));
    const range = [await settle(repo.rangePatchId(null, head)), await settle(repo.rangePatchId(`${head}~1`, head))];
    const message = await settle(repo.message(head));
    // `git status` refreshes the index, which hands a racily clean file to the clean filter: never run.
    const status = await settle(git(['status', '--porcelain'], { cwd: wt }));

    expect({ marks: hr.marks(), raw: hr.raw().slice(0, 2000) }).toEqual({ marks: [], raw: '' });
    expect(wip).not.toBeInstanceOf(Error);
    expect(ref).not.toBeInstanceOf(Error);
    expect(note).not.toBeInstanceOf(Error);
    expect(patchIds instanceof Map ? patchIds.size : patchIds).toBe(1);
    expect(range.map((r) => typeof r === 'string')).toEqual([true, true]);
    expect(message).toContain('work');
    expect(status).toEqual(expect.objectContaining({ message: expect.stringMatching(/git status is not run by the service/) }));
    if (wip instanceof Error || wip === null) throw new Error('no snapshot');
    // What the snapshot holds is the bytes on disk, none of the filters' rewriting or CRLF conversion.
    for (const f of ['a.proc', 'b.inc', 'c.glob', 'd.sys', 'e.txt']) expect(g(hr.repoRoot, 'cat-file', 'blob', `${wip.sha}:${f}`)).toBe(`${f}\r\nline two`);
    expect(g(hr.repoRoot, 'cat-file', 'blob', `${wip.sha}:link`)).toBe('work.txt');
  });
});

describe('WIP preservation stores files as they are on disk', () => {
  let fx: Fixture;
  beforeEach(() => {
    fx = makeRepo();
  });
  afterEach(() => fx.cleanup());

  test('a clean filter that would rewrite a file, and CRLF conversion, neither run nor change the snapshot', async () => {
    const marker = path.join(fx.root, 'filter-ran');
    const filter = path.join(fx.root, 'upcase');
    writeFileSync(filter, `#!/bin/sh\necho ran >> '${marker}'\nexec tr a-z A-Z\n`);
    chmodSync(filter, 0o755);
    g(fx.repo, 'config', 'filter.upcase.clean', filter);
    g(fx.repo, 'config', 'core.autocrlf', 'true');
    writeFileSync(path.join(fx.wt1, '.gitattributes'), '*.txt filter=upcase text eol=lf\n');
    const bytes = 'keep me\r\nas written\r\n';
    writeFileSync(path.join(fx.wt1, 'crlf.txt'), bytes);
    writeFileSync(path.join(fx.wt1, 'a.txt'), 'changed\r\n');

    const wip = await preserveWip(fx.wt1, 'own_BYTES', 1);
    expect(run('git', ['cat-file', 'blob', `${wip!.sha}:crlf.txt`], fx.repo).stdout).toBe(bytes);
    expect(run('git', ['cat-file', 'blob', `${wip!.sha}:a.txt`], fx.repo).stdout).toBe('changed\r\n');
    expect(() => readFileSync(marker)).toThrow();
  });
});
