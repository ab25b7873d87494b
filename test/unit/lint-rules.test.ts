import { spawnSync } from 'node:child_process';
import path from 'node:path';

/**
 * The type-aware lint rules (eslint.config.mjs) fire on what they exist for: a planted floating
 * promise, a promise where a callback's void is expected, and an `any`, linted as if they were a
 * source file (ESLint reads the text from stdin and types it in that file's project).
 */
const ROOT = path.resolve(__dirname, '..', '..');
const PLANTED = [
  'export async function write(): Promise<void> {}',
  'export function planted(): void {',
  '  write();', // line 3
  '  [1].forEach(async () => write());', // line 4
  '  const loose: any = 1;', // line 5
  '  void loose;',
  '}',
  // The same, with the promises handled and the type named: nothing to say.
  'export function handled(): void {',
  '  void write();',
  '  [1].forEach(() => void write());',
  '  const tight: number = 1;',
  '  void tight;',
  '}',
  '',
].join('\n');

function lint(text: string, as: string): string[] {
  // One file per run: each run types the whole project (several seconds).
  const r = spawnSync(path.join(ROOT, 'node_modules/.bin/eslint'), ['--stdin', '--stdin-filename', path.join(ROOT, as), '-f', 'json'], {
    cwd: ROOT,
    input: text,
    encoding: 'utf8',
  });
  if (r.status !== 0 && r.status !== 1) throw new Error(`eslint: exit ${r.status}: ${r.stderr}`);
  const [file] = JSON.parse(r.stdout) as { messages: { line: number; ruleId: string | null }[] }[];
  return (file?.messages ?? []).map((m) => `${m.line}:${m.ruleId ?? 'parse-error'}`);
}

test('a floating promise, a misused promise and an explicit any are refused, and only those', () => {
  expect(lint(PLANTED, 'src/domain/states.ts').sort()).toEqual([
    '3:@typescript-eslint/no-floating-promises',
    '4:@typescript-eslint/no-misused-promises',
    '5:@typescript-eslint/no-explicit-any',
  ]);
});
