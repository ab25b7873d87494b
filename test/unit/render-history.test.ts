import { renderHistory } from '../../src/cli/render';
import { CONV, record } from './render-fixtures';

const at = (m: number) => `2026-08-20T00:${String(m).padStart(2, '0')}:00Z`;
const base = (seq: number, type: string, session: string | null, principal: string) => ({
  ownershipId: 'own_01JABCDEFGHJKMNPQRSTVWXYZ0',
  seq,
  type,
  at: at(seq),
  actor: { executionSessionId: session, principal },
  repoRoot: '/r',
  worktreePath: '/r/.worktrees/x',
  branch: 'wt/x',
  hostId: 'h',
  data: {},
});

test('history: the owner chain, WIP, landing and every event, oldest first', () => {
  const r = record({
    state: 'closed',
    worktreeRemoved: true,
    branch: 'wt/x2',
    branchNames: ['wt/x', 'wt/x2'],
    latestWip: { ref: 'refs/overdeck/wip/own_01JABCDEFGHJKMNPQRSTVWXYZ0/4', sha: 'a'.repeat(40), at: at(4) },
  });
  const text = renderHistory({
    ownerships: [
      {
        ownershipId: r.ownershipId,
        record: r,
        events: [
          base(1, 'ownership.claimed', 'session_a', 'executor:e1'),
          base(2, 'ownership.stale', null, 'system:liveness'),
          base(3, 'ownership.reclaimed', 'session_b', 'executor:e1'),
        ],
        lineage: [
          { executionSessionId: 'session_a', runtime: 'chatgpt-web', epoch: 1, via: 'bind', at: at(1), previousExecutionSessionId: null, conversationId: CONV },
          {
            executionSessionId: 'session_b',
            runtime: 'codex-cli',
            epoch: 2,
            via: 'reclaim',
            at: at(3),
            previousExecutionSessionId: 'session_a',
            conversationId: null,
          },
        ],
      },
    ],
  });
  expect(text).toContain('Ownership own_01JABCDEFGHJKMNPQRSTVWXYZ0  CLOSED');
  expect(text).toContain('  Worktree:  /home/user/Projects/example/.worktrees/feature-x (removed)');
  expect(text).toContain('  Branch:    wt/x2 (was wt/x)');
  expect(text).toContain(`    epoch 1  bind: session_a (ChatGPT Web), conversation ${CONV}, at ${at(1)}`);
  expect(text).toContain(`    epoch 2  reclaim (owner dead) from session_a: session_b (codex-cli), conversation unknown, at ${at(3)}`);
  expect(text).toContain(`  WIP:       refs/overdeck/wip/own_01JABCDEFGHJKMNPQRSTVWXYZ0/4 (${'a'.repeat(12)})`);
  expect(text).toContain(`    #1  ${at(1)}  claimed  by session_a executor:e1`);
  expect(text).toContain(`    #2  ${at(2)}  stale  by system:liveness`);
});

test('no history says so', () => {
  expect(renderHistory({ ownerships: [] })).toBe('no ownership history');
});

test('history: messages refused for want of the service seal are shown with what they claimed', () => {
  const r = record({ state: 'active' });
  const text = renderHistory({
    ownerships: [
      {
        ownershipId: r.ownershipId,
        record: r,
        events: [base(1, 'ownership.claimed', 'session_a', 'executor:e1')],
        lineage: [],
        refusedMessages: [
          {
            ownershipId: r.ownershipId,
            message: 'reclaim',
            messageId: 'intruder-1',
            code: 'message_unsealed',
            problem: 'unsealed',
            claimedPrincipal: 'admin:intruder',
            receivedAt: at(2),
          },
        ],
      },
    ],
  });
  expect(text).toContain('  Messages refused (no service seal):');
  expect(text).toContain(`    ${at(2)}  reclaim  unsealed  claimed admin:intruder  id intruder-1`);
});

test('history: recorded overrides are shown with who, why, when and the epoch they stepped into', () => {
  const r = record({ state: 'active' });
  const text = renderHistory({
    ownerships: [
      {
        ownershipId: r.ownershipId,
        record: r,
        events: [base(1, 'ownership.claimed', 'session_a', 'executor:e1')],
        lineage: [],
        overrides: [
          {
            overrideId: 'ovr_01JABCDEFGHJKMNPQRSTVWXYZ1',
            ownershipId: r.ownershipId,
            epoch: 1,
            principal: 'admin:ops',
            reason: 'agent wedged a rebase',
            at: at(3),
          },
        ],
      },
    ],
  });
  expect(text).toContain('  Overrides (a person stepped in):');
  expect(text).toContain(`    ${at(3)}  epoch 1  by admin:ops: agent wedged a rebase  id ovr_01JABCDEFGHJKMNPQRSTVWXYZ1`);
});
