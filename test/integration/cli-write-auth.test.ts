import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EXIT } from '../../src/cli/exit-codes';
import { readProjection, writeProjection } from '../../src/git/projection';
import { offlineClaim } from '../../src/git/provisional';
import { reconcile } from '../../src/reconcile';
import { createHttpPort, openHttpPort } from '../../src/reconcile/http-port';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { runCli, type CliResult } from '../support/cli';

/**
 * No od-worktree command that writes bypasses the authenticated HTTP API: `reconcile` (and the
 * submission of a `claim --offline`) binds as the token's principal, never as a worker the claim
 * or the local projection names, and logs through POST /v1/reconciliations. Real API server,
 * real Temporal and PostgreSQL, real git; the CLI is the real binary.
 */

const CONV = '7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d';

let s: ApiStack;
const TMP = (): string => process.env.OD_TEST_TMP!;

beforeAll(async () => {
  s = await startApiStack();
  // Executor A's observed conversation: whatever A binds carries exactly this one, and nobody else's.
  await s.api(s.tokens.executor).reportConversation({
    executor: 'chatgpt-web',
    executorInstanceId: 'ext-write-auth',
    sessionGeneration: 'g1',
    sequence: 1,
    conversation: { conversationId: CONV, conversationUrl: `https://chatgpt.com/c/${CONV}`, title: 'write auth', observedAt: new Date().toISOString() },
  });
});
afterAll(async () => s?.stop());

/**
 * The CLI with only the API to talk to: Temporal and PostgreSQL addresses point nowhere, so a
 * write that tried to reach them directly would fail. Asynchronous: the worker runs on this
 * process's event loop.
 */
function cli(cwd: string, args: string[], o: { token?: string | null; url?: string } = {}): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    OD_API_URL: o.url ?? s.url,
    OD_ALLOWED_ROOTS: TMP(),
    TEMPORAL_ADDRESS: '127.0.0.1:1',
    DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/none',
  };
  delete env.OD_TOKEN;
  delete env.OVERDECK_EXECUTION_SESSION_ID;
  delete env.OVERDECK_EPOCH;
  for (const k of Object.keys(env)) if (k.startsWith('GIT_')) delete env[k];
  if (o.token !== null) env.OD_TOKEN = o.token ?? s.tokens.executor;
  return runCli(args, { cwd, env });
}

/** What the service knows of a worktree: its ownership rows and events, and reconciliations. */
async function durableState(worktreePath: string) {
  const own = await s.h.pool.query<{ ownership_id: string }>('SELECT ownership_id FROM ownerships WHERE worktree_path = $1', [worktreePath]);
  const ids = own.rows.map((r) => r.ownership_id);
  const events = await s.h.pool.query<{ type: string }>(
    "SELECT event->>'type' AS type FROM ownership_events WHERE ownership_id = ANY($1) ORDER BY ownership_id, seq",
    [ids],
  );
  const recs = await s.h.pool.query<{ kind: string; reason: string | null; ownership_id: string | null; provisional: unknown }>(
    'SELECT kind, reason, ownership_id, provisional FROM reconciliations WHERE worktree_path = $1 ORDER BY id',
    [worktreePath],
  );
  return { ownerships: ids, events: events.rows.map((r) => r.type), reconciliations: recs.rows };
}

const claimOffline = (wt: string, session: string, worker?: string) =>
  cli(wt, ['claim', '--offline', '--session', session, '--runtime', 'codex-cli', ...(worker ? ['--worker', worker] : []), '--json'], { token: null });

function oneLine(r: CliResult): void {
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
}

