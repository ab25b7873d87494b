import { ZodError } from 'zod';
import type { OwnershipEvent } from '../../src/domain/events';
import type { Owner } from '../../src/domain/identity';
import { project } from '../../src/domain/projection';
import { buildListQuery, lineageOf } from '../../src/store/lookups';
import { GetOwnershipInputSchema, HistoryInputSchema, ListOwnershipsInputSchema } from '../../src/contract/lookups';
import { provenanceFields, renderProvenance, type Provenance } from '../../src/provenance/provenance';
import { derive } from '../../src/store/rebuild';

/** Pure parts of the store: derivation of the index rows, lineage, list query building, rendering. */

const ID = 'own_01J00000000000000000000000';
const base = { ownershipId: ID, repoRoot: '/r', worktreePath: '/r/.worktrees/a', hostId: 'h', actor: { executionSessionId: null, principal: null } };
const owner = (s: string, conversationId: string | null = null): Owner => ({
  executionSessionId: s,
  runtime: 'chatgpt-web',
  parentExecutionSessionId: null,
  conversation: conversationId
    ? {
        provider: 'chatgpt-web',
        conversationId,
        conversationUrl: `https://chatgpt.com/c/${conversationId}`,
        title: 't',
        observedAt: '2026-01-01T00:00:00.000Z',
      }
    : null,
  worker: { runId: 'run', workerId: 'w' },
  process: null,
});
const CONV = '11111111-2222-4333-8444-555555555555';

function log(): OwnershipEvent[] {
  let seq = 0;
  const at = () => new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString();
  const ev = (branch: string, rest: Pick<OwnershipEvent, 'type' | 'data'>): OwnershipEvent => {
    seq++;
    return { ...base, seq, at: at(), branch, ...rest } as OwnershipEvent;
  };
  const claimed = (s: string, epoch: number, via: 'bind' | 'handoff' | 'after_release', prev: string | null) =>
    ({
      type: 'ownership.claimed',
      data: { owner: owner(s), epoch, via, handoffId: null, previousExecutionSessionId: prev, lane: null, planRef: null, requestId: null },
    }) as const;
  const receipt = (head: string) => ({
    ownershipId: ID,
    sourceBranch: 'wt/b',
    sourceHead: 'a'.repeat(40),
    landedBranch: 'main',
    landedHead: head,
    landedAt: '2026-01-01T01:00:00.000Z',
    worktreePath: base.worktreePath,
    executionSessionId: 's3',
    worker: { runId: 'run', workerId: 'w' },
    conversation: null,
  });
  return [
    ev('wt/a', claimed('s1', 1, 'bind', null)),
    ev('wt/a', { type: 'ownership.conversation_bound', data: { executionSessionId: 's1', conversation: owner('s1', CONV).conversation! } }),
    ev('wt/a', {
      type: 'ownership.handoff_started',
      data: { handoffId: 'hof_1', fromExecutionSessionId: 's1', toExecutionSessionId: 's2', reason: null, expiresAt: '2026-01-02T00:00:00.000Z' },
    }),
    ev('wt/a', claimed('s2', 2, 'handoff', 's1')),
    ev('wt/b', { type: 'ownership.branch_renamed', data: { from: 'wt/a', to: 'wt/b' } }),
    ev('wt/b', { type: 'ownership.stale', data: { executionSessionId: 's2', epoch: 2, verdict: 'dead', detail: null } }),
    ev('wt/b', {
      type: 'ownership.reclaimed',
      data: { previousOwner: owner('s2'), owner: owner('s3'), epoch: 3, forced: false, reason: null, principal: { kind: 'executor', id: 'e', workerId: 'w' } },
    }),
    ev('wt/c', { type: 'ownership.branch_renamed', data: { from: 'wt/b', to: 'wt/c' } }),
    ev('wt/c', { type: 'ownership.landed', data: { receipt: receipt('b'.repeat(40)) } }),
    ev('wt/c', { type: 'ownership.landed', data: { receipt: receipt('b'.repeat(40)) } }),
    ev('wt/c', { type: 'ownership.landed', data: { receipt: receipt('c'.repeat(40)) } }),
  ];
}

