import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { statusOf } from '../../src/api/errors';
import { exitForStatus } from '../../src/cli/api-failure';
import { SCAN_REASONS } from '../../src/contract/landings';
import { RESTORE_REASONS } from '../../src/contract/restore';
import { ATTRIBUTION_REASONS } from '../../src/domain/attribution';
import { REASONS, type ReasonCode } from '../../src/domain/reasons';
import { GUARD_REFUSALS, guardReasonDocTable, guardReasonOf, guardStatusOf } from '../../src/domain/git-rules';
import type { GuardReason } from '../../src/git/guard';

/**
 * docs/reason-codes.md against the code, both ways and section by section: every code the code
 * defines is documented where it belongs, and every code the doc names (in its tables and in its
 * prose) is one the code defines. A code removed from the code (as `strict_no_session` was) or
 * added without its row fails here. (standalone-docs.test.ts checks the main table's HTTP status,
 * attribution-judge.test.ts the attribution meanings.)
 */

const ROOT = path.resolve(__dirname, '../..');
const DOC = path.join(ROOT, 'docs/reason-codes.md');
const doc = readFileSync(DOC, 'utf8');

/**
 * The guard's codes (src/git/guard.ts GuardReason). A record typed by the union: tsc fails when a
 * reason is added to or removed from GuardReason without this list following.
 */
const GUARD: Record<GuardReason, true> = {
  not_owner: true,
  stale_epoch: true,
  unidentified: true,
  provisional_conflict: true,
  tenure_unproven: true,
  projection_missing: true,
};

