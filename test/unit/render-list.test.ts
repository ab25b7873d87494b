import { LIST_COLUMNS, listRow, renderOwnersTable, shortPath } from '../../src/cli/render';
import { live, record } from './render-fixtures';

test('list --owners: one compact row per ownership with the columns of docs/cli.md#list---owners', () => {
  const a = {
    ...record(),
    liveness: live,
    branchStatus: { head: 'abcdef0123456789abcdef0123456789abcdef01', base: 'main', ahead: 2, behind: 1, at: '2026-08-20T00:05:00Z' },
  };
  const b = {
    ...record({
      ownershipId: 'own_01JABCDEFGHJKMNPQRSTVWXYZ1',
      worktreePath: '/r/.worktrees/b',
      branch: 'wt/b',
      state: 'stale',
      epoch: 3,
      owner: null,
      worker: null,
      lastSeenAt: null,
    }),
    liveness: null,
  };
  const text = renderOwnersTable([a, b]);
  const lines = text.split('\n');
  expect(lines).toHaveLength(3);
  expect(lines[0]!.split(/\s{2,}/)).toEqual([...LIST_COLUMNS]);
  expect(listRow(a)).toEqual([
    '/home/user/Projects/example/.worktrees/feature-x',
    'wt/feature-x',
    'abcdef0 +2/-1',
    'ACTIVE',
    'live',
    'ChatGPT Web',
    'Example lane',
    '2026-08-20T00:05:00Z',
    '1',
  ]);
  // no owner, no live answer: unknown; a durable `stale` is itself the proof of death
  expect(listRow(b)).toEqual(['/r/.worktrees/b', 'wt/b', 'unknown', 'STALE', 'stale', 'unknown', 'unknown', 'unknown', '3']);
  const unknownLiveness = { ...record(), liveness: null };
  expect(listRow(unknownLiveness)[4]).toBe('unknown');
  expect(listRow({ ...record({ state: 'released' }), liveness: null })[4]).toBe('unowned');
  expect(lines[2]).toMatch(/^\/r\/\.worktrees\/b\s+wt\/b\s+unknown\s+STALE\s+stale\s+unknown\s+unknown\s+unknown\s+3$/);
  // no borders, no colour codes, no trailing blanks
  // eslint-disable-next-line no-control-regex -- the escape byte is what the test looks for
  expect(text).not.toMatch(/[│─┌\u001b]/);
  expect(lines.every((l) => l === l.trimEnd())).toBe(true);
});

test('an empty list says so', () => {
  expect(renderOwnersTable([])).toBe('no ownerships');
});

test('long paths keep the end that names the worktree', () => {
  expect(shortPath('/short')).toBe('/short');
  const long = '/home/someone/very/deep/directory/structure/product/.worktrees/feature-x';
  const short = shortPath(long);
  expect(short.length).toBeLessThanOrEqual(48);
  expect(short.startsWith('…/')).toBe(true);
  expect(short.endsWith('/.worktrees/feature-x')).toBe(true);
});
