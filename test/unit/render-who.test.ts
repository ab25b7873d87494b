import { renderWho, whoFields } from '../../src/cli/render';
import { CONV, live, record } from './render-fixtures';

test('who renders the fields of docs/cli.md#who in its order and layout', () => {
  const text = renderWho(record(), live);
  expect(text.split('\n').slice(0, 12)).toEqual([
    'Worktree:      /home/user/Projects/example/.worktrees/feature-x',
    'Branch:        wt/feature-x',
    'State:         ACTIVE',
    'Lane:          feature-x',
    'Plan:          docs/plans/feature-x.md',
    'Owner runtime: ChatGPT Web',
    'Conversation:  Example lane',
    `Conversation:  https://chatgpt.com/c/${CONV}`,
    'Worker:        /root/feature-x',
    'Session:       session_abc',
    // the later of the durable lastSeenAt and the live heartbeat
    'Last activity: 2026-08-20T00:05:00Z',
    'Latest WIP:    none',
  ]);
  expect(text).toContain('Liveness:      live (lease 60s)');
  expect(text).toContain('Epoch:         1');
  expect(text).toContain('Lineage:       epoch 1 bind: session_abc (ChatGPT Web) at 2026-08-20T00:00:00Z');
  expect(text).toContain('Submitted:     no');
  expect(text).toContain('Landed:        no');
});

test('unknown values read `unknown`, never a guess (docs/guarantees.md, promise 11)', () => {
  const r = record({
    lane: null,
    planRef: null,
    worker: null,
    lastSeenAt: null,
    owner: { executionSessionId: 'cli-1', runtime: 'codex-cli', parentExecutionSessionId: null, conversation: null, worker: null, process: null },
  });
  const byLabel = whoFields(r, null);
  const values = (label: string) => byLabel.filter((f) => f.label === label).map((f) => f.value);
  expect(values('Lane')).toEqual(['unknown']);
  expect(values('Plan')).toEqual(['unknown']);
  expect(values('Owner runtime')).toEqual(['codex-cli']);
  expect(values('Conversation')).toEqual(['unknown', 'unknown']);
  expect(values('Worker')).toEqual(['unknown']);
  expect(values('Last activity')).toEqual(['unknown']);
  expect(values('Liveness')).toEqual(['unknown']);
  // a conversation without a title: the title is unknown, the URL is shown
  const untitled = record();
  untitled.owner!.conversation!.title = null;
  expect(
    whoFields(untitled)
      .filter((f) => f.label === 'Conversation')
      .map((f) => f.value),
  ).toEqual(['unknown', `https://chatgpt.com/c/${CONV}`]);
});

test('redacted values are shown as redacted, not as unknown', () => {
  const r = record();
  r.owner!.conversation!.title = '[redacted]';
  r.owner!.conversation!.conversationUrl = '[redacted]';
  expect(
    whoFields(r)
      .filter((f) => f.label === 'Conversation')
      .map((f) => f.value),
  ).toEqual(['[redacted]', '[redacted]']);
});

test('handoff lineage, WIP, submitted and landed after a reclaim', () => {
  const r = record({
    state: 'landed',
    epoch: 2,
    handoff: null,
    lineage: [
      { executionSessionId: 'session_a', runtime: 'chatgpt-web', epoch: 1, via: 'bind', at: '2026-08-20T00:00:00Z', conversationId: CONV },
      { executionSessionId: 'session_b', runtime: 'chatgpt-web', epoch: 2, via: 'reclaim', at: '2026-08-20T00:10:00Z', conversationId: CONV },
    ],
    latestWip: { ref: 'refs/overdeck/wip/own_01JABCDEFGHJKMNPQRSTVWXYZ0/5', sha: 'a'.repeat(40), at: '2026-08-20T00:10:00Z' },
    submitted: { at: '2026-08-20T00:20:00Z', head: 'b'.repeat(40) },
    landings: [
      {
        ownershipId: 'own_01JABCDEFGHJKMNPQRSTVWXYZ0',
        sourceBranch: 'wt/feature-x',
        sourceHead: 'b'.repeat(40),
        landedBranch: 'main',
        landedHead: 'c'.repeat(40),
        landedAt: '2026-08-20T00:30:00Z',
        worktreePath: '/home/user/Projects/example/.worktrees/feature-x',
        executionSessionId: 'session_b',
        worker: null,
        conversation: null,
      },
    ],
  });
  const text = renderWho(r, { status: 'unowned', verdict: null, lastHeartbeatAt: null, checkedAt: null, leaseTtlMs: 60_000 });
  expect(text).toContain('State:         LANDED');
  expect(text).toContain(`Latest WIP:    refs/overdeck/wip/own_01JABCDEFGHJKMNPQRSTVWXYZ0/5 (${'a'.repeat(12)}, 2026-08-20T00:10:00Z)`);
  expect(text).toContain(
    'Lineage:       epoch 1 bind: session_a (ChatGPT Web) at 2026-08-20T00:00:00Z\n               epoch 2 reclaim: session_b (ChatGPT Web) at 2026-08-20T00:10:00Z',
  );
  expect(text).toContain(`Submitted:     2026-08-20T00:20:00Z (head ${'b'.repeat(12)})`);
  expect(text).toContain(`Landed:        main@${'c'.repeat(12)} from wt/feature-x@${'b'.repeat(12)} at 2026-08-20T00:30:00Z`);
  expect(text).toContain('Liveness:      unowned');
});

test('a pending handoff and a silent owner are shown as such', () => {
  const r = record({
    state: 'handoff_pending',
    handoff: { handoffId: 'h1', toExecutionSessionId: 'session_next', startedAt: '2026-08-20T00:02:00Z', expiresAt: '2026-08-20T00:12:00Z' },
  });
  const text = renderWho(r, {
    status: 'silent',
    verdict: 'unknown',
    lastHeartbeatAt: '2026-08-20T00:01:00Z',
    checkedAt: '2026-08-20T00:03:00Z',
    leaseTtlMs: 60_000,
  });
  expect(text).toContain('State:         HANDOFF_PENDING');
  expect(text).toContain('Handoff:       pending to session_next (since 2026-08-20T00:02:00Z, expires 2026-08-20T00:12:00Z)');
  expect(text).toContain('Liveness:      silent: heartbeats overdue, owner not proven dead (authority: unknown)');
});

test('who shows HEAD and ahead/behind from the host agent, or unknown without a report', () => {
  const withBranch = renderWho(record(), live, {
    head: 'abcdef0123456789abcdef0123456789abcdef01',
    base: 'main',
    ahead: 2,
    behind: 1,
    at: '2026-08-20T00:05:00Z',
  });
  expect(withBranch).toContain('Head:          abcdef012345 (2 ahead, 1 behind main; seen 2026-08-20T00:05:00Z)');
  expect(renderWho(record(), live)).toContain('Head:          unknown');
});
