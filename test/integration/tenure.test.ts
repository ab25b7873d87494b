import path from 'node:path';
import type { ClaimResponse, HistoryResponse, OverrideResponse, OwnershipViewOut, TenureOut } from '../../src/contract/http';
import { EXIT } from '../../src/cli/exit-codes';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { runCli, type CliResult } from '../support/cli';
import { tenureSecretHash } from '../../src/keys/tenure';

/**
 * The service side of the tenure proof (docs/operations.md#the-tenure-proof) on the real stack:
 * bind, accept-handoff and reclaim answer a secret whose SHA-256 the host agent writes into the
 * worktree's `overdeck.owner.tenure-hash`; the tenure route answers it again to its session only;
 * an admin's override is recorded before it is answered and shows in history; and `od-worktree
 * exec --ownership` / `override` hand the secret to the command they run.
 */

let s: ApiStack;
let repo: RepoFixture;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(6);
});
afterAll(async () => s?.stop());

/** The projection's word for a secret (what the guard computes, src/keys/tenure.ts). */
const sha256 = (x: string) => tenureSecretHash(x);

function bindBody(i: number, session: string, extra: Record<string, unknown> = {}) {
  const wt = repo.worktrees[i]!;
  return { repoRoot: repo.repoRoot, worktreePath: wt.path, branch: wt.branch, executionSessionId: session, runtime: 'codex-cli', ...extra };
}

async function ok<T>(res: { status: number; body: unknown }, status = 200): Promise<T> {
  expect({ status: res.status, body: res.status === status ? null : res.body }).toEqual({ status, body: null });
  return res.body as T;
}

function expectError(res: { status: number; body: unknown }, status: number, code: string): void {
  expect({ status: res.status, code: (res.body as { code?: string }).code }).toEqual({ status, code });
  expect(JSON.stringify(res.body)).not.toMatch(/odt1_/);
}

async function bind(i: number, session: string, token = s.tokens.executor): Promise<ClaimResponse> {
  return ok<ClaimResponse>(await s.raw('POST', '/v1/bind', { token, body: bindBody(i, session) }));
}