/** The body of a `## title` section (up to the next one); the main table is before the first. */
function section(title: string | null): string {
  const headings = [...doc.matchAll(/^## (.+)$/gm)];
  if (title === null) return doc.slice(0, headings[0]?.index ?? doc.length);
  const i = headings.findIndex((h) => h[1] === title);
  expect(i).toBeGreaterThanOrEqual(0);
  return doc.slice(headings[i]!.index, headings[i + 1]?.index ?? doc.length);
}
/** Rows of the section's table: first cell's code -> the other cells. */
function rows(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of text.matchAll(/^\| `([a-z_]+)` \|(.+)\|$/gm))
    out.set(
      m[1]!,
      m[2]!.split('|').map((c) => c.trim()),
    );
  return out;
}
const sorted = (xs: Iterable<string>) => [...xs].sort();

test('the main table: every service reason code (src/domain/reasons.ts), with its HTTP status and the CLI exit that status maps to', () => {
  const main = rows(section(null));
  expect(sorted(main.keys())).toEqual(sorted(Object.keys(REASONS)));
  for (const [code, [http, exit]] of main) {
    expect({ code, http: Number(http), exit: Number(exit) }).toEqual({
      code,
      http: statusOf(code as ReasonCode),
      exit: exitForStatus(statusOf(code as ReasonCode)),
    });
  }
});

test('Git guard: every reason the hooks and the gate refuse with (src/domain/git-rules.ts GUARD_REFUSALS)', () => {
  expect(sorted(rows(section('Git guard')).keys())).toEqual(sorted(Object.keys(GUARD)));
  expect(sorted(GUARD_REFUSALS.map((r) => r.reason))).toEqual(sorted(Object.keys(GUARD)));
  // One status per reason, each read back as its reason (src/git/guard.ts reads the gate's exit status).
  expect(new Set(GUARD_REFUSALS.map((r) => r.status)).size).toBe(GUARD_REFUSALS.length);
  for (const r of GUARD_REFUSALS) expect([r.reason, guardReasonOf(guardStatusOf(r.reason))]).toEqual([r.reason, r.reason]);
  expect(guardReasonOf(0)).toBeUndefined();
  expect(guardReasonOf(1)).toBeUndefined();
});

const REASON_BLOCK = /(<!-- BEGIN generated from src\/domain\/git-rules\.ts \(GUARD_REFUSALS[^\n]*-->\n)([\s\S]*?)\n?(<!-- END generated -->)/;

/** How the doc's generated copy of GUARD_REFUSALS differs from the table (null: it does not). */
function guardTableDrift(text: string): string | null {
  const m = REASON_BLOCK.exec(text);
  if (m === null) return 'no generated GUARD_REFUSALS block';
  return m[2] === guardReasonDocTable() ? null : m[2]!;
}

test('the Git guard table of docs/reason-codes.md is the one generated from GUARD_REFUSALS (OD_WRITE_GUARD_REFUSALS=1 rewrites it)', () => {
  if (process.env.OD_WRITE_GUARD_REFUSALS === '1') {
    writeFileSync(
      DOC,
      doc.replace(REASON_BLOCK, (_all, head: string, _body, end: string) => `${head}${guardReasonDocTable()}\n${end}`),
    );
    return;
  }
  expect(guardTableDrift(doc)).toBeNull();
  // A doctored copy is caught: a status changed, a row dropped, a code renamed.
  const table = guardReasonDocTable();
  const first = GUARD_REFUSALS[0]!;
  for (const doctored of [
    table.replace(`| ${first.status} |`, `| ${first.status + 90} |`),
    table.split('\n').slice(0, -1).join('\n'),
    table.replace(`\`${first.reason}\``, '`not_the_owner`'),
  ]) {
    expect(guardTableDrift(doc.replace(table, doctored))).not.toBeNull();
  }
});

test('no shell file carries a copy of the mapping: the shell never refuses, so it names no guard reason', () => {
  const shell = [...readdirSync(path.join(ROOT, 'hooks')).map((f) => `hooks/${f}`), 'bin/git-gate/git'].filter(
    (f) => f.endsWith('.sh') || f === 'bin/git-gate/git',
  );
  expect(shell.length).toBeGreaterThan(2);
  for (const f of shell) {
    // The generated state test (od_mine) names the projection's states, one of which is spelled like a code.
    const text = readFileSync(path.join(ROOT, f), 'utf8').replace(/^ *case \$od_s in .*$/m, '');
    const codes = GUARD_REFUSALS.filter((r) => text.includes(r.reason)).map((r) => r.reason);
    const statuses = GUARD_REFUSALS.filter((r) => new RegExp(`\\b(exit|return) ${r.status}\\b`).test(text)).map((r) => r.status);
    expect([f, codes, statuses]).toEqual([f, [], []]);
  }
});

test('Restore, Landing scan, Commit attribution: every code of their catalogues', () => {
  expect(sorted(rows(section('Restore')).keys())).toEqual(sorted(Object.keys(RESTORE_REASONS)));
  expect(sorted(rows(section('Landing scan')).keys())).toEqual(sorted(Object.keys(SCAN_REASONS)));
  expect(sorted(rows(section('Commit attribution')).keys())).toEqual(sorted(Object.keys(ATTRIBUTION_REASONS)));
});

test('every code the doc names, in a table or in its prose, is one the code defines', () => {
  const known = new Set([
    ...Object.keys(REASONS),
    ...Object.keys(GUARD),
    ...Object.keys(RESTORE_REASONS),
    ...Object.keys(SCAN_REASONS),
    ...Object.keys(ATTRIBUTION_REASONS),
  ]);
  // Anything in backticks that reads like a code (lower_snake with an underscore, or a known one-word code).
  const named = new Set([...doc.matchAll(/`([a-z]+(?:_[a-z]+)+|[a-z]+)`/g)].map((m) => m[1]!));
  // Words in backticks that are not codes: fields and values the doc explains beside the codes.
  const notCodes = new Set([
    'code',
    'message',
    'details',
    'fields',
    'isError',
    'unsealed',
    'other_message',
    'expired',
    'key_retired',
    'replayed',
    'reason',
    'disputes',
    'history',
    'process',
  ]);
  expect(sorted([...named].filter((w) => !known.has(w) && !notCodes.has(w)))).toEqual([]);
});
