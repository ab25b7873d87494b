import { ApiError, ApiUnreachableError, ApiUrlError, normalizeApiUrl } from '../../src/api/client';
import { toFailure } from '../../src/api/errors';
import { refusalFromIssues } from '../../src/contract/refusal';
import { GetQuerySchema, HistoryQuerySchema } from '../../src/contract/http';
import { ago } from '../../src/cli/age';
import { apiEnv, devTokensFile } from '../../src/cli/api-env';
import { cliFailureOf } from '../../src/cli/api-failure';
import { EXIT } from '../../src/cli/exit-codes';
import { cut, fitRows } from '../../src/cli/fit';
import { LIST_COLUMNS, renderOwnersTable, renderWho } from '../../src/cli/render';
import { live, record } from './render-fixtures';

/** What a newcomer runs into first with od-worktree: URLs, tokens, bad input, and a table that fits. */

describe('OD_API_URL', () => {
  test('a bare host:port is http://host:port; a trailing slash goes', () => {
    expect(apiEnv({ OD_API_URL: '127.0.0.1:8787' }).baseUrl).toBe('http://127.0.0.1:8787');
    expect(apiEnv({ OD_API_URL: 'localhost:8787/' }).baseUrl).toBe('http://localhost:8787');
    expect(apiEnv({ OD_API_URL: 'https://own.example/api/' }).baseUrl).toBe('https://own.example/api');
    expect(apiEnv({}).baseUrl).toBe('http://127.0.0.1:8787');
  });

  test('anything that is still not an http(s) URL is a usage error (exit 2), not an internal one', () => {
    for (const bad of ['::', 'ftp://host', 'http://', 'a b', 'host:8787?x=1']) {
      expect(() => normalizeApiUrl(bad)).toThrow(ApiUrlError);
      let thrown: unknown;
      try {
        apiEnv({ OD_API_URL: bad });
      } catch (err) {
        thrown = err;
      }
      expect(cliFailureOf(thrown)).toMatchObject({ exit: EXIT.usage, code: 'usage', message: expect.stringContaining('OD_API_URL') });
    }
  });
});

describe('what a refusal tells the person at the terminal', () => {
  const apiError = (status: number, body: ApiError['body']) => new ApiError(status, body);

  test('bad input names the fields the service refused', () => {
    const f = cliFailureOf(
      apiError(400, { code: 'invalid_input', message: 'the message does not match its schema', details: { fields: ['branch', 'epoch'] } }),
    );
    expect(f).toEqual({ exit: EXIT.usage, code: 'invalid_input', message: 'invalid_input: the message does not match its schema (fields: branch, epoch)' });
  });

  test('an unknown or missing token says where npm start keeps its dev tokens', () => {
    const file = devTokensFile({ OD_DATA_DIR: '/srv/od' });
    expect(file).toBe('/srv/od/dev-principals.json.secret.json');
    const unknown = cliFailureOf(apiError(401, { code: 'unauthenticated', message: 'missing or unknown bearer token' }), {
      OD_TOKEN: 'x',
      OD_DATA_DIR: '/srv/od',
    });
    expect(unknown).toMatchObject({ exit: EXIT.refused, code: 'unauthenticated' });
    expect(unknown!.message).toContain('OD_TOKEN is not a token this service knows');
    expect(unknown!.message).toContain(file);
    const missing = cliFailureOf(apiError(401, { code: 'unauthenticated', message: 'missing or unknown bearer token' }), { OD_DATA_DIR: '/srv/od' });
    expect(missing!.message).toContain('OD_TOKEN is not set');
    // By default the checkout's .data/, wherever the CLI is run from.
    expect(devTokensFile({})).toMatch(/\/\.data\/dev-principals\.json\.secret\.json$/);
  });

  test('status to exit code, as documented', () => {
    const exit = (status: number, code: string) => cliFailureOf(apiError(status, { code, message: 'm' }))!.exit;
    expect([exit(409, 'worktree_owned'), exit(403, 'forbidden'), exit(404, 'not_found'), exit(503, 'unavailable'), exit(500, 'internal')]).toEqual([
      EXIT.refused,
      EXIT.refused,
      EXIT.notFound,
      EXIT.unreachable,
      EXIT.internal,
    ]);
    expect(cliFailureOf(new ApiUnreachableError('http://127.0.0.1:1'))).toMatchObject({ exit: EXIT.unreachable, code: 'unreachable' });
    expect(cliFailureOf(new Error('other'))).toBeNull();
  });

  test('a lookup that names no key lists every key it could name; one naming two lists those two', () => {
    const fields = (schema: typeof GetQuerySchema | typeof HistoryQuerySchema, q: object) => {
      const r = schema.safeParse(q);
      if (r.success) throw new Error('parsed');
      return toFailure(refusalFromIssues(r.error.issues as never)).body.details?.fields;
    };
    expect(fields(GetQuerySchema, {})).toEqual(['ownershipId', 'worktreePath', 'branch']);
    expect(fields(GetQuerySchema, { worktreePath: '/x', branch: 'b' })).toEqual(['worktreePath', 'branch']);
    expect(fields(HistoryQuerySchema, {})).toEqual(['ownershipId', 'worktreePath', 'branch', 'landedCommit']);
  });
});

