import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tenureSecretHash } from '../../src/keys/tenure';
import { resolveTarget } from '../../src/cli/target';
import { readProjection, writeProjection } from '../../src/git/projection';
import { cleanGitEnv } from '../../src/git/exec';
import { g, makeRepo, projection, run, type Fixture } from './git-fixture';

/** `node bin/od-worktree.js` for the git-only commands: real repositories, no service. */
const BIN = path.resolve(__dirname, '../../bin/od-worktree.js');

let fx: Fixture;
beforeAll(() => {
  fx = makeRepo();
});
afterAll(() => fx.cleanup());

function cli(cwd: string, args: string[], env: Record<string, string> = {}) {
  const base = cleanGitEnv({ OD_ALLOWED_ROOTS: fx.root });
  delete base.OVERDECK_EXECUTION_SESSION_ID;
  delete base.OVERDECK_EPOCH;
  const res = spawnSync(process.execPath, [BIN, ...args], { cwd, env: { ...base, ...env }, encoding: 'utf8' });
  return { status: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

describe('od-worktree install-hooks', () => {
  it('installs for the whole repository from any worktree, --json describes it; strict is no longer an option', () => {
    g(fx.repo, 'config', 'overdeck.guard.strict', 'false');
    const res = cli(fx.wt1, ['install-hooks', '--json']);
    expect(res.status).toBe(0);
    const body = JSON.parse(res.stdout);
    expect(body).toMatchObject({
      hooksPath: path.join(fx.repo, '.git/overdeck-hooks'),
      hooks: expect.arrayContaining(['pre-push', 'pre-rebase', 'reference-transaction']),
    });
    expect(body).not.toHaveProperty('strict');
    expect(g(fx.repo, 'config', 'core.hooksPath')).toBe(body.hooksPath);
    // An old flag saying "not strict" would mislead whoever reads the config: it is dropped.
    expect(run('git', ['config', '--get', 'overdeck.guard.strict'], fx.repo).status).toBe(1);
    expect(cli(fx.repo, ['install-hooks', '--no-strict']).status).toBe(2);
  });
});

describe('od-worktree guard', () => {
  beforeAll(async () => {
    await writeProjection(fx.wt1, projection('A', 3, { epoch: 3 }));
  });

  it('exit 0 for the owner (from a subdirectory too), 1 with the owner named for others', () => {
    mkdirSync(path.join(fx.wt1, 'sub'), { recursive: true });
    expect(cli(path.join(fx.wt1, 'sub'), ['guard'], { OVERDECK_EXECUTION_SESSION_ID: 'session_A' })).toMatchObject({ status: 0, stdout: '' });
    const refused = cli(fx.wt1, ['guard'], { OVERDECK_EXECUTION_SESSION_ID: 'session_B' });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(
      'owned by session session_A (worker worker-A, conversation conv-A, runtime runtime-A, ownership own_A, epoch 3); you are session session_B',
    );
  });

  it('reads the tenure secret from the environment only', async () => {
    await writeProjection(fx.wt2, projection('C', 1, { tenureHash: tenureSecretHash('odt1_c') }));
    expect(cli(fx.wt2, ['guard', '--json'], { OVERDECK_EXECUTION_SESSION_ID: 'session_C' })).toMatchObject({ status: 1 });
    expect(JSON.parse(cli(fx.wt2, ['guard', '--json'], { OVERDECK_EXECUTION_SESSION_ID: 'session_C' }).stdout)).toMatchObject({ reason: 'tenure_unproven' });
    expect(cli(fx.wt2, ['guard'], { OVERDECK_TENURE_SECRET: 'odt1_c' })).toMatchObject({ status: 0 });
    await writeProjection(fx.wt2, null);
  });

  it('--json, --session, --epoch and --worktree', () => {
    const stale = cli(fx.repo, ['guard', '--json', '--worktree', fx.wt1, '--session', 'session_A', '--epoch', '2']);
    expect(stale.status).toBe(1);
    expect(JSON.parse(stale.stdout)).toMatchObject({ allowed: false, reason: 'stale_epoch', worktree: fx.wt1 });
    const ok = cli(fx.repo, ['guard', '--json', '--worktree', fx.wt2, '--session', 'session_B']);
    expect(ok.status).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual({ allowed: true, worktree: fx.wt2 });
  });

  it('usage errors exit 2', () => {
    expect(cli(fx.root, ['guard']).status).toBe(2);
    expect(cli(fx.wt1, ['guard', '--epoch', 'soon']).status).toBe(2);
    expect(cli(fx.wt1, ['guard', '--session', 'has space']).status).toBe(2);
    expect(cli(fx.wt1, ['guard', '--bogus']).status).toBe(2);
  });
});

describe('od-worktree claim --offline', () => {
  it('writes a provisional claim the guard (and the hooks) honour; replays are idempotent; others are refused', async () => {
    cli(fx.repo, ['install-hooks']);
    const res = cli(fx.wt2, [
      'claim',
      '--offline',
      '--session',
      'session_P',
      '--runtime',
      'codex-cli',
      '--worker',
      'w-1',
      '--lane',
      'lane-1',
      '--plan',
      'docs/p.md',
      '--json',
    ]);
    expect(res.status).toBe(0);
    const body = JSON.parse(res.stdout);
    expect(body).toMatchObject({
      ok: true,
      status: 'claimed',
      projection: { provisional: true, seq: 0, epoch: 0, conversationId: null, lane: 'lane-1', planRef: 'docs/p.md', workerId: 'w-1' },
    });
    expect((await readProjection(fx.wt2))?.idempotencyKey).toBe(body.projection.idempotencyKey);

    const replay = cli(fx.wt2, ['claim', '--offline', '--runtime', 'codex-cli', '--json'], { OVERDECK_EXECUTION_SESSION_ID: 'session_P' });
    expect(replay.status).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ status: 'already_provisional', projection: { idempotencyKey: body.projection.idempotencyKey } });

    const other = cli(fx.wt2, ['claim', '--offline', '--session', 'session_Q', '--runtime', 'codex-cli']);
    expect(other.status).toBe(1);
    expect(other.stderr).toContain('owned by session session_P');

    writeFileSync(path.join(fx.wt2, 'a.txt'), 'by Q\n');
    const commitQ = run('git', ['commit', '-q', '-am', 'q'], fx.wt2, { OVERDECK_EXECUTION_SESSION_ID: 'session_Q' });
    expect(commitQ.status).not.toBe(0);
    expect(commitQ.stderr).toContain('owned by session session_P');
    expect(run('git', ['commit', '-q', '-am', 'p'], fx.wt2, { OVERDECK_EXECUTION_SESSION_ID: 'session_P' }).status).toBe(0);
  });

  it('exit 5 over a lost provisional claim; exit 2 without --session/--runtime', async () => {
    await writeProjection(fx.wt1, projection('P', 0, { provisional: true, state: 'provisional-conflict' }), { force: true });
    const lost = cli(fx.wt1, ['claim', '--offline', '--session', 'session_P', '--runtime', 'codex-cli', '--json']);
    expect(lost.status).toBe(5);
    expect(JSON.parse(lost.stdout)).toMatchObject({ ok: false, status: 'conflict', reason: 'provisional_conflict' });
    expect(cli(fx.wt1, ['claim', '--offline', '--runtime', 'codex-cli']).status).toBe(2);
    expect(cli(fx.wt1, ['claim', '--offline', '--session', 'session_P']).status).toBe(2);
  });

  it('without --offline, claim is the online one (service commands): nothing is written locally', async () => {
    const before = await readProjection(fx.wt2);
    const online = cli(fx.wt2, ['claim', '--session', 'session_Z', '--runtime', 'codex-cli'], { OD_API_URL: 'http://127.0.0.1:1' });
    expect(online.status).not.toBe(0);
    expect(await readProjection(fx.wt2)).toEqual(before);
  });
});