test('derive: record is the fold; branch names carry the seq range each name was held; one receipt per landed head', () => {
  const events = log();
  const d = derive(events)!;
  expect(d.record).toEqual(project(events));
  expect(d.branchNames).toEqual([
    { ownership_id: ID, repo_root: '/r', branch: 'wt/a', from_seq: 1, to_seq: 4 },
    { ownership_id: ID, repo_root: '/r', branch: 'wt/b', from_seq: 5, to_seq: 7 },
    { ownership_id: ID, repo_root: '/r', branch: 'wt/c', from_seq: 8, to_seq: null },
  ]);
  expect(d.receipts.map((r) => [r.landed_head[0], r.seq])).toEqual([
    ['b', 9],
    ['c', 11],
  ]);
  expect(derive([])).toBeNull();
  expect(() => derive([events[0]!, events[2]!])).toThrow(/sequence gap/);
});

test('lineage: every owner change with its predecessor, the conversation bound later included', () => {
  expect(lineageOf(log())).toEqual([
    {
      executionSessionId: 's1',
      runtime: 'chatgpt-web',
      epoch: 1,
      via: 'bind',
      at: '2026-01-01T00:00:01.000Z',
      previousExecutionSessionId: null,
      conversationId: CONV,
    },
    {
      executionSessionId: 's2',
      runtime: 'chatgpt-web',
      epoch: 2,
      via: 'handoff',
      at: '2026-01-01T00:00:04.000Z',
      previousExecutionSessionId: 's1',
      conversationId: null,
    },
    {
      executionSessionId: 's3',
      runtime: 'chatgpt-web',
      epoch: 3,
      via: 'reclaim',
      at: '2026-01-01T00:00:07.000Z',
      previousExecutionSessionId: 's2',
      conversationId: null,
    },
  ]);
  // History's links are the record's own lineage (one fold), less the handoff id the record keeps.
  const rec = project(log())!;
  expect(lineageOf(log())).toEqual(rec.lineage.map(({ handoffId: _h, ...rest }) => rest));
});

test('inputs are strict: unknown fields, bad ids, limits and cursors are refused', () => {
  expect(() => GetOwnershipInputSchema.parse({ branch: 'x', conversationId: CONV })).toThrow(ZodError);
  expect(() => GetOwnershipInputSchema.parse({ ownershipId: 'not-an-id' })).toThrow(ZodError);
  expect(HistoryInputSchema.parse({ landedCommit: 'ABCDEF1' })).toEqual({ landedCommit: 'abcdef1' });
  expect(() => HistoryInputSchema.parse({ landedCommit: 'abc' })).toThrow(ZodError);
  expect(ListOwnershipsInputSchema.parse({}).limit).toBe(50);
  expect(() => ListOwnershipsInputSchema.parse({ limit: 501 })).toThrow(ZodError);
  expect(() => ListOwnershipsInputSchema.parse({ state: 'dormant' })).toThrow(ZodError);
  expect(() => buildListQuery({ cursor: 'bm90LWpzb24' })).toThrow(ZodError);
});

test('list query: one index-ordered scan per state, the cursor as a keyset bound', () => {
  const cursor = Buffer.from(JSON.stringify({ u: '2026-01-01T00:00:00.123456Z', i: ID })).toString('base64url');
  const q = buildListQuery({ repoRoot: '/r', state: ['active', 'stale', 'active'], limit: 10, cursor });
  expect(q.text.match(/UNION ALL/g)).toHaveLength(1);
  expect(q.values).toEqual([11, '/r', '2026-01-01T00:00:00.123456Z', ID, 'active', 'stale']);
  expect(buildListQuery({}).text.match(/SELECT ownership_id, updated_at FROM ownerships/g)).toHaveLength(7);
});

test('rendering says unknown for every missing link, never a guess', () => {
  const p: Provenance = {
    commit: 'd'.repeat(40),
    landedHead: 'd'.repeat(40),
    landedBranch: 'main',
    landedAt: '2026-01-01T00:00:00.000Z',
    sourceBranch: 'wt/x',
    sourceHead: 'e'.repeat(40),
    worktreePath: '/r/.worktrees/x',
    executionSessionId: null,
    worker: { runId: null, workerId: 'w' },
    conversation: null,
    ownershipId: ID,
    via: 'range',
  };
  const f = Object.fromEntries(provenanceFields(p).map((r) => [r.label, r.value]));
  expect(f).toMatchObject({ Session: 'unknown', Worker: 'w', Run: 'unknown', Conversation: 'unknown', 'Conversation URL': 'unknown' });
  expect(renderProvenance(p)).toMatch(/^Commit: +d{40}$/m);
});
