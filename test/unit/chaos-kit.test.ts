import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { summarize } from '../../chaos/answer';
import { errorBodyProblems, stackLike, unavailableProblem } from '../../chaos/answer-rules';
import { believeView, type OwnerBelief } from '../../chaos/belief';
import { Rng } from '../../chaos/rng';
import { viewMismatch } from '../../chaos/view-check';
import { call, CallLog } from '../../faults/http';
import { emptyRecord, type OwnershipRecord } from '../../src/domain/projection';

/**
 * The chaos kit (chaos/) that the fault run, the torture run and the schema fuzz share: a seed must
 * keep drawing what it drew before the three generators became one, and the rules every answer is
 * judged by say the same wherever they are applied.
 */

describe('one seeded generator', () => {
  // Drawn by torture/rng.ts and test/support/fuzz/rng.ts before they became chaos/rng.ts: a printed seed repeats a run.
  test('a torture seed draws what it drew before', () => {
    const r = new Rng(31);
    expect([
      r.int(1000),
      r.int(1000),
      r.int(1000),
      r.weighted({ heartbeat: 4, plan: 2, handoff: 0, release: 0.6 }),
      r.pick(['a', 'b', 'c']),
      r.chance(0.5),
    ]).toEqual([672, 835, 749, 'heartbeat', 'b', true]);
    const f = r.fork(3);
    expect([f.int(1000), f.int(1000)]).toEqual([459, 262]);
  });

  test("a fuzz request's stream draws what it drew before", () => {
    const q = Rng.forRequest(7, 3);
    expect([
      q.between(3, 99),
      q.hex(8),
      q.tag(5),
      q.choose([
        [3, 'x'],
        [1, 'y'],
      ]),
    ]).toEqual([63, '9011bd57', 'kfkl1', 'x']);
  });
});

describe('what every answer must be', () => {
  test('only a 503 with Retry-After may be a 5xx', () => {
    expect(unavailableProblem(500, '1')).toBe('status 500');
    expect(unavailableProblem(502, null)).toBe('status 502');
    expect(unavailableProblem(503, null)).toBe('503 without Retry-After');
    expect(unavailableProblem(503, '2')).toBeNull();
    expect(unavailableProblem(409, null)).toBeNull();
  });

  test('a refusal is {code, message[, details]} and nothing else', () => {
    expect(errorBodyProblems({ code: 'not_owner', message: 'no', details: { epoch: 2 } }, '')).toEqual([]);
    expect(errorBodyProblems({ code: 'not_owner', message: 'no', stack: 'x' }, '')).toEqual(['error body has keys stack']);
    expect(errorBodyProblems({ message: 'no' }, '')).toEqual(['error body without a string code']);
    expect(errorBodyProblems({ code: 'x' }, '')).toEqual(['error body without a string message']);
    expect(errorBodyProblems({ code: 'x', message: 'y', details: [1] }, '')).toEqual(['error details not an object']);
    expect(errorBodyProblems(undefined, '<html>')).toEqual(['error body is not a JSON object: "<html>"']);
    expect(errorBodyProblems({ code: 'x', message: 'y' }, '', (c) => `unknown reason code ${c}`)).toEqual(['unknown reason code x']);
  });

  test('stack-like text is found', () => {
    expect(stackLike('TypeError: x is undefined')).toBe('TypeError');
    expect(stackLike('    at handler (/app/src/api/routes.ts:12:3)')).not.toBeNull();
    expect(stackLike('worktree_owned')).toBeNull();
  });

  test("a refusal's summary keeps its code and disclosed details; a landing its status", () => {
    expect(summarize(409, { code: 'worktree_owned', message: 'm', details: { owner: { epoch: 3 } } })).toEqual({
      code: 'worktree_owned',
      answer: { details: { owner: { epoch: 3 } } },
    });
    expect(summarize(0, null)).toEqual({ code: 'no_answer' });
    expect(summarize(502, null)).toEqual({ code: 'http_502' });
    expect(summarize(202, { status: 'accepted', ownershipId: 'o1' })).toEqual({ answer: { ownershipId: 'o1', landingStatus: 'accepted' } });
  });
});

