import { renderHistory } from '../../src/cli/render';
import type { OwnershipRecord } from '../../src/domain/projection';
import { formatJournalLine, parseJournalLine } from '../../src/git/journal';
import { lateTenureOf } from '../../src/git/late';
import type { LocalProjection } from '../../src/git/projection';
import { record } from './render-fixtures';

/**
 * The pure parts of late work (src/git/late.ts, docs/git-projection.md#late-work-of-an-older-tenure):
 * which older tenure a projection write looks for, the host agent's journal line, and how history
 * prints what was found. The real flow is test/integration/late-commits.test.ts.
 */

const OWN = 'own_01JABCDEFGHJKMNPQRSTVWXYZ0';
const at = (m: number) => `2026-08-20T00:${String(m).padStart(2, '0')}:00.000Z`;

function local(over: Partial<LocalProjection> = {}): LocalProjection {
  return {
    ownershipId: OWN,
    executionSessionId: 'session_a',
    runtime: 'codex-cli',
    conversationId: null,
    conversationUrl: null,
    workerId: null,
    runId: null,
    lane: null,
    planRef: null,
    epoch: 1,
    seq: 1,
    state: 'active',
    claimedAt: at(1),
    lastSeenAt: at(1),
    ...over,
  };
}

function reclaimed(over: Partial<OwnershipRecord> = {}): OwnershipRecord {
  const r = record({ epoch: 2, seq: 4 }) as unknown as OwnershipRecord;
  return {
    ...r,
    lineage: [
      { executionSessionId: 'session_a', runtime: 'codex-cli', epoch: 1, via: 'bind', at: at(1), conversationId: null, previousExecutionSessionId: null },
      {
        executionSessionId: 'session_b',
        runtime: 'codex-cli',
        epoch: 2,
        via: 'forced_reclaim',
        at: at(5),
        conversationId: null,
        previousExecutionSessionId: 'session_a',
      },
    ],
    wipNotPreserved: { at: at(5), reason: 'preservation_failed', executionSessionId: 'session_a' },
    ...over,
  };
}

test('the older tenure is the one the worktree still enforces, from the next tenure’s start on', () => {
  expect(lateTenureOf(local(), reclaimed())).toEqual({
    ownershipId: OWN,
    epoch: 1,
    executionSessionId: 'session_a',
    since: Date.parse(at(5)),
    takenFrom: true,
    wipNotPreserved: true,
  });
  // Handed over, not taken: a commit in the very second of the change is the tenure's own.
  const handed = reclaimed();
  handed.lineage[1] = { ...handed.lineage[1]!, via: 'handoff' };
  expect(lateTenureOf(local(), handed)?.takenFrom).toBe(false);
  // Two changes while away: the next tenure after the one held, not the last one.
  const twice = reclaimed({ epoch: 3 });
  twice.lineage.push({
    executionSessionId: 'session_c',
    runtime: 'codex-cli',
    epoch: 3,
    via: 'forced_reclaim',
    at: at(9),
    conversationId: null,
    previousExecutionSessionId: 'session_b',
  });
  expect(lateTenureOf(local(), twice)?.since).toBe(Date.parse(at(5)));
  // WIP that was preserved, or another session's that was not, says nothing about these files.
  expect(lateTenureOf(local(), reclaimed({ wipNotPreserved: null }))?.wipNotPreserved).toBe(false);
  expect(
    lateTenureOf(local(), reclaimed({ wipNotPreserved: { at: at(5), reason: 'preservation_failed', executionSessionId: 'session_x' } }))?.wipNotPreserved,
  ).toBe(false);
});

