import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { statusOf } from '../../src/api/errors';
import { EVENT_TYPES } from '../../src/domain/events';
import { OwnershipRecordSchema } from '../../src/domain/projection';
import { REASONS, type ReasonCode } from '../../src/domain/reasons';
import { RETRY_AFTER_SECONDS } from '../../src/api/errors';
import { ENV } from '../../src/config';
import { SEARCH_ATTRIBUTE_NAMES } from '../../src/domain/search-attributes';
import { DEFAULT_SETTINGS } from '../../src/domain/settings';
import { PROJECTION_KEYS } from '../../src/git/projection';
import { QUERY_DESCRIPTIONS } from '../../src/workflows/messages';

/**
 * The project stands alone: a clone has only this repository, so nothing in it may send a reader
 * elsewhere (a sibling `shared` directory, a specification's numbered sections), and the contract
 * those pointed to is written in docs/, which must cover what the code defines: every reason
 * code with its status, every event type, every record field, every git projection key.
 */

const ROOT = path.resolve(__dirname, '../..');

// Spelled in pieces so that this file does not match itself.
const OUTSIDE = [
  { what: 'a path to the sibling shared directory', re: new RegExp(['\\.\\.', 'shared'].join('/')) },
  { what: 'a specification section', re: new RegExp(['spec', '\\s*\u00a7'].join('')) },
  { what: 'an architecture document outside the repository', re: new RegExp(['ARCHITECTURE', '(\\.md|\\s*\u00a7)'].join('')) },
  { what: 'a numbered section of a document the repository does not have', re: new RegExp('\u00a7\\s?\\d') },
];

// Untracked files too (not ignored ones): a new file must not bring a citation in before its first commit.
function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return out
    .split('\0')
    .filter(Boolean)
    .filter((f) => !f.startsWith('.tools/') && existsSync(path.join(ROOT, f)) && statSync(path.join(ROOT, f)).isFile());
}

function text(file: string): string | null {
  const buf = readFileSync(path.join(ROOT, file));
  return buf.includes(0) ? null : buf.toString('utf8');
}

function citingLines(body: string): string[] {
  return body.split('\n').filter((line) => OUTSIDE.some((o) => o.re.test(line)));
}

const read = (rel: string) => readFileSync(path.join(ROOT, rel), 'utf8');

/** GitHub's heading anchors: lower case, punctuation but `-` and `_` dropped, each space a `-`. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const m of markdown.matchAll(/^#{1,6} +(.+?) *$/gm))
    out.add(
      m[1]!
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    );
  return out;
}

/** Where a pointer `file#anchor` (relative to `root`) does not lead, or null when it does. */
function unresolved(fromDir: string, target: string): string | null {
  const [file, anchor] = target.split('#') as [string, string | undefined];
  const resolved = file === '' ? null : path.resolve(fromDir, file);
  if (resolved === null || !resolved.startsWith(`${ROOT}${path.sep}`) || !existsSync(resolved)) return 'no such file';
  if (anchor && resolved.endsWith('.md') && !anchors(readFileSync(resolved, 'utf8')).has(anchor)) return `no heading #${anchor}`;
  return null;
}