describe('od-worktree reconcile binds as the token, never as the claim', () => {
  let repo: RepoFixture;
  beforeAll(() => {
    repo = makeRepo(4);
  });

  it('(a) a claim naming another worker: refused worker_mismatch (exit 5), nothing bound, the claim kept for that worker’s token', async () => {
    const wt = repo.worktrees[0]!;
    expect((await claimOffline(wt.path, 's-forged', 'someone-else')).code).toBe(EXIT.ok);
    const before = await readProjection(wt.path);

    const res = await cli(wt.path, ['reconcile', '--json']);
    expect(res.code).toBe(EXIT.conflict);
    const body = JSON.parse(res.stdout);
    expect(body).toMatchObject({
      ok: false,
      kind: 'conflict',
      reason: 'worker_mismatch',
      changed: false,
      durable: null,
      recorded: true,
      principal: { kind: 'executor', workerId: s.workerId },
    });
    // Nothing bound: no ownership, no event; the refusal itself is logged through the API.
    expect(await durableState(wt.path)).toEqual({
      ownerships: [],
      events: [],
      reconciliations: [
        { kind: 'conflict', reason: 'worker_mismatch', ownership_id: null, provisional: expect.objectContaining({ executionSessionId: 's-forged' }) },
      ],
    });
    expect((await s.raw('GET', `/v1/ownership?worktreePath=${encodeURIComponent(wt.path)}`, { token: s.tokens.admin })).status).toBe(404);
    // The claim is left exactly as it was: still provisional, not marked lost.
    expect(await readProjection(wt.path)).toEqual(before);

    const human = await cli(wt.path, ['reconcile']);
    expect(human.code).toBe(EXIT.conflict);
    expect(human.stdout).toContain('reconcile: conflict (worker_mismatch)');
    expect(human.stderr).toContain('names another worker than the one OD_TOKEN acts for');
  });

  it('(a) a claim naming the other executor’s worker: refused with A’s token, submitted with that worker’s own token', async () => {
    const wt = repo.worktrees[1]!;
    expect((await claimOffline(wt.path, 's-other', s.otherWorkerId)).code).toBe(EXIT.ok);
    const refused = await cli(wt.path, ['reconcile', '--json']);
    expect(refused.code).toBe(EXIT.conflict);
    expect(JSON.parse(refused.stdout)).toMatchObject({ kind: 'conflict', reason: 'worker_mismatch' });
    expect((await durableState(wt.path)).ownerships).toEqual([]);

    const own = await cli(wt.path, ['reconcile', '--json'], { token: s.tokens.otherExecutor });
    expect({ code: own.code, stderr: own.stderr }).toEqual({ code: EXIT.ok, stderr: '' });
    expect(JSON.parse(own.stdout)).toMatchObject({ kind: 'submitted', durable: { executionSessionId: 's-other' } });
    const record = await s.api(s.tokens.admin).get({ worktreePath: wt.path });
    expect(record.worker).toEqual({ workerId: s.otherWorkerId, runId: null });
  });

  it('(b) a claim naming no worker: bound as the token’s worker, logged through the API', async () => {
    const wt = repo.worktrees[2]!;
    expect((await claimOffline(wt.path, 's-mine')).code).toBe(EXIT.ok);
    const res = await cli(wt.path, ['reconcile', '--json']);
    expect({ code: res.code, stderr: res.stderr }).toEqual({ code: EXIT.ok, stderr: '' });
    const body = JSON.parse(res.stdout);
    expect(body).toMatchObject({
      ok: true,
      kind: 'submitted',
      recorded: true,
      durable: { executionSessionId: 's-mine' },
      logged: [expect.objectContaining({ kind: 'submitted' })],
    });

    const record = await s.api(s.tokens.admin).get({ worktreePath: wt.path });
    expect(record.worker).toEqual({ workerId: s.workerId, runId: null });
    expect(record.owner).toMatchObject({ executionSessionId: 's-mine', conversation: { conversationId: CONV } });
    const state = await durableState(wt.path);
    expect(state.reconciliations).toEqual([
      { kind: 'submitted', reason: null, ownership_id: record.ownershipId, provisional: expect.objectContaining({ executionSessionId: 's-mine' }) },
    ]);
    const local = await readProjection(wt.path);
    expect(local).toMatchObject({ ownershipId: record.ownershipId, executionSessionId: 's-mine', workerId: s.workerId, conversationId: CONV });
    expect(local?.provisional).toBeFalsy();

    expect((await cli(wt.path, ['reconcile'])).stdout).toContain('reconcile: in_sync');
  });

  it('(c) without a usable token: one line, exit 1, nothing read or written', async () => {
    const wt = repo.worktrees[3]!;
    expect((await claimOffline(wt.path, 's-anon')).code).toBe(EXIT.ok);
    const before = await readProjection(wt.path);
    const cases: [string | null, string][] = [
      [null, 'unauthenticated'],
      ['not-a-token', 'unauthenticated'],
      [s.tokens.reader, 'forbidden'],
      [s.tokens.landing, 'forbidden'],
      // an admin has no worker of its own: it never submits a claim as the worker a file names
      [s.tokens.admin, 'forbidden'],
    ];
    for (const [token, code] of cases) {
      const res = await cli(wt.path, ['reconcile', '--json'], { token });
      expect({ token: token?.slice(0, 6) ?? null, exit: res.code, code: JSON.parse(res.stdout).code }).toEqual({
        token: token?.slice(0, 6) ?? null,
        exit: EXIT.refused,
        code,
      });
      oneLine(res);
    }
    for (const token of [null, s.tokens.reader]) {
      const human = await cli(wt.path, ['reconcile'], { token });
      expect({ exit: human.code, stdout: human.stdout }).toEqual({ exit: EXIT.refused, stdout: '' });
      oneLine(human);
    }
    expect((await cli(wt.path, ['reconcile'], { token: null })).stderr).toContain('set OD_TOKEN');
    expect(await readProjection(wt.path)).toEqual(before);
    expect(await durableState(wt.path)).toEqual({ ownerships: [], events: [], reconciliations: [] });
  });

  it('the service unreachable: exit 4, the claim kept', async () => {
    const wt = makeRepo(1).worktrees[0]!;
    expect((await claimOffline(wt.path, 's-down')).code).toBe(EXIT.ok);
    const res = await cli(wt.path, ['reconcile', '--json'], { url: 'http://127.0.0.1:1' });
    expect(res.code).toBe(EXIT.unreachable);
    expect(JSON.parse(res.stdout)).toMatchObject({ ok: false, error: expect.stringContaining('unreachable') });
    expect((await readProjection(wt.path))?.provisional).toBe(true);
  });

  it('stale and corrupt projections through the API: exit 5, --repair rewrites them (logged)', async () => {
    const wt = repo.worktrees[2]!;
    const local = await readProjection(wt.path);
    await writeProjection(wt.path, { ...local!, executionSessionId: 's-tampered' });
    const flagged = await cli(wt.path, ['reconcile']);
    expect(flagged.code).toBe(EXIT.conflict);
    expect(flagged.stdout).toContain('corrupt');
    const repaired = await cli(wt.path, ['reconcile', '--repair', '--json']);
    expect(repaired.code).toBe(EXIT.ok);
    expect(JSON.parse(repaired.stdout)).toMatchObject({ kind: 'corrupt', repaired: true, recorded: true });
    expect((await readProjection(wt.path))?.executionSessionId).toBe('s-mine');
    expect((await durableState(wt.path)).reconciliations.map((r) => r.kind)).toEqual(['submitted', 'corrupt', 'corrupt']);
  });
});

