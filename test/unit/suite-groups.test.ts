import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { GROUPS } from '../integration/groups';

/** A suite in no group would never run, and nothing would say so: each one is in exactly one, and each group has its jest file. */
const DIR = path.resolve(__dirname, '../integration');

test('every integration suite is in exactly one group', () => {
  const suites = readdirSync(DIR)
    .filter((f) => f.endsWith('.suite.ts'))
    .map((f) => f.slice(0, -'.suite.ts'.length))
    .sort();
  const grouped: string[] = Object.values(GROUPS).flat();
  expect([...grouped].sort()).toEqual(suites);
  expect(new Set(grouped).size).toBe(grouped.length);
});

test('every group has its jest file', () => {
  for (const group of Object.keys(GROUPS)) expect({ group, file: existsSync(path.join(DIR, `${group}.test.ts`)) }).toEqual({ group, file: true });
});