describe('the repository stands alone', () => {
  const files = trackedFiles();

  test('no file points outside the repository: source comments, tests, scripts, docs, the README, CLI help, API docs, MCP tools', () => {
    const offenders: string[] = [];
    for (const f of files) {
      const body = text(f);
      if (body === null) continue;
      const lines = citingLines(body);
      if (lines.length > 0) offenders.push(`${f}: ${lines.length} line(s) citing outside the repository:\n    ${lines.map((l) => l.trim()).join('\n    ')}`);
    }
    expect(offenders).toEqual([]);
  });

  test('the checks see what they must: each pattern matches its kind of citation', () => {
    const samples = ['see ' + ['..', 'shared', 'spec'].join('/'), 'spec ' + '\u00a7' + '6.2', 'ARCHITECTURE' + '.md', '(' + '\u00a7' + '17.4)'];
    for (const s of samples) expect(citingLines(s)).toEqual([s]);
    expect(citingLines('docs/operations.md, Bind')).toEqual([]);
  });

  test('every relative link in the README and docs/ resolves to a file of the repository, and its #anchor to a heading there', () => {
    const broken: string[] = [];
    for (const doc of files.filter((f) => f === 'README.md' || (f.startsWith('docs/') && f.endsWith('.md')))) {
      for (const m of read(doc).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/i.test(target)) continue;
        const why = unresolved(path.resolve(ROOT, path.dirname(doc)), target.startsWith('#') ? `${path.basename(doc)}${target}` : target);
        if (why) broken.push(`${doc}: ${target} (${why})`);
      }
    }
    expect(broken).toEqual([]);
  });

  test('every pointer into docs/ from any file (docs/<file>.md#<heading>) leads to an existing page and heading', () => {
    const broken: string[] = [];
    for (const f of files) {
      const body = text(f);
      if (body === null) continue;
      // A quoted 'docs/x.md' is data (a plan ref in a test), not a pointer.
      for (const m of body.matchAll(/(?<!['"\w/.-])docs\/([a-z0-9-]+\.md)(#[a-z0-9_-]+)?/g)) {
        const why = unresolved(path.join(ROOT, 'docs'), `${m[1]}${m[2] ?? ''}`);
        if (why) broken.push(`${f}: ${m[0]} (${why})`);
      }
    }
    expect(broken).toEqual([]);
  });

  test('no page of docs/ has two headings with one anchor (two writers adding the same section)', () => {
    const twice: string[] = [];
    for (const doc of files.filter((f) => f.startsWith('docs/') && f.endsWith('.md'))) {
      const seen = new Set<string>();
      for (const m of read(doc).matchAll(/^#{1,6} +(.+?) *$/gm)) {
        const a = [...anchors(m[0])][0]!;
        if (seen.has(a)) twice.push(`${doc}#${a}`);
        seen.add(a);
      }
    }
    expect(twice).toEqual([]);
  });

  test('the anchor check sees what it must', () => {
    expect(unresolved(path.join(ROOT, 'docs'), 'cli.md#list---owners')).toBeNull();
    expect(unresolved(path.join(ROOT, 'docs'), 'identities.md#tenure-epoch')).toBeNull();
    expect(unresolved(path.join(ROOT, 'docs'), 'identities.md#no-such-heading')).toBe('no heading #no-such-heading');
    expect(unresolved(path.join(ROOT, 'docs'), 'no-such-page.md')).toBe('no such file');
  });
});

describe('docs/ covers what the code defines', () => {
  test('reason-codes.md lists every reason code with its HTTP status', () => {
    const doc = read('docs/reason-codes.md');
    const rows = new Map<string, number>();
    for (const m of doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)) rows.set(m[1]!, Number(m[2]));
    const codes = Object.keys(REASONS) as ReasonCode[];
    expect(Object.fromEntries([...rows].sort())).toEqual(Object.fromEntries(codes.map((c) => [c, statusOf(c)] as const).sort()));
  });

  test('events.md describes every event type', () => {
    const doc = read('docs/events.md');
    expect(EVENT_TYPES.filter((t) => !doc.includes(`\`${t}\``))).toEqual([]);
  });

  test('ownership-record.md describes every field of the record', () => {
    const doc = read('docs/ownership-record.md');
    expect(Object.keys(OwnershipRecordSchema.shape).filter((k) => !doc.includes(`\`${k}\``))).toEqual([]);
  });

  test('git-projection.md lists every git config key of the projection', () => {
    const doc = read('docs/git-projection.md');
    expect(Object.values(PROJECTION_KEYS).filter((k) => !doc.includes(`\`${k}\``))).toEqual([]);
  });

  test('temporal-ui.md names every search attribute and every query an ownership answers', () => {
    const doc = read('docs/temporal-ui.md');
    expect(Object.values(SEARCH_ATTRIBUTE_NAMES).filter((a) => !doc.includes(`| \`${a}\` |`))).toEqual([]);
    expect(Object.keys(QUERY_DESCRIPTIONS).filter((q) => !doc.includes(`| \`${q}\` |`))).toEqual([]);
  });

  test('failure-bounds.md states the bounds the code has', () => {
    const doc = read('docs/failure-bounds.md');
    const seconds = (ms: number | string) => `${Number(ms) / 1000} s`;
    const minutes = (ms: number | string) => `${Number(ms) / 60_000} min`;
    expect({
      retryAfter: doc.includes(`Retry-After: ${RETRY_AFTER_SECONDS}`),
      projectionWait: doc.includes(`\`projectionWaitMs\` (${seconds(DEFAULT_SETTINGS.projectionWaitMs)})`),
      handoffTimeout: doc.includes(`\`OD_HANDOFF_TIMEOUT_MS\` (${minutes(ENV.OD_HANDOFF_TIMEOUT_MS.default)})`),
    }).toEqual({ retryAfter: true, projectionWait: true, handoffTimeout: true });
  });
});