describe('the HTTP port on another worker’s worktree', () => {
  it('a redacted conversation URL is no disagreement and is never written locally', async () => {
    const repo = makeRepo(1);
    const wt = repo.worktrees[0]!;
    const view = await s
      .api(s.tokens.executor)
      .bind({ repoRoot: repo.repoRoot, worktreePath: wt.path, branch: wt.branch, executionSessionId: 's-a', runtime: 'codex-cli' });
    for (let i = 0; i < 100 && (await readProjection(wt.path))?.seq !== view.seq; i++) await new Promise((r) => setTimeout(r, 50));
    const local = await readProjection(wt.path);
    expect(local).toMatchObject({ conversationId: CONV, conversationUrl: `https://chatgpt.com/c/${CONV}` });

    // The other executor sees the URL redacted; its port must not call that corrupt.
    const { port } = await openHttpPort(s.api(s.tokens.otherExecutor));
    expect((await port.durable(wt.path))?.owner?.conversation?.conversationUrl).toBe('[redacted]');
    expect(await reconcile(wt.path, port)).toMatchObject({ kind: 'in_sync' });

    // Behind (projection missing): rehydrated without the placeholder; the record of it refused, as A's worker holds the worktree.
    await writeProjection(wt.path, null, { force: true });
    const res = await reconcile(wt.path, port);
    expect(res).toMatchObject({
      kind: 'rehydrated',
      reason: 'missing',
      changed: true,
      recorded: false,
      recordError: expect.stringContaining('worker_mismatch'),
    });
    expect(await readProjection(wt.path)).toMatchObject({ executionSessionId: 's-a', conversationId: CONV, conversationUrl: null });
  });
});

