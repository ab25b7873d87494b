import type { ListResponse, OwnershipItem, OwnershipViewOut } from '../../src/contract/http';
import { decideStale } from '../../src/domain/liveness';
import { stampEvent, type OwnershipEvent } from '../../src/domain/events';
import { applyEvent, type OwnershipRecord } from '../../src/domain/projection';
import { appendEvents, readEvents } from '../../src/store/event-store';
import { projectionQuery, type OwnershipView } from '../../src/workflows/messages';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';

/**
 * A view is one moment (docs/ownership-record.md#one-moment): the state it shows and the liveness
 * it shows are of the same record. The interleaving that broke the demo, made on purpose: the
 * workflow's log write has made `ownership.stale` durable, and the workflow task that learns so
 * (and publishes the memo) has not run yet. Here the log is moved ahead of the workflow by writing
 * the very event the workflow's own decision would have written; every reader then answers before
 * the workflow catches up. Before the rule, each answered `state: stale` with `verdict: null`
 * (planted back: livenessOfRecord returning the memo's liveness unchanged fails all three).
 * Real stack: Temporal dev server, PostgreSQL, the API over HTTP, git worktrees.
 */

let s: ApiStack;
let repo: RepoFixture;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(2);
});
afterAll(async () => s?.stop());

const fold = (events: OwnershipEvent[]): OwnershipRecord | null => events.reduce<OwnershipRecord | null>((r, e) => applyEvent(r, e), null);

async function bound(i: number): Promise<{ id: string; workflowId: string; session: string }> {
  const wt = repo.worktrees[i]!;
  const session = `moment-${i}`;
  const res = await s.raw('POST', '/v1/bind', {
    token: s.tokens.executor,
    body: { worktreePath: wt.path, branch: wt.branch, executionSessionId: session, runtime: 'codex-cli' },
  });
  expect(res.status).toBe(200);
  const id = (res.body as OwnershipViewOut).ownershipId;
  const { rows } = await s.h.pool.query<{ workflow_id: string }>('SELECT workflow_id FROM ownerships WHERE ownership_id = $1', [id]);
  return { id, workflowId: rows[0]!.workflow_id, session };
}

/** What the workflow's log write would have made durable for a dead verdict, written before the workflow hears of it. */
async function staleInTheLogOnly(workflowId: string, ownershipId: string, session: string): Promise<OwnershipEvent> {
  const record = fold(await readEvents(s.h.pool, ownershipId))!;
  const [draft] = decideStale(record, { executionSessionId: session, epoch: record.epoch }, 'dead', 'process 4242 is gone');
  const event = stampEvent(ownershipId, record, draft!, new Date().toISOString());
  expect(await appendEvents(s.h.pool, workflowId, [event])).toMatchObject({ durableSeq: event.seq });
  // The split the demo met: the log says stale, the workflow (and so its memo) still says active.
  const inWorkflow = (await s.h.temporal.workflow.getHandle(workflowId).query(projectionQuery)) as OwnershipView | null;
  expect(inWorkflow).toMatchObject({ state: 'active', seq: event.seq - 1, liveness: { verdict: null } });
  return event;
}

test('GET /v1/ownership/live, GET /v1/ownerships/{id} and the list show stale with the verdict that made it, while the memo is behind', async () => {
  const { id, workflowId, session } = await bound(0);
  const stale = await staleInTheLogOnly(workflowId, id, session);
  // Each reader answers before the workflow has caught up (a read never waits for it).
  const [live, byId, list] = await Promise.all([
    s.raw('GET', `/v1/ownership/live?ownershipId=${id}`, { token: s.tokens.reader }),
    s.raw('GET', `/v1/ownerships/${id}`, { token: s.tokens.reader }),
    s.raw('GET', `/v1/ownerships?liveness=true&limit=50`, { token: s.tokens.reader }),
  ]);
  const item = (list.body as ListResponse).items.find((x) => x.ownershipId === id)!;
  for (const v of [live.body as OwnershipItem, byId.body as OwnershipViewOut, item]) {
    expect(v).toMatchObject({ state: 'stale', seq: stale.seq, liveness: { status: 'stale', verdict: 'dead', checkedAt: stale.at } });
  }
});

test('with no memo to read at all, a stale record still says it was proven dead', async () => {
  const { id, workflowId, session } = await bound(1);
  await staleInTheLogOnly(workflowId, id, session);
  // The lifecycle's workflow gone (its memo with it): the record alone answers.
  await s.h.temporal.workflow.getHandle(workflowId).terminate('the view without a memo');
  const res = await s.raw('GET', `/v1/ownerships/${id}`, { token: s.tokens.reader });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ state: 'stale', liveness: { status: 'stale', verdict: 'dead' }, projectionSync: null });
});
