/**
 * The ledger of docs/workflow-versioning.md is the list of every `patched()` and `deprecatePatch()`
 * id in src/workflows, with the step each is at: held here against the code, both ways. An id in
 * the code missing from the ledger fails, a ledger row no code calls fails (unless its step is
 * `removed`: the call went in step 3, the row stays as the record), and so does a row whose step
 * is not the call the code makes. A patch id is a string literal, so this (and a reader) can see it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const DOC = path.join(ROOT, 'docs/workflow-versioning.md');
const WORKFLOWS = path.join(ROOT, 'src/workflows');

type Step = 'patched' | 'deprecated' | 'removed';
const STEP_OF_CALL = { patched: 'patched', deprecatePatch: 'deprecated' } as const;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = path.join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : /\.ts$/.test(f) ? [p] : [];
  });
}

/** Every patch call of the code, by id: the step its call says, and where. Non-literal ids are reported as such. */
function patchCalls(files: Record<string, string>): { calls: Map<string, { step: Step; at: string }>; problems: string[] } {
  const calls = new Map<string, { step: Step; at: string }>();
  const problems: string[] = [];
  for (const [file, text] of Object.entries(files)) {
    const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, ''); // comments name patches in prose
    for (const m of code.matchAll(/\b(patched|deprecatePatch)\(\s*([^)]*)\)/g)) {
      const call = m[1] as keyof typeof STEP_OF_CALL;
      const literal = /^(['"`])([^'"`$]+)\1$/.exec(m[2]!.trim());
      if (!literal) {
        problems.push(`${file}: ${call}(${m[2]!.trim()}): a patch id is a string literal`);
        continue;
      }
      const id = literal[2]!;
      const step = STEP_OF_CALL[call];
      const seen = calls.get(id);
      // One id at one step: a patched() and a deprecatePatch() of the same id at once is a half-done step.
      if (seen && seen.step !== step) problems.push(`${id}: both patched() and deprecatePatch() in the code (${seen.at}, ${file})`);
      calls.set(id, { step, at: file });
    }
  }
  return { calls, problems };
}

/** The ledger's rows: the table under `## The ledger` (a row `(none)` says it is empty). */
function ledgerRows(doc: string): { rows: Map<string, string>; problems: string[] } {
  const section = /^## The ledger\n([\s\S]*?)(?=^## )/m.exec(doc)?.[1];
  if (section === undefined) return { rows: new Map(), problems: ['docs/workflow-versioning.md has no "## The ledger" section'] };
  const lines = section.split('\n').filter((l) => l.startsWith('|'));
  const [header, rule, ...body] = lines;
  const problems: string[] = [];
  if (!header || !/^\|\s*patch id\s*\|.*\|\s*step\s*\|$/.test(header) || !rule?.startsWith('|---'))
    problems.push('the ledger has no `| patch id | … | step |` header');
  const rows = new Map<string, string>();
  for (const line of body) {
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    const id = cells[0]!.replace(/^`|`$/g, '');
    if (id === '(none)') continue;
    if (rows.has(id)) problems.push(`${id}: two ledger rows`);
    rows.set(id, cells[cells.length - 1]!);
  }
  return { rows, problems };
}

function disagreements(files: Record<string, string>, doc: string): string[] {
  const { calls, problems: p1 } = patchCalls(files);
  const { rows, problems: p2 } = ledgerRows(doc);
  const out = [...p1, ...p2];
  for (const [id, { step, at }] of calls) {
    const row = rows.get(id);
    if (row === undefined) out.push(`${id} (${at}): in the code, not in the ledger`);
    else if (row !== step) out.push(`${id}: the ledger says ${row}, the code calls ${step === 'patched' ? 'patched()' : 'deprecatePatch()'}`);
  }
  for (const [id, step] of rows) {
    if (!['patched', 'deprecated', 'removed'].includes(step)) out.push(`${id}: step "${step}" is none of patched, deprecated, removed`);
    else if (!calls.has(id) && step !== 'removed') out.push(`${id}: in the ledger (${step}), in no code of src/workflows`);
  }
  return out;
}

const code = () => Object.fromEntries(sources(WORKFLOWS).map((f) => [path.relative(ROOT, f), readFileSync(f, 'utf8')]));
const doc = () => readFileSync(DOC, 'utf8');

test('the ledger of docs/workflow-versioning.md names exactly the patch ids of src/workflows, at their step', () => {
  expect(disagreements(code(), doc())).toEqual([]);
});

test('a doctored ledger or code is caught, each way', () => {
  const withRow = (row: string) => doc().replace(/(\| patch id \|[^\n]*\n\|---[^\n]*\n)/, `$1${row}\n`);
  const files = code();
  const planted = { ...files, 'src/workflows/planted.ts': "if (patched('planted-v1')) {}\nif (deprecatePatch('old-v1')) {}\npatched(ID);" };
  expect(disagreements(planted, doc())).toEqual([
    'src/workflows/planted.ts: patched(ID): a patch id is a string literal',
    'planted-v1 (src/workflows/planted.ts): in the code, not in the ledger',
    'old-v1 (src/workflows/planted.ts): in the code, not in the ledger',
  ]);
  // Rows for both, one at the wrong step; a row no code calls; a removed one (kept as the record); a made-up step.
  const ledger = withRow(
    '| `planted-v1` | x | deprecated |\n| `old-v1` | x | deprecated |\n| `gone-v1` | x | patched |\n| `folded-v1` | x | removed |\n| `odd-v1` | x | someday |',
  );
  expect(disagreements(planted, ledger)).toEqual([
    'src/workflows/planted.ts: patched(ID): a patch id is a string literal',
    'planted-v1: the ledger says deprecated, the code calls patched()',
    'gone-v1: in the ledger (patched), in no code of src/workflows',
    'odd-v1: step "someday" is none of patched, deprecated, removed',
  ]);
  // A patch named in a comment is prose, not a call.
  expect(disagreements({ ...files, 'src/workflows/prose.ts': "// patched('comment-v1') went in 1.0\n" }, doc())).toEqual([]);
});