test('nothing to look for: same epoch, another or a provisional ownership, a free state, no projection', () => {
  expect(lateTenureOf(local({ epoch: 2 }), reclaimed())).toBeNull();
  expect(lateTenureOf(local({ ownershipId: 'own_01JOTHEROTHEROTHEROTHER00' }), reclaimed())).toBeNull();
  expect(lateTenureOf(local({ provisional: true }), reclaimed())).toBeNull();
  expect(lateTenureOf(local({ state: 'released' }), reclaimed())).toBeNull();
  expect(lateTenureOf(null, reclaimed())).toBeNull();
});

test('the host agent’s line is the hooks’ format: it parses back, and an unsafe value is refused rather than written', () => {
  const sha = 'a'.repeat(40);
  const line = formatJournalLine({
    kind: 'late_preserved',
    ref: `refs/overdeck/wip/${OWN}/late-e1`,
    new: sha,
    old: 'b'.repeat(40),
    session: 'session_a',
    ownership: OWN,
    epoch: '1',
    owner: 'session_a',
    commits: `${sha}:${'c'.repeat(40)}`,
    more: '0',
    uncommitted: '1',
  });
  expect(line.endsWith('\n')).toBe(true);
  expect(line.startsWith('od1\tkind=late_preserved\tref=')).toBe(true);
  expect(parseJournalLine(line.slice(0, -1), 7)).toMatchObject({
    kind: 'late_preserved',
    new: sha,
    commits: `${sha}:${'c'.repeat(40)}`,
    uncommitted: '1',
    offset: 7,
  });
  expect(() => formatJournalLine({ kind: 'late_preserved', session: 'a\tb' })).toThrow(/journal-safe/);
  expect(() => formatJournalLine({ kind: 'late_preserved', commits: Array.from({ length: 95 }, () => sha).join(':') })).toThrow(/too long/);
});

test('history prints late attempts under their tenure, and what it cannot place after the owners', () => {
  const r = record({ epoch: 2 });
  const late = {
    at: at(6),
    ownershipId: r.ownershipId,
    epoch: 1,
    executionSessionId: 'session_a',
    ref: `refs/overdeck/wip/${r.ownershipId}/late-e1`,
    sha: 'd'.repeat(40),
    head: 'e'.repeat(40),
    uncommitted: false,
    commits: [
      { commit: 'e'.repeat(40), status: 'attributed' as const, ownershipId: r.ownershipId, epoch: 1, executionSessionId: 'session_a' },
      { commit: 'f'.repeat(40), status: 'disputed' as const, ownershipId: null, epoch: null, executionSessionId: null },
    ],
    moreCommits: 3,
    worktreePath: r.worktreePath,
  };
  const text = renderHistory({
    ownerships: [
      {
        ownershipId: r.ownershipId,
        record: r,
        events: [],
        lineage: [
          { executionSessionId: 'session_a', runtime: 'codex-cli', epoch: 1, via: 'bind', at: at(1), previousExecutionSessionId: null, conversationId: null },
        ],
        lateAttempts: [late, { ...late, epoch: 7, commits: [], moreCommits: 0, uncommitted: true }],
      },
    ],
  });
  const lines = text.split('\n');
  const i = lines.indexOf(`    epoch 1  bind: session_a (codex-cli), conversation unknown, at ${at(1)}`);
  expect(lines.slice(i + 1, i + 5)).toEqual([
    `      late attempts of session_a (epoch 1) after the next tenure began, preserved under ${late.ref} (${'d'.repeat(12)}), reported ${at(6)}:`,
    `        ${'e'.repeat(12)}  session session_a, epoch 1`,
    `        ${'f'.repeat(12)}  not attributed (disputed)`,
    `        and 3 more late commits in ${late.ref}`,
  ]);
  const j = lines.indexOf('  Late attempts:');
  expect(j).toBeGreaterThan(i);
  expect(lines.slice(j + 1, j + 3)).toEqual([
    `    late attempts of session_a (epoch 7) after the next tenure began, preserved under ${late.ref} (${'d'.repeat(12)}), with uncommitted files, reported ${at(6)}:`,
    '      no late commit: uncommitted files only',
  ]);
});
