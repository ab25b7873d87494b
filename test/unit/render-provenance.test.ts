import { renderProvenance } from '../../src/cli/render';
import { CONV } from './render-fixtures';

const prov = {
  commit: 'c'.repeat(40),
  landedHead: 'c'.repeat(40),
  landedBranch: 'main',
  landedAt: '2026-08-20T00:30:00Z',
  sourceBranch: 'wt/feature-x',
  sourceHead: 'b'.repeat(40),
  worktreePath: '/r/.worktrees/feature-x',
  executionSessionId: 'session_b',
  worker: { workerId: 'worker-1', runId: null },
  conversation: { conversationId: CONV, conversationUrl: `https://chatgpt.com/c/${CONV}`, title: 'Example lane' },
  ownershipId: 'own_01JABCDEFGHJKMNPQRSTVWXYZ0',
  via: 'landed_head' as const,
};

test('provenance: landed commit to source branch, session, worker and conversation', () => {
  const text = renderProvenance(prov);
  const lines = text.split('\n');
  expect(lines[0]).toBe(`Commit:           ${'c'.repeat(40)}`);
  expect(text).toContain('Matched:          landed head');
  expect(text).toContain('Source branch:    wt/feature-x');
  expect(text).toContain('Session:          session_b');
  expect(text).toContain('Worker:           worker-1');
  expect(text).toContain('Run:              unknown');
  expect(text).toContain('Conversation:     Example lane');
  expect(text).toContain(`Conversation URL: https://chatgpt.com/c/${CONV}`);
});

test('provenance without a conversation reads unknown', () => {
  const text = renderProvenance({ ...prov, conversation: null, executionSessionId: null, worker: null, via: 'range' });
  expect(text).toContain('Matched:          inside the landed range');
  expect(text).toContain('Conversation:     unknown');
  expect(text).toContain('Conversation URL: unknown');
  expect(text).toContain('Session:          unknown');
});