/** What the worktree's hooks read: the projection's tenure-hash words once the host agent wrote `epoch`. */
async function projectedHashes(wt: string, epoch: number): Promise<string[]> {
  const read = (key: string) => {
    try {
      return git(wt, 'config', '--worktree', '--includes', key);
    } catch {
      return '';
    }
  };
  const deadline = Date.now() + 30_000;
  while (read('overdeck.owner.epoch') !== String(epoch) || read('overdeck.owner.tenure-hash') === '') {
    if (Date.now() > deadline) throw new Error(`the projection of ${wt} never reached epoch ${epoch} with a tenure hash`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return read('overdeck.owner.tenure-hash').split(' ');
}

function expectTenure(t: TenureOut | null, session: string, epoch: number): TenureOut {
  expect(t).toMatchObject({ executionSessionId: session, epoch, env: { OVERDECK_EXECUTION_SESSION_ID: session, OVERDECK_EPOCH: String(epoch) } });
  expect(t!.secret).toMatch(/^odt1_[A-Za-z0-9_-]{43}$/);
  expect(t!.env.OVERDECK_TENURE_SECRET).toBe(t!.secret);
  return t!;
}

test('bind answers a secret whose SHA-256 the worktree’s projection holds; a repeated bind answers the same secret; a refused one none', async () => {
  const wt = repo.worktrees[0]!.path;
  const first = await bind(0, 'ten-s0');
  const tenure = expectTenure(first.tenure, 'ten-s0', 1);
  // The hash is there, the secret is not.
  expect(await projectedHashes(wt, 1)).toContain(sha256(tenure.secret));
  expect(git(wt, 'config', '--worktree', '--includes', '--get-regexp', '^overdeck\\.')).not.toContain(tenure.secret);

  // Derived, not issued: the same tenure answers the same secret.
  expect((await bind(0, 'ten-s0')).tenure).toEqual(tenure);
  // Another session is refused, and a refusal carries no secret.
  expectError(await s.raw('POST', '/v1/bind', { token: s.tokens.otherExecutor, body: bindBody(0, 'ten-intruder') }), 409, 'worktree_owned');
});

test('the tenure route answers the same proof to the session that holds the ownership, through its worker, and refuses everyone else', async () => {
  const bound = await bind(1, 'ten-s1');
  const id = bound.ownershipId;
  const route = `/v1/ownerships/${id}/tenure`;
  expect(await ok<TenureOut>(await s.raw('POST', route, { token: s.tokens.executor, body: { executionSessionId: 'ten-s1' } }))).toEqual(bound.tenure);
  // An admin may act for the owner's worker (named or not); a worker named must be the owner's.
  expect(
    await ok<TenureOut>(await s.raw('POST', route, { token: s.tokens.admin, body: { executionSessionId: 'ten-s1', worker: { workerId: s.workerId } } })),
  ).toEqual(bound.tenure);
  expectError(
    await s.raw('POST', route, { token: s.tokens.admin, body: { executionSessionId: 'ten-s1', worker: { workerId: s.otherWorkerId } } }),
    403,
    'worker_mismatch',
  );

  expectError(await s.raw('POST', route, { token: s.tokens.executor, body: { executionSessionId: 'ten-other' } }), 409, 'not_owner');
  expectError(await s.raw('POST', route, { token: s.tokens.otherExecutor, body: { executionSessionId: 'ten-s1' } }), 403, 'worker_mismatch');
  expectError(await s.raw('POST', route, { token: s.tokens.reader, body: { executionSessionId: 'ten-s1' } }), 403, 'forbidden');
  expectError(await s.raw('POST', route, { token: s.tokens.landing, body: { executionSessionId: 'ten-s1' } }), 403, 'forbidden');
  expectError(await s.raw('POST', route, { body: { executionSessionId: 'ten-s1' } }), 401, 'unauthenticated');
  expectError(await s.raw('POST', route, { token: s.tokens.executor, body: { executionSessionId: 'ten-s1', epoch: 1 } }), 400, 'unknown_field');
  expectError(
    await s.raw('POST', '/v1/ownerships/own_01JZZZZZZZZZZZZZZZZZZZZZZZ/tenure', { token: s.tokens.executor, body: { executionSessionId: 'ten-s1' } }),
    404,
    'not_found',
  );

  // Released: nobody holds it, so nobody gets a proof.
  await ok(await s.raw('POST', `/v1/ownerships/${id}/release`, { token: s.tokens.executor, body: { executionSessionId: 'ten-s1', epoch: 1 } }));
  expectError(await s.raw('POST', route, { token: s.tokens.executor, body: { executionSessionId: 'ten-s1' } }), 409, 'not_owner');
});

test('after a handoff the new owner’s secret is the projection’s and the old one’s hash is gone; a forced reclaim does the same', async () => {
  const wt = repo.worktrees[2]!.path;
  const a = await bind(2, 'ten-a');
  const id = a.ownershipId;
  const oldHash = sha256(expectTenure(a.tenure, 'ten-a', 1).secret);
  expect(await projectedHashes(wt, 1)).toContain(oldHash);

  const offered = await ok<OwnershipViewOut>(
    await s.raw('POST', `/v1/ownerships/${id}/handoff`, {
      token: s.tokens.executor,
      body: { executionSessionId: 'ten-a', epoch: 1, toExecutionSessionId: 'ten-b' },
    }),
  );
  // Offering is not giving: the owner's proof stands until the successor accepts.
  expect(await projectedHashes(wt, 1)).toContain(oldHash);
  const b = await ok<ClaimResponse>(
    await s.raw('POST', `/v1/ownerships/${id}/handoff/accept`, {
      token: s.tokens.executor,
      body: { handoffId: offered.handoff!.handoffId, executionSessionId: 'ten-b' },
    }),
  );
  const bTenure = expectTenure(b.tenure, 'ten-b', 2);
  expect(bTenure.secret).not.toBe(a.tenure!.secret);
  const afterHandoff = await projectedHashes(wt, 2);
  expect(afterHandoff).toContain(sha256(bTenure.secret));
  expect(afterHandoff).not.toContain(oldHash);
  // The old session lost it: no proof for it any more.
  expectError(await s.raw('POST', `/v1/ownerships/${id}/tenure`, { token: s.tokens.executor, body: { executionSessionId: 'ten-a' } }), 409, 'not_owner');

  const c = await ok<ClaimResponse>(
    await s.raw('POST', `/v1/ownerships/${id}/reclaim`, {
      token: s.tokens.admin,
      body: { executionSessionId: 'ten-c', force: true, reason: 'tenure test', worker: { workerId: s.workerId } },
    }),
  );
  const cTenure = expectTenure(c.tenure, 'ten-c', 3);
  const afterReclaim = await projectedHashes(wt, 3);
  expect(afterReclaim).toContain(sha256(cTenure.secret));
  expect(afterReclaim).not.toContain(sha256(bTenure.secret));
});

test('an override is refused to executors, recorded before it is answered, and shown in history', async () => {
  const bound = await bind(3, 'ten-owner');
  const id = bound.ownershipId;
  const route = `/v1/ownerships/${id}/override`;
  const count = async () => (await s.h.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM overrides WHERE ownership_id = $1', [id])).rows[0]!.n;

  expectError(await s.raw('POST', route, { token: s.tokens.executor, body: { reason: 'let me in' } }), 403, 'forbidden');
  expectError(await s.raw('POST', route, { token: s.tokens.reader, body: { reason: 'let me in' } }), 403, 'forbidden');
  expectError(await s.raw('POST', route, { token: s.tokens.admin, body: {} }), 400, 'invalid_input');
  expectError(await s.raw('POST', route, { token: s.tokens.admin, body: { reason: '' } }), 400, 'invalid_input');
  expect(await count()).toBe(0);

  // When the record cannot be written, nothing is handed out.
  const trigger = `tenure_test_refuse_${Math.random().toString(36).slice(2, 8)}`;
  await s.h.pool.query(
    `CREATE FUNCTION ${trigger}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused for the test' USING ERRCODE = '57P03'; END $$`,
  );
  await s.h.pool.query(
    `CREATE TRIGGER ${trigger} BEFORE INSERT ON overrides FOR EACH ROW WHEN (NEW.reason = 'cannot be recorded') EXECUTE FUNCTION ${trigger}()`,
  );
  try {
    expectError(await s.raw('POST', route, { token: s.tokens.admin, body: { reason: 'cannot be recorded' } }), 503, 'unavailable');
  } finally {
    await s.h.pool.query(`DROP TRIGGER ${trigger} ON overrides`);
    await s.h.pool.query(`DROP FUNCTION ${trigger}()`);
  }
  expect(await count()).toBe(0);

  const answered = await ok<OverrideResponse>(await s.raw('POST', route, { token: s.tokens.admin, body: { reason: 'the agent wedged a rebase' } }));
  expect(answered).toMatchObject({ ownershipId: id, epoch: 1, owner: { executionSessionId: 'ten-owner', workerId: s.workerId } });
  expect(answered.overrideId).toMatch(/^ovr_[0-9A-Z]{26}$/);
  // The current owner's proof: the one its bind answered.
  expect(answered.tenure).toEqual(bound.tenure);
  expect(await count()).toBe(1);

  const history = await ok<HistoryResponse>(await s.raw('GET', `/v1/history?ownershipId=${id}`, { token: s.tokens.reader }));
  expect(history.ownerships[0]!.overrides).toEqual([
    {
      overrideId: answered.overrideId,
      ownershipId: id,
      epoch: 1,
      principal: expect.stringMatching(/^admin:/),
      reason: 'the agent wedged a rebase',
      at: expect.any(String),
    },
  ]);
  const shown = await cli(['history', repo.worktrees[3]!.path], { token: s.tokens.reader });
  expect(shown.code).toBe(EXIT.ok);
  expect(shown.stdout).toMatch(/Overrides \(a person stepped in\):\n {4}\S+ {2}epoch 1 {2}by admin:\S+: the agent wedged a rebase/);

  // Nobody holds a released ownership: its worktree is open, there is nothing to override.
  await ok(await s.raw('POST', `/v1/ownerships/${id}/release`, { token: s.tokens.executor, body: { executionSessionId: 'ten-owner', epoch: 1 } }));
  expectError(await s.raw('POST', route, { token: s.tokens.admin, body: { reason: 'too late' } }), 409, 'invalid_state');
  expect(await count()).toBe(1);
});

function cli(args: string[], o: { token?: string; cwd?: string; url?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, OD_API_URL: o.url ?? s.url, OD_TOKEN: o.token ?? s.tokens.executor };
  delete env.OVERDECK_EXECUTION_SESSION_ID;
  delete env.OVERDECK_EPOCH;
  delete env.OVERDECK_TENURE_SECRET;
  Object.assign(env, o.env ?? {});
  return runCli(args, { cwd: o.cwd ?? repo.worktrees[4]!.path, env });
}

/** `env`'s output as a map. */
const envOf = (stdout: string) =>
  new Map(
    stdout
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const),
  );
const GATE_DIR = path.resolve(__dirname, '../../bin/git-gate');

test('od-worktree exec --ownership exports the current tenure; a secret already set passes through; another session is refused', async () => {
  const bound = await bind(4, 'ten-exec');
  const id = bound.ownershipId;

  const ran = await cli(['exec', '--ownership', id, '--session', 'ten-exec', '--', 'env']);
  expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' });
  const env = envOf(ran.stdout);
  expect(env.get('OVERDECK_TENURE_SECRET')).toBe(bound.tenure!.secret);
  expect(env.get('OVERDECK_EXECUTION_SESSION_ID')).toBe('ten-exec');
  expect(env.get('OVERDECK_EPOCH')).toBe('1');
  expect(env.get('PATH')!.split(':')[0]).toBe(GATE_DIR);

  // Already in the environment: unchanged, and the service is not asked (it is not even reachable here).
  const passed = await cli(['exec', '--ownership', id, '--session', 'ten-exec', '--', 'env'], {
    url: 'http://127.0.0.1:9',
    env: { OVERDECK_TENURE_SECRET: 'odt1_kept' },
  });
  expect(passed.code).toBe(0);
  expect(envOf(passed.stdout).get('OVERDECK_TENURE_SECRET')).toBe('odt1_kept');

  const intruder = await cli(['exec', '--ownership', id, '--session', 'ten-intruder', '--', 'env']);
  expect(intruder.code).toBe(EXIT.refused);
  expect(intruder.stdout).not.toContain('OVERDECK_TENURE_SECRET');
  expect(intruder.stderr).toContain('not_owner');
  expect((await cli(['exec', '--ownership', id, '--session', 'ten-exec', '--epoch', '2', '--', 'env'])).code).toBe(EXIT.refused);
  expect((await cli(['exec', '--ownership', 'not-an-id', '--session', 'ten-exec', '--', 'env'])).code).toBe(EXIT.usage);
  expect((await cli(['exec', '--ownership', id, '--', 'env'])).code).toBe(EXIT.usage);

  const init = await cli(['shell-init', '--shell', 'sh', '--ownership', id, '--session', 'ten-exec']);
  expect(init.code).toBe(0);
  expect(init.stdout).toContain(`export OVERDECK_TENURE_SECRET='${bound.tenure!.secret}'`);
  expect(init.stdout).toContain(`export OVERDECK_EPOCH='1'`);
});

test('od-worktree override runs the command as exec would, with the owner’s tenure and the override’s id, once it is recorded', async () => {
  const bound = await bind(5, 'ten-overridden');
  const wt = repo.worktrees[5]!.path;
  // An executor may not: nothing runs.
  const refused = await cli(['override', '--reason', 'mine now', '--', 'sh', '-c', 'echo RAN'], { cwd: wt });
  expect(refused.code).toBe(EXIT.refused);
  expect(refused.stdout).not.toContain('RAN');

  const ran = await cli(['override', '--reason', 'fix the index by hand', '--json', '--', 'env'], { cwd: wt, token: s.tokens.admin });
  expect(ran.code).toBe(0);
  const recorded = JSON.parse(ran.stdout.slice(0, ran.stdout.indexOf('\n}') + 2)) as { ok: boolean; overrideId: string; ownershipId: string; epoch: number };
  expect(recorded).toMatchObject({ ok: true, ownershipId: bound.ownershipId, epoch: 1 });
  expect(ran.stdout.slice(0, ran.stdout.indexOf('\n}') + 2)).not.toContain('odt1_');
  const env = envOf(ran.stdout);
  expect(env.get('OVERDECK_OVERRIDE_ID')).toBe(recorded.overrideId);
  expect(env.get('OVERDECK_TENURE_SECRET')).toBe(bound.tenure!.secret);
  // The person is not the agent's session: what it commits is never journalled as the agent's own.
  expect(env.has('OVERDECK_EXECUTION_SESSION_ID')).toBe(false);
  expect(env.get('OVERDECK_EPOCH')).toBe('1');
  expect(env.get('PATH')!.split(':')[0]).toBe(GATE_DIR);
  const rows = await s.h.pool.query('SELECT ownership_id, epoch, reason FROM overrides WHERE id = $1', [recorded.overrideId]);
  expect(rows.rows).toEqual([{ ownership_id: bound.ownershipId, epoch: 1, reason: 'fix the index by hand' }]);

  expect((await cli(['override', '--', 'env'], { cwd: wt, token: s.tokens.admin })).code).toBe(EXIT.usage);
});
