import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The gate's shell stays a shim a reviewer reads at once: the hooks and the PATH gate together hold
 * at most 150 lines that are neither blank nor comments, and none evaluates text (`eval`); what
 * the shell cannot accept on sight goes to the gate program (src/gate).
 */
const ROOT = path.resolve(__dirname, '../..');
const FILES = [...readdirSync(path.join(ROOT, 'hooks')).map((f) => path.join('hooks', f)), 'bin/git-gate/git'].filter(
  (f) => f.endsWith('.sh') || f.endsWith('/git'),
);

const code = (f: string): string[] =>
  readFileSync(path.join(ROOT, f), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.trim().startsWith('#'));

test('hooks/ and bin/git-gate/ hold at most 150 lines of shell code, none with eval', () => {
  expect(FILES.length).toBeGreaterThanOrEqual(4);
  const lines = FILES.flatMap((f) => code(f).map((l) => `${f}: ${l.trim()}`));
  expect(lines.length).toBeLessThanOrEqual(150);
  expect(lines.filter((l) => /(^|[\s;&|(`])eval(\s|$)/.test(l.slice(l.indexOf(': ') + 2)))).toEqual([]);
});