describe("a fault run's call, over a real HTTP server", () => {
  let server: http.Server;
  let url = '';
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/stack') {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 'internal', message: 'TypeError: boom\n    at x (/app/src/a.ts:1:1)' }));
      } else if (req.url === '/busy') {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end(JSON.stringify({ code: 'unavailable', message: 'try again' }));
      } else if (req.url === '/extra') {
        res.writeHead(409, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 'not_owner', message: 'no', hint: 'x' }));
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            ownershipId: 'o1',
            state: 'active',
            epoch: 2,
            seq: 5,
            owner: { executionSessionId: 's1' },
            worker: { workerId: 'w1' },
            handoff: null,
          }),
        );
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const meta = { op: 'get' as const, slot: 0, intent: -1, attempt: 1, fields: {} };

  test('records the view answered, numbered in the order of the calls', async () => {
    const log = new CallLog(null);
    log.phase = 'a1';
    const a = await call(log, url, 'GET', '/v', 't', undefined, meta, 5_000);
    const b = await call(log, url, 'GET', '/v', 't', undefined, meta, 5_000);
    expect([a.record.n, b.record.n, a.record.phase]).toEqual([0, 1, 'a1']);
    expect(a.record.answer).toMatchObject({ ownershipId: 'o1', state: 'active', epoch: 2, seq: 5, ownerSession: 's1', ownerWorker: 'w1', handoffId: null });
    expect(log.records).toHaveLength(2);
  });

  test('flags a stack in an answer and a refusal with keys of its own; a 503 keeps its Retry-After', async () => {
    const log = new CallLog(null);
    const stack = await call(log, url, 'GET', '/stack', 't', undefined, meta, 5_000);
    expect(stack.record).toMatchObject({ status: 500, code: 'internal' });
    expect(stack.record.unsafeBody).toMatch(/^stack-like text: /);
    const extra = await call(log, url, 'GET', '/extra', 't', undefined, meta, 5_000);
    expect(extra.record.unsafeBody).toMatch(/^not an error body: /);
    const busy = await call(log, url, 'GET', '/busy', 't', undefined, meta, 5_000);
    expect(busy.record).toMatchObject({ status: 503, code: 'unavailable', retryAfter: '1' });
    expect(busy.record.unsafeBody).toBeUndefined();
  });

  test('no answer is status 0, code no_answer', async () => {
    const log = new CallLog(null);
    const a = await call(log, 'http://127.0.0.1:1', 'GET', '/v', 't', undefined, meta, 2_000);
    expect(a.record).toMatchObject({ status: 0, code: 'no_answer' });
  });
});

describe('views against the log', () => {
  const fold = (over: Partial<OwnershipRecord>): OwnershipRecord => ({
    ...emptyRecord({ ownershipId: 'o1', repoRoot: '/r', worktreePath: '/r/w', branch: 'b', hostId: 'h' }),
    state: 'active',
    epoch: 2,
    seq: 5,
    owner: { executionSessionId: 's1' } as OwnershipRecord['owner'],
    worker: { workerId: 'w1' } as OwnershipRecord['worker'],
    ...over,
  });
  const answer = { ownershipId: 'o1', state: 'active', epoch: 2, seq: 5, ownerSession: 's1', ownerWorker: 'w1', handoffId: null };

  test('a view is the fold at its seq, the owner worker included', () => {
    expect(viewMismatch(fold({}), answer)).toBeNull();
    expect(viewMismatch(fold({ worker: { workerId: 'w2' } as OwnershipRecord['worker'] }), answer)?.logged).toContain('"ownerWorker":"w2"');
    expect(viewMismatch(fold({ epoch: 3 }), answer)).not.toBeNull();
  });

  test('a belief takes a newer view of its lifecycle, or any view of another, never an older one', () => {
    const b: OwnerBelief = { ownershipId: 'o1', state: 'active', epoch: 2, seq: 5, ownerSession: 's1' };
    expect(believeView(b, { ...answer, seq: 4, state: 'released' })).toBe(false);
    expect(b.state).toBe('active');
    expect(believeView(b, { ...answer, seq: 6, state: 'released' })).toBe(true);
    expect(b).toMatchObject({ state: 'released', seq: 6 });
    expect(believeView(b, { ...answer, ownershipId: 'o2', seq: 1, epoch: 1 })).toBe(true);
    expect(b).toMatchObject({ ownershipId: 'o2', seq: 1, epoch: 1 });
  });
});
