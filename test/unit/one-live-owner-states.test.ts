import { readFileSync } from 'node:fs';
import path from 'node:path';
import { HELD_STATES } from '../../src/domain/states';

/**
 * The one-live-owner index spells the held states out in SQL (a partial index cannot call into
 * the code): it must name exactly src/domain/states.ts HELD_STATES, in the duplicate check and in
 * the index alike, or a state would hold a worktree without the database keeping it to one owner.
 */
test('migrations/1700000000010_one-live-owner.sql names exactly the held states', () => {
  const sql = readFileSync(path.resolve(__dirname, '../../migrations/1700000000010_one-live-owner.sql'), 'utf8').split('-- Down Migration')[0]!;
  const lists = [...sql.matchAll(/state IN \(([^)]*)\)/g)].map((m) =>
    m[1]!
      .split(',')
      .map((s) => s.trim().replace(/^'|'$/g, ''))
      .sort(),
  );
  expect(lists).toHaveLength(2);
  for (const list of lists) expect(list).toEqual([...HELD_STATES].sort());
});