describe('POST /v1/reconciliations and GET /v1/principal', () => {
  let repo: RepoFixture;
  let ownedPath: string;
  let ownershipId: string;
  const entry = (worktreePath: string, over: Record<string, unknown> = {}) => ({
    worktreePath,
    kind: 'rehydrated',
    reason: 'missing',
    repaired: false,
    ownershipId: null,
    localOwnershipId: null,
    localSeq: null,
    durableSeq: null,
    provisional: null,
    at: new Date().toISOString(),
    ...over,
  });
  const post = (token: string | null, body: unknown) => s.raw('POST', '/v1/reconciliations', { token, body });

  beforeAll(async () => {
    repo = makeRepo(3);
    const wt = repo.worktrees[0]!;
    const view = await s
      .api(s.tokens.executor)
      .bind({ repoRoot: repo.repoRoot, worktreePath: wt.path, branch: wt.branch, executionSessionId: 's-route', runtime: 'codex-cli' });
    ownedPath = view.worktreePath;
    ownershipId = view.ownershipId;
  });

  it('who the token is', async () => {
    expect((await s.raw('GET', '/v1/principal', { token: s.tokens.executor })).body).toMatchObject({ kind: 'executor', workerId: s.workerId });
    expect((await s.raw('GET', '/v1/principal', { token: s.tokens.reader })).body).toMatchObject({ kind: 'reader', workerId: null });
    expect((await s.raw('GET', '/v1/principal', { token: null })).status).toBe(401);
  });

  it('executor: its own worker’s worktree and free ones; another worker’s is refused; reader and landing never', async () => {
    const free = repo.worktrees[1]!.path;
    expect(await post(s.tokens.executor, entry(ownedPath, { ownershipId, durableSeq: 1 }))).toMatchObject({ status: 201, body: { recorded: true } });
    expect(
      (
        await post(
          s.tokens.executor,
          entry(free, { kind: 'stale', reason: 'unknown_to_service', localOwnershipId: 'own_01ARZ3NDEKTSV4RRFFQ69G5FAV', localSeq: 3 }),
        )
      ).status,
    ).toBe(201);
    expect(await post(s.tokens.otherExecutor, entry(ownedPath, { ownershipId }))).toMatchObject({ status: 403, body: { code: 'worker_mismatch' } });
    expect(await post(s.tokens.reader, entry(free))).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect(await post(s.tokens.landing, entry(free))).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect((await post(null, entry(free))).status).toBe(401);
    expect((await post(s.tokens.admin, entry(ownedPath, { kind: 'conflict', reason: 'worktree_owned', ownershipId }))).status).toBe(201);
    expect((await durableState(ownedPath)).reconciliations.map((r) => [r.kind, r.ownership_id])).toEqual([
      ['rehydrated', ownershipId],
      ['conflict', ownershipId],
    ]);
  });

  it('strict body: ids, seqs and kinds only; the ownership must be one of that worktree', async () => {
    const free = repo.worktrees[2]!.path;
    const bad: [Record<string, unknown>, number, string][] = [
      [{ note: 'free text' }, 400, 'unknown_field'],
      [{ conversationUrl: `https://chatgpt.com/c/${CONV}` }, 400, 'unknown_field'],
      [{ kind: 'in_sync' }, 400, 'invalid_input'],
      [{ reason: 'Because I said so' }, 400, 'invalid_input'],
      [{ localSeq: -1 }, 400, 'invalid_input'],
      [{ durableSeq: 2 ** 31 }, 400, 'invalid_input'],
      [{ ownershipId: 'own_x' }, 400, 'invalid_input'],
      [{ localOwnershipId: 'has spaces' }, 400, 'invalid_input'],
      [{ provisional: { executionSessionId: 's', runtime: 'r', idempotencyKey: null, claimedAt: 'yesterday' } }, 400, 'invalid_input'],
      [{ worktreePath: '/etc' }, 400, 'path_outside_allowed_roots'],
      [{ ownershipId }, 409, 'worktree_mismatch'],
    ];
    for (const [over, status, code] of bad) {
      const res = await post(s.tokens.admin, entry(free, over));
      expect({ over, status: res.status, code: (res.body as { code: string }).code }).toEqual({ over, status, code });
    }
    expect((await durableState(free)).reconciliations).toEqual([]);
  });

  it('the HTTP port refuses a principal that cannot reconcile before asking anything else', async () => {
    await expect(openHttpPort(s.api(s.tokens.reader))).rejects.toMatchObject({ name: 'ReconcileRefused', code: 'forbidden' });
    await expect(openHttpPort(s.api('wrong'))).rejects.toMatchObject({ name: 'ReconcileRefused', code: 'unauthenticated' });
    // An admin port reads and records, but never submits a provisional claim.
    const wt = repo.worktrees[2]!;
    expect((await offlineClaim(wt.path, { executionSessionId: 's-adm', runtime: 'codex-cli', workerId: s.workerId, allowedRoots: [TMP()] })).status).toBe(
      'claimed',
    );
    const admin = createHttpPort({ client: s.api(s.tokens.admin), caller: { kind: 'admin', id: 'a', workerId: null, runId: null } });
    await expect(reconcile(wt.path, admin)).rejects.toMatchObject({ name: 'ReconcileRefused', code: 'forbidden' });
    expect((await readProjection(wt.path))?.provisional).toBe(true);
    expect((await durableState(wt.path)).ownerships).toEqual([]);
  });

  it('a worktree the API may not look at is a refusal of the reconcile, not an outage', async () => {
    const outside = makeRepo(1, os.tmpdir());
    try {
      const { port } = await openHttpPort(s.api(s.tokens.executor));
      await expect(reconcile(outside.worktrees[0]!.path, port)).rejects.toMatchObject({ name: 'ReconcileRefused', code: 'path_outside_allowed_roots' });
    } finally {
      rmSync(path.dirname(outside.repoRoot), { recursive: true, force: true });
    }
  });
});
