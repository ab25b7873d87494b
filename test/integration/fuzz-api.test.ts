import { realpathSync } from 'node:fs';
import { eventName } from '../../faults/diagnose';
import { git, makeRepo } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { runDocFuzz } from '../support/fuzz/doc-run';
import { makePathFixtures } from '../support/fuzz/hostile';
import { operationsOf, type ApiOperation } from '../support/fuzz/openapi';
import { runFuzz } from '../support/fuzz/run';
import { learn, snapshotOwnership, type OwnershipSnapshot, type Target, type World } from '../support/fuzz/world';
import { acquireHeavyLock } from '../support/heavy-lock';

/**
 * A fuzz run over every operation of the server's own /openapi.json, on the real stack: requests
 * built from each schema, then mutated (hostile strings, huge and looping paths, wrong types,
 * unknown and missing fields, bad tokens, bad JSON and media types, bad ids, repeated queries).
 * Oracle: no 5xx (a 503 only with Retry-After and only when a dependency is really absent), every
 * refusal `{code, message}` with a known code and never an echo; seeded ownerships, sent only
 * refused-by-construction messages, are unchanged at the end and still usable by their owners.
 *
 * FUZZ_SEED picks another seed (the summary line prints it); FUZZ_REQUESTS the count (CI
 * default 2,000; the long mode is `FUZZ_REQUESTS=10000 npx jest test/integration/fuzz-api.test.ts`);
 * FUZZ_CONCURRENCY the requests in flight (default 8). A violation prints the request (tokens
 * redacted to their shape), so it replays.
 *
 * Then the document-driven run (test/support/fuzz/doc-run.ts): cases generated from the
 * document's JSON schemas alone, as an outside client would, judged by Ajv against the document.
 * FUZZ_DOC_CASES the cases per operation (default 200, about 10 s; the long run: 1,000 or more).
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20261201);
/**
 * Routes are taken in turn (request i goes to operation i mod n), so 2,000 send every route some
 * 40 or more requests, about 30 % of those to a seeded ownership where the route can name one,
 * each with its own seeded mutations. 10,000 (the long mode) cost 25 to 60 s of wall time on the
 * shared 2-core machine.
 */
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 2_000);
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 8);
const LONG_LEASE_MS = 86_400_000;
const DOC_CASES = Number(process.env.FUZZ_DOC_CASES ?? 200);
/** The share of documented-valid cases an operation may refuse as malformed (invalid_input, unknown_field). */
const MAX_MALFORMED_SHARE = 0.02;

let s: ApiStack;
let w: World;
let ops: ApiOperation[];

let releaseHeavy: () => void = () => undefined;
beforeAll(async () => {
  releaseHeavy = await acquireHeavyLock();
  // Its own database: the fuzz lists every ownership and messages it. In the shared one it found
  // other files' ownerships, whose workers had stopped, and rightly got 503s for them.
  s = await startApiStack({ ownDatabase: true });
}, 900_000);
afterAll(async () => {
  await s?.stop();
  releaseHeavy();
});

