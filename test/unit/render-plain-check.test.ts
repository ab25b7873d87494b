/**
 * The CLI's plain checks of its --json output (src/cli/render/plain-check.ts) against the zod
 * schemas they stand for: the generated JSON Schema is zod's own, and on fixtures and every
 * mutation of them the plain check and zod accept and refuse the same values.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { CliErrorCheck, WhoOutputCheck, type PlainCheck } from '../../src/cli/render/plain-check';
import { CLI_ERROR_JSON_SCHEMA, WHO_OUTPUT_JSON_SCHEMA } from '../../src/cli/render/output-schemas.generated';
import { CliErrorSchema, WhoOutputSchema } from '../../src/contract/cli-output';
import { CONV, live, record } from './render-fixtures';

const GENERATED = path.resolve(__dirname, '../../src/cli/render/output-schemas.generated.ts');
const REGENERATE = 'OD_UPDATE_GENERATED=1 OD_TEST_STACK=0 npx jest test/unit/render-plain-check.test.ts';

const jsonSchemaOf = (s: z.ZodType) => z.toJSONSchema(s, { io: 'output', unrepresentable: 'throw' }) as Record<string, unknown>;

function generatedSource(): string {
  const one = (name: string, s: z.ZodType) => `export const ${name}: { readonly [k: string]: unknown } = ${JSON.stringify(jsonSchemaOf(s), null, 2)};\n`;
  return [
    '// Generated from src/contract/cli-output.ts (zod toJSONSchema) by test/unit/render-plain-check.test.ts; do not edit.',
    `// After a change to those schemas: ${REGENERATE}`,
    '',
    one('WHO_OUTPUT_JSON_SCHEMA', WhoOutputSchema),
    one('CLI_ERROR_JSON_SCHEMA', CliErrorSchema),
  ].join('\n');
}

test('the generated JSON Schemas are those of the zod schemas today', () => {
  if (process.env.OD_UPDATE_GENERATED === '1' && readFileSync(GENERATED, 'utf8') !== generatedSource()) writeFileSync(GENERATED, generatedSource());
  for (const [name, generated, schema] of [
    ['WhoOutputSchema', WHO_OUTPUT_JSON_SCHEMA, WhoOutputSchema],
    ['CliErrorSchema', CLI_ERROR_JSON_SCHEMA, CliErrorSchema],
  ] as const) {
    if (!isDeepStrictEqual(generated, jsonSchemaOf(schema))) {
      throw new Error(`src/cli/render/output-schemas.generated.ts is out of date with ${name}: regenerate it with\n  ${REGENERATE}\nand commit it`);
    }
  }
});

const sha = 'a'.repeat(40);
const branch = { head: sha, base: 'main', ahead: 2, behind: 0, at: '2026-08-20T00:04:00Z' };
/** Every optional part of a record filled in, besides the plain fixture. */
const full = record({
  state: 'handoff_pending',
  handoff: { handoffId: 'h1', toExecutionSessionId: 'session_next', toWorkerId: null, startedAt: '2026-08-20T00:02:00Z', expiresAt: '2026-08-20T00:12:00Z' },
  lineage: [
    { executionSessionId: 'session_abc', runtime: 'chatgpt-web', epoch: 1, via: 'bind', at: '2026-08-20T00:00:00Z', conversationId: CONV },
    {
      executionSessionId: 'session_def',
      runtime: 'codex',
      epoch: 2,
      via: 'reclaim',
      at: '2026-08-20T00:03:00+02:00',
      conversationId: null,
      previousExecutionSessionId: 'session_abc',
      handoffId: 'h0',
    },
  ],
  latestWip: { ref: 'refs/overdeck/wip/x', sha, at: '2026-08-20T00:03:00Z' },
  wipNotPreserved: { at: '2026-08-20T00:03:30Z', reason: 'worktree_missing', executionSessionId: 'session_abc' },
  submitted: { at: '2026-08-20T00:04:00Z', head: sha },
  landings: [
    {
      ownershipId: 'own_01JABCDEFGHJKMNPQRSTVWXYZ0',
      sourceBranch: 'wt/feature-x',
      sourceHead: sha,
      landedBranch: 'main',
      landedHead: 'b'.repeat(64),
      landedAt: '2026-08-20T00:05:00.123Z',
      worktreePath: '/w',
      executionSessionId: null,
      worker: null,
      conversation: null,
    },
  ],
  owner: {
    executionSessionId: 'session_abc',
    runtime: 'chatgpt-web',
    parentExecutionSessionId: 'parent_1',
    conversation: null,
    worker: null,
    process: { hostId: 'host-1', bootId: 'boot-1', pid: 42, startTime: '12345' },
  },
});