describe('who: how old the Head report is', () => {
  test('ago', () => {
    const now = Date.parse('2026-08-20T01:00:00Z');
    expect(
      ['2026-08-20T00:59:58Z', '2026-08-20T00:59:02Z', '2026-08-20T00:55:00Z', '2026-08-19T22:00:00Z', '2026-08-15T01:00:00Z'].map((t) => ago(t, now)),
    ).toEqual(['just now', '58 s ago', '5 min ago', '3 h ago', '5 days ago']);
  });

  test('the CLI passes the clock and Head says how long ago it was seen; without a clock the output is the record alone', () => {
    const branch = { head: 'abcdef0123456789abcdef0123456789abcdef01', base: 'main', ahead: 2, behind: 1, at: '2026-08-20T00:05:00Z' };
    const now = Date.parse('2026-08-20T00:09:30Z');
    expect(renderWho(record(), live, branch, now)).toContain('Head:          abcdef012345 (2 ahead, 1 behind main; seen 2026-08-20T00:05:00Z, 4 min ago)');
    expect(renderWho(record(), live, branch)).toContain('Head:          abcdef012345 (2 ahead, 1 behind main; seen 2026-08-20T00:05:00Z)');
  });
});

describe('list --owners fits 120 columns', () => {
  test('cut keeps the start or the end', () => {
    expect(cut('Example lane title', 8, 'start')).toBe('Example…');
    expect(cut('/a/b/.worktrees/feature-x', 10, 'end')).toBe('…feature-x');
    expect(cut('short', 10, 'start')).toBe('short');
  });

  test('rows that fit are left alone', () => {
    const rows = [['a', 'b']];
    expect(fitRows(['H1', 'H2'], rows, 120, [{ column: 0, keep: 'start', prefer: 1 }])).toEqual(rows);
  });

  const long = (state: 'active' | 'handoff_pending') => ({
    ...record({
      worktreePath: '/home/someone/Projects/a-rather-long-product-name/.worktrees/feature-with-a-long-name',
      branch: 'wt/feature-with-a-long-name',
      state,
      owner: {
        ...record().owner!,
        runtime: 'some-very-long-runtime-identifier',
        conversation: { ...record().owner!.conversation!, title: 'A conversation with a long, long title that goes on' },
      },
    }),
    liveness: live,
    branchStatus: { head: 'abcdef0123456789abcdef0123456789abcdef01', base: 'main', ahead: 12, behind: 3, at: '2026-08-20T00:05:00Z' },
  });

  test('long values are cut (the worktree last, keeping its end) and every line is at most 120 columns; --wide prints them whole', () => {
    const now = Date.parse('2026-08-20T00:09:00Z');
    const text = renderOwnersTable([long('active'), { ...record(), liveness: live }], { now });
    const lines = text.split('\n');
    for (const l of lines) expect([...l].length).toBeLessThanOrEqual(120);
    expect(lines[0]!.split(/\s{2,}/)).toEqual([...LIST_COLUMNS]);
    expect(lines[1]).toMatch(/^…\/feature-with-a-long-name\s/);
    expect(lines[1]).toMatch(/\sA conversat…\s/);
    // A typical row is not cut at all.
    expect(lines[2]).toMatch(/^\/home\/user\/Projects\/example\/\.worktrees\/feature-x|^…\/[\w/.-]*\.worktrees\/feature-x\s/);
    expect(lines[1]).toMatch(/\s4 min ago\s+1$/);
    // The widest states, and instants instead of ages, too.
    for (const l of renderOwnersTable([long('handoff_pending')]).split('\n')) expect([...l].length).toBeLessThanOrEqual(120);
    const wide = renderOwnersTable([long('active')], { wide: true });
    expect(wide).toContain(long('active').worktreePath);
    expect(wide).toContain('A conversation with a long, long title that goes on');
    expect(Math.max(...wide.split('\n').map((l) => [...l].length))).toBeGreaterThan(120);
  });
});
