import { temporal } from '@temporalio/proto';
import type { OwnershipViewOut } from '../../src/contract/http';
import { makeRepo } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { scriptedAuthority } from '../support/harness';

/**
 * An active owner's heartbeats through the API are a row in PostgreSQL, not a signal each: the
 * workflow reads the row when the lease runs out. No heartbeat of the current owner is lost from
 * the lease's point of view (the authority says `dead` throughout: only a lease that really ran
 * out makes the owner stale), and the history holds no heartbeat signal for a tenure the workflow
 * already holds (a tenure's first heartbeat is signalled only when the workflow is behind the log). Real stack.
 */
const script = scriptedAuthority('dead');
let s: ApiStack;
beforeAll(async () => {
  s = await startApiStack({ authority: script.authority });
});
afterAll(async () => s?.stop());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('heartbeats keep a 1.5 s lease alive for 5 s with no signal; silence makes the owner stale', async () => {
  const wt = makeRepo(1).worktrees[0]!;
  const bound = await s.raw('POST', '/v1/bind', {
    token: s.tokens.executor,
    body: { worktreePath: wt.path, branch: wt.branch, executionSessionId: 'hb-s1', runtime: 'codex-cli', leaseTtlMs: 1_500 },
  });
  expect(bound.status).toBe(200);
  const id = (bound.body as OwnershipViewOut).ownershipId;
  const get = async () => (await s.raw('GET', `/v1/ownerships/${id}`, { token: s.tokens.reader })).body as OwnershipViewOut;

  const until = Date.now() + 5_000;
  let beats = 0;
  while (Date.now() < until) {
    const r = await s.raw('POST', `/v1/ownerships/${id}/heartbeat`, { token: s.tokens.executor, body: { executionSessionId: 'hb-s1', epoch: 1 } });
    expect(r.status).toBe(202);
    beats++;
    expect((await get()).state).toBe('active');
    await sleep(250);
  }
  expect(beats).toBeGreaterThan(10);
  // The live view says when it was last heard, though no signal told the workflow.
  const sentAt = Date.now();
  await s.raw('POST', `/v1/ownerships/${id}/heartbeat`, { token: s.tokens.executor, body: { executionSessionId: 'hb-s1', epoch: 1 } });
  expect(Date.parse((await get()).liveness?.lastHeartbeatAt ?? '0')).toBeGreaterThanOrEqual(sentAt - 50);

  const { rows } = await s.h.pool.query<{ workflow_id: string }>('SELECT workflow_id FROM ownerships WHERE ownership_id = $1', [id]);
  const history = await s.h.temporal.workflow.getHandle(rows[0]!.workflow_id).fetchHistory();
  const signals = (history.events ?? []).filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
  expect(signals.map((e) => e.workflowExecutionSignaledEventAttributes?.signalName)).toEqual([]);

  // Silence: the lease runs out, the store has nothing newer, the authority says dead.
  const staleBy = Date.now() + 15_000;
  let v = await get();
  while (v.state !== 'stale' && Date.now() < staleBy) {
    await sleep(200);
    v = await get();
  }
  expect(v.state).toBe('stale');
  // ...and a heartbeat revives it (signalled: a stale owner's is due now).
  expect((await s.raw('POST', `/v1/ownerships/${id}/heartbeat`, { token: s.tokens.executor, body: { executionSessionId: 'hb-s1', epoch: 1 } })).status).toBe(
    202,
  );
  const reviveBy = Date.now() + 10_000;
  while ((await get()).state !== 'active' && Date.now() < reviveBy) await sleep(100);
  expect((await get()).state).toBe('active');
}, 60_000);