describe('od-worktree reconcile writes only through the HTTP API, as its token', () => {
  let wt3: string;
  beforeAll(() => {
    wt3 = path.join(fx.root, 'wt3');
    g(fx.repo, 'worktree', 'add', '-q', '-b', 'wt3', wt3);
  });
  const noService = { OD_API_URL: 'http://127.0.0.1:1', TEMPORAL_ADDRESS: '127.0.0.1:1', DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/none' };

  it('without OD_TOKEN: one line, exit 1, nothing asked, the claim untouched', async () => {
    expect(cli(wt3, ['claim', '--offline', '--session', 'session_R', '--runtime', 'codex-cli', '--worker', 'someone-else']).status).toBe(0);
    const before = await readProjection(wt3);
    const res = cli(wt3, ['reconcile', '--json'], { ...noService, OD_TOKEN: '' });
    expect(res.status).toBe(1);
    expect(JSON.parse(res.stdout)).toMatchObject({ ok: false, code: 'unauthenticated' });
    expect(res.stderr.trim().split('\n')).toEqual([expect.stringContaining('set OD_TOKEN')]);
    expect(await readProjection(wt3)).toEqual(before);
  });

  it('with a token but no service: exit 4 (the direct Temporal/PostgreSQL path is not there to fall back on)', async () => {
    const res = cli(wt3, ['reconcile'], { ...noService, OD_TOKEN: 'some-token' });
    expect(res.status).toBe(4);
    expect(res.stderr).toContain('unreachable');
  });

  it('has no --worker any more; the help says the worker comes from the token', () => {
    expect(cli(wt3, ['reconcile', '--worker', 'w-1'], { OD_TOKEN: '' }).status).toBe(2);
    expect(cli(wt3, ['reconcile', '--help']).stdout).toContain('bound as the worker of that');
    expect(cli(wt3, ['claim', '--help']).stdout).toMatch(/grants nothing/);
  });
});

describe('who/history targets (resolveTarget)', () => {
  it('absolute, ./, ../ and ~ are only paths, existing or not, normalised like the server', async () => {
    expect(await resolveTarget(path.join(fx.root, 'gone', 'wt'), fx.repo)).toEqual({ kind: 'path', path: path.join(fx.root, 'gone', 'wt'), fallback: false });
    expect(await resolveTarget('./gone', fx.repo)).toEqual({ kind: 'path', path: path.join(fx.repo, 'gone'), fallback: false });
    expect(await resolveTarget('../wt9', fx.repo)).toEqual({ kind: 'path', path: path.join(fx.root, 'wt9'), fallback: false });
    expect(await resolveTarget('~/od-nowhere-x', fx.repo)).toMatchObject({ kind: 'path', path: expect.stringMatching(/od-nowhere-x$/), fallback: false });
    symlinkSync(fx.repo, path.join(fx.root, 'link'));
    expect(await resolveTarget(path.join(fx.root, 'link', 'gone'), fx.repo)).toMatchObject({ path: path.join(fx.repo, 'gone') });
  });
  it('an existing directory is its worktree; a file named with a slash too', async () => {
    mkdirSync(path.join(fx.wt1, 'deep', 'er'), { recursive: true });
    expect(await resolveTarget('deep/er', fx.wt1)).toEqual({ kind: 'path', path: fx.wt1, fallback: false });
    expect(await resolveTarget('wt2', fx.root)).toEqual({ kind: 'path', path: fx.wt2, fallback: false });
    expect(await resolveTarget('repo/a.txt', fx.root)).toEqual({ kind: 'path', path: fx.repo, fallback: false });
  });
  it('a slash name whose parent exists is tried as a path, then as a name; other names are names', async () => {
    expect(await resolveTarget('repo/removed-wt', fx.root)).toEqual({ kind: 'path', path: path.join(fx.repo, 'removed-wt'), fallback: true });
    expect(await resolveTarget('wt/feature-x', fx.repo)).toEqual({ kind: 'name', name: 'wt/feature-x' });
    expect(await resolveTarget('wt1', fx.repo)).toEqual({ kind: 'name', name: 'wt1' });
    expect(await resolveTarget('a.txt', fx.repo)).toEqual({ kind: 'name', name: 'a.txt' });
  });
});