async function ok<T>(res: { status: number; body: unknown }, status = 200): Promise<T> {
  if (res.status !== status) throw new Error(`setup: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as T;
}

interface View {
  ownershipId: string;
  epoch: number;
  state: string;
  handoff: { handoffId: string; toExecutionSessionId: string } | null;
}

async function seed(world: World, seedRepo: World['seedRepo']): Promise<Target[]> {
  const wt = seedRepo.worktrees;
  const base = (i: number, session: string) => ({
    repoRoot: seedRepo.repoRoot,
    worktreePath: wt[i]!.path,
    branch: wt[i]!.branch,
    executionSessionId: session,
    runtime: 'codex-cli',
    leaseTtlMs: LONG_LEASE_MS,
  });
  const a = await ok<View>(await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: { ...base(0, 'seed-a'), lane: 'seed-lane' } }));
  const b0 = await ok<View>(await s.raw('POST', '/v1/bind', { token: s.tokens.executor, body: base(1, 'seed-b') }));
  const b = await ok<View>(
    await s.raw('POST', `/v1/ownerships/${b0.ownershipId}/handoff`, {
      token: s.tokens.executor,
      body: { executionSessionId: 'seed-b', epoch: b0.epoch, toExecutionSessionId: 'seed-b-next', toWorkerId: s.workerId, reason: 'seeded' },
    }),
  );
  const c = await ok<View>(
    await s.raw('POST', '/v1/bind', { token: s.tokens.admin, body: { ...base(2, 'seed-c'), worker: { workerId: world.seedWorkerId } } }),
  );
  const t = (v: View, i: number, session: string, ownerPrincipal: Target['ownerPrincipal'], ownerWorker: string): Target => ({
    id: v.ownershipId,
    worktreePath: wt[i]!.path,
    repoRoot: seedRepo.repoRoot,
    branch: wt[i]!.branch,
    session,
    epoch: v.epoch,
    ownerWorker,
    ownerPrincipal,
    handoffId: v.handoff?.handoffId ?? null,
    successor: v.handoff?.toExecutionSessionId ?? null,
    state: v.state,
    seeded: true,
  });
  expect(b.state).toBe('handoff_pending');
  return [t(a, 0, 'seed-a', 'executor', s.workerId), t(b, 1, 'seed-b', 'executor', s.workerId), t(c, 2, 'seed-c', 'admin', world.seedWorkerId)];
}

/** The document, the repositories, the principals and the seeded ownerships: made once, for both runs. */
let ready: Promise<void> | null = null;
const setUp = () => (ready ??= makeWorld());

async function makeWorld(): Promise<void> {
  const doc = await s.raw('GET', '/openapi.json');
  expect(doc.status).toBe(200);
  ops = operationsOf(doc.body);
  expect(ops.length).toBeGreaterThanOrEqual(20);

  const root = realpathSync(process.env.OD_TEST_TMP!);
  const fuzzRepo = makeRepo(6, root);
  const seedRepo = makeRepo(3, root);
  const url = new URL(s.url);
  w = {
    host: url.hostname,
    port: Number(url.port),
    hostId: s.h.hostId,
    principals: {
      admin: { name: 'admin', kind: 'admin', token: s.tokens.admin, workerId: null },
      landing: { name: 'landing', kind: 'landing', token: s.tokens.landing, workerId: null },
      reader: { name: 'reader', kind: 'reader', token: s.tokens.reader, workerId: null },
      executor: { name: 'executor', kind: 'executor', token: s.tokens.executor, workerId: s.workerId },
      otherExecutor: { name: 'otherExecutor', kind: 'executor', token: s.tokens.otherExecutor, workerId: s.otherWorkerId },
    },
    seedWorkerId: `seeded-${s.workerId}`,
    fuzzRepo: { ...fuzzRepo, head: git(fuzzRepo.repoRoot, 'rev-parse', 'HEAD') },
    seedRepo: { ...seedRepo, head: git(seedRepo.repoRoot, 'rev-parse', 'HEAD') },
    fx: makePathFixtures(root),
    sessions: ['fz-s1', 'fz-s2', 'fz-s3', 'fz-s4', 'fz-s5', 'fz-s6'],
    seeded: [],
    live: new Map(),
    sequence: 0,
    unknownHostBudget: 2,
  };
  w.seeded = await seed(w, w.seedRepo);
  // A couple of the fuzz's own ownerships to start from; the run learns more from its binds.
  for (const [i, token] of [
    [0, s.tokens.executor],
    [1, s.tokens.otherExecutor],
  ] as const) {
    const wt = w.fuzzRepo.worktrees[i]!;
    learn(
      w,
      await ok(
        await s.raw('POST', '/v1/bind', {
          token,
          body: { worktreePath: wt.path, branch: wt.branch, executionSessionId: w.sessions[i]!, runtime: 'codex-cli' },
        }),
      ),
    );
  }
}

test(`fuzz: every route of /openapi.json, ${REQUESTS} requests, no 5xx, no echo, refused requests change nothing`, async () => {
  await setUp();
  const before = new Map<string, OwnershipSnapshot>();
  for (const t of w.seeded) before.set(t.id, await snapshotOwnership(s.h.pool, t.id));

  const result = await runFuzz(w, ops, Object.values(s.tokens), {
    seed: SEED,
    requests: REQUESTS,
    concurrency: CONCURRENCY,
    timeoutMs: 120_000,
    seededShare: 0.3,
  });
  process.stderr.write(`${result.summary}\n`);
  // Grouped by kind of problem, two examples each: enough to replay, short enough to read.
  const groups = new Map<string, typeof result.violations>();
  for (const v of result.violations) {
    const kind = `${v.status} ${v.problems.map((p) => p.replace(/\(.*\)|".*"/g, '…')).join('; ')}`;
    groups.set(kind, [...(groups.get(kind) ?? []), v]);
  }
  for (const [kind, vs] of groups) {
    process.stderr.write(`[fuzz] VIOLATION x${vs.length}: ${kind}\n`);
    for (const v of vs.slice(0, 2)) {
      process.stderr.write(`  request: ${v.request}\n  response: ${v.response}\n`);
      // A 5xx names its ownership's stalls: where its history waited longest, and on what.
      const id = /own_[0-9A-HJKMNP-TV-Z]{26}/.exec(v.request)?.[0];
      if ((v.status ?? 0) >= 500 && id) for (const line of await historyStalls(id)) process.stderr.write(`  history: ${line}\n`);
    }
  }

  // Every route of the document was exercised, and a share of each was aimed at seeded ownerships.
  expect(Object.keys(result.byRoute).sort()).toEqual(ops.map((o) => o.key).sort());
  expect(result.seededRequests).toBeGreaterThan(REQUESTS * 0.05);

  // Refused requests changed nothing: the seeded ownerships' log, row, receipts and branch names are as before.
  const changed: unknown[] = [];
  for (const t of w.seeded) {
    const after = await snapshotOwnership(s.h.pool, t.id);
    if (JSON.stringify(after) !== JSON.stringify(before.get(t.id))) changed.push({ id: t.id, before: before.get(t.id), after });
  }

  // The projection never disagrees with the log, for any ownership of the run's repositories.
  const drift = await s.h.pool.query(
    `SELECT o.ownership_id, o.seq, max(e.seq) AS max FROM ownerships o JOIN ownership_events e USING (ownership_id)
      WHERE o.repo_root = ANY($1) GROUP BY o.ownership_id, o.seq HAVING o.seq <> max(e.seq)`,
    [[w.fuzzRepo.repoRoot, w.seedRepo.repoRoot]],
  );

  // No seeded ownership is left unusable: its owner still heartbeats (202) and binds a plan (200).
  const unusable: unknown[] = [];
  for (const t of w.seeded) {
    const token = s.tokens[t.ownerPrincipal];
    const hb = await s.raw('POST', `/v1/ownerships/${t.id}/heartbeat`, { token, body: { executionSessionId: t.session, epoch: t.epoch } });
    if (hb.status !== 202) unusable.push({ id: t.id, heartbeat: hb.status, body: hb.body });
    const plan = await s.raw('POST', `/v1/ownerships/${t.id}/plan`, {
      token,
      body: { executionSessionId: t.session, epoch: t.epoch, lane: 'after-fuzz', planRef: 'docs/plans/after.md' },
    });
    if (plan.status !== 200 || (plan.body as { lane?: unknown }).lane !== 'after-fuzz') unusable.push({ id: t.id, plan: plan.status, body: plan.body });
  }
  // And every ownership the fuzz itself learned still answers its view.
  for (const id of w.live.keys()) {
    const res = await s.raw('GET', `/v1/ownerships/${id}`, { token: s.tokens.reader });
    if (res.status !== 200) unusable.push({ id, get: res.status, body: res.body });
  }

  expect({
    violations: Object.fromEntries([...groups].map(([kind, vs]) => [kind, `x${vs.length}, e.g. ${vs[0]!.request.slice(0, 400)}`])),
    changed,
    drift: drift.rows,
    unusable,
  }).toEqual({ violations: {}, changed: [], drift: [], unusable: [] });
}, 900_000);

/** The ownership's history around its longest waits (over 3 s between events): what it was doing. */
async function historyStalls(ownershipId: string): Promise<string[]> {
  try {
    const { rows } = await s.h.pool.query<{ workflow_id: string }>('SELECT workflow_id FROM ownerships WHERE ownership_id = $1', [ownershipId]);
    if (!rows[0]) return [`no row for ${ownershipId}`];
    const events = (await s.h.temporal.workflow.getHandle(rows[0].workflow_id).fetchHistory()).events ?? [];
    const at = (e: (typeof events)[number]) => Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
    const out: string[] = [];
    for (let i = 1; i < events.length; i++) {
      const gap = at(events[i]!) - at(events[i - 1]!);
      if (gap < 3_000) continue;
      const around = events
        .slice(Math.max(0, i - 3), i + 2)
        .map((e) => `${String(e.eventId)}:${eventName(e)}`)
        .join(' ');
      out.push(`${gap} ms before event ${String(events[i]!.eventId)}: ${around}`);
    }
    return out.length ? out : ['no wait over 3 s in its history'];
  } catch (err) {
    return [`history unreadable: ${(err as Error).message.slice(0, 200)}`];
  }
}

test(`fuzz from the document alone: ${DOC_CASES} cases per operation, valid per /openapi.json and boundary values; the document states every check`, async () => {
  await setUp();
  const result = await runDocFuzz(w, ops, s.h.pool, {
    seed: SEED,
    casesPerOperation: DOC_CASES,
    concurrency: CONCURRENCY,
    timeoutMs: 120_000,
    maxMalformedShare: MAX_MALFORMED_SHARE,
  });
  process.stderr.write(`${result.summary}\n`);
  const groups = new Map<string, typeof result.violations>();
  for (const v of result.violations) {
    const kind = `${v.example.op}: ${v.problem}`;
    groups.set(kind, [...(groups.get(kind) ?? []), v]);
  }
  for (const [kind, vs] of groups) {
    process.stderr.write(`[doc-fuzz] VIOLATION x${vs.length}: ${kind}\n`);
    for (const v of vs.slice(0, 2)) process.stderr.write(`  request: ${v.example.request}\n  response: ${v.example.status} ${v.example.response}\n`);
  }
  // Every operation of the document was exercised with cases the document calls valid.
  const thin = Object.entries(result.perOperation)
    .filter(([, t]) => t.valid < DOC_CASES / 5)
    .map(([k, t]) => `${k}: ${t.valid} valid, ${t.misses} misses`);
  expect({
    violations: Object.fromEntries(
      [...groups].map(([kind, vs]) => [
        kind,
        `x${vs.length}, e.g. ${vs[0]!.example.request.slice(0, 400)} -> ${vs[0]!.example.status} ${vs[0]!.example.response.slice(0, 120)}`,
      ]),
    ),
    changed: result.changed,
    thin,
  }).toEqual({ violations: {}, changed: [], thin: [] });
}, 600_000);