const whoFixtures: unknown[] = [
  { ok: true, ownership: { ...record(), liveness: live, branchStatus: branch }, liveness: live, branch },
  { ok: true, ownership: { ...full, liveness: null, branchStatus: null }, liveness: null, branch: null },
  {
    ok: true,
    ownership: { ...record({ owner: null, worker: null, state: 'released' }) },
    liveness: { ...live, status: 'unowned', verdict: 'dead', checkedAt: '2026-08-20T00:06:00Z' },
  },
];

type PathKey = string | number;
function paths(v: unknown, at: PathKey[] = []): PathKey[][] {
  const out: PathKey[][] = [at];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...paths(x, [...at, i])));
  else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...at, k]));
  return out;
}

function setAt(v: unknown, at: PathKey[], f: (x: unknown) => unknown): unknown {
  const copy = structuredClone(v);
  if (at.length === 0) return f(copy);
  let parent = copy as Record<PathKey, unknown>;
  for (const k of at.slice(0, -1)) parent = parent[k] as Record<PathKey, unknown>;
  const last = at[at.length - 1]!;
  const next = f(parent[last]);
  if (next === DELETE) {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else parent[last] = next;
  return copy;
}
const DELETE = Symbol('delete');

/** Wrong types, edge values and bad forms at every place of a value; extra keys and items in every object and array. */
function mutants(v: unknown): unknown[] {
  const out: unknown[] = [];
  const replacements: unknown[] = [
    DELETE,
    null,
    undefined,
    '',
    'x',
    'own_1',
    '2026-08-20T00:00:00',
    '2026-08-20T00:00:00Z',
    0,
    -1,
    1.5,
    2 ** 60,
    true,
    {},
    [],
    'a'.repeat(201),
  ];
  for (const at of paths(v)) {
    for (const r of replacements) out.push(setAt(v, at, () => r));
    out.push(
      setAt(v, at, (x) => {
        if (Array.isArray(x)) return [...x, x[0] ?? 1, 42];
        if (x !== null && typeof x === 'object') return { ...x, zz: 1 };
        if (typeof x === 'string') return `${x}\n`;
        if (typeof x === 'number') return x + 0.5;
        return x;
      }),
    );
  }
  return out;
}

function agreement(check: PlainCheck, schema: z.ZodType, fixtures: unknown[], least: { accepted: number; refused: number }) {
  let accepted = 0;
  let refused = 0;
  const disagreements: { value: string; zod: boolean; plain: string | null }[] = [];
  for (const f of fixtures) {
    expect(schema.safeParse(f).success).toBe(true);
    expect(check.problem(f)).toBeNull();
    for (const m of mutants(f)) {
      const zodOk = schema.safeParse(m).success;
      const plain = check.problem(m);
      if (zodOk !== (plain === null)) disagreements.push({ value: String(JSON.stringify(m)).slice(0, 400), zod: zodOk, plain });
      if (zodOk) accepted++;
      else refused++;
    }
  }
  expect(disagreements.slice(0, 5)).toEqual([]);
  // Both sides of the line were exercised.
  expect(accepted).toBeGreaterThanOrEqual(least.accepted);
  expect(refused).toBeGreaterThanOrEqual(least.refused);
}

test('who --json: the plain check and WhoOutputSchema accept and refuse the same values', () => {
  agreement(WhoOutputCheck, WhoOutputSchema, whoFixtures, { accepted: 50, refused: 1000 });
});

test('--json failures: the plain check and CliErrorSchema agree', () => {
  agreement(
    CliErrorCheck,
    CliErrorSchema,
    [
      { ok: false, code: 'not_found', error: 'no ownership recorded for worktree /w' },
      { ok: false, code: '', error: '' },
    ],
    { accepted: 10, refused: 20 },
  );
});

test('parse returns the value that fits and throws naming what does not', () => {
  const v = whoFixtures[0];
  expect(WhoOutputCheck.parse(v)).toBe(v);
  expect(() => WhoOutputCheck.parse(setAt(v, ['ownership', 'epoch'], () => 'one'))).toThrow('$.ownership.epoch: expected integer, got string');
});
