import { BindBodySchema, HandoffBodySchema, PlanBodySchema } from '../../src/contract/http';
import { BranchName, FreeText, PathString } from '../../src/domain/identity';
import { normalizePath } from '../../src/git/paths';

/**
 * Everything accepted at the edge can be held by every later store: PostgreSQL refuses NUL and
 * unpaired surrogates, git config refuses control characters, the kernel a path component over
 * 255 bytes. Such input is refused with 400 before it can wedge a store that retries.
 */

const hostile = ['a\u0000b', 'a\ud800b', 'b\udc00', 'line\nbreak', 'tab\there', 'del\u007f'];

test.each(hostile)('free text %j is refused', (v) => {
  expect(FreeText.safeParse(v).success).toBe(false);
});

test('ordinary text, emoji (paired surrogates) and accents pass', () => {
  for (const v of ['feature x', 'docs/plans/é.md', 'ship it 🚀', '']) expect(FreeText.safeParse(v).success).toBe(true);
});

test.each([...hostile, 'has space', 'a..b', 'x.lock', '-x', '/x', 'x/', 'a@{b', 'a~1', 'a^', 'a:b', 'a?', 'a*', 'a[b', 'a\\b', '@', 'a//b', 'a/.b'])(
  'branch %j is refused',
  (b) => {
    expect(BranchName.safeParse(b).success).toBe(false);
  },
);

test('ordinary branch names pass', () => {
  for (const b of ['main', 'wt/feature-x', 'user/a.b_c-1', 'release/2026.12']) expect(BranchName.safeParse(b).success).toBe(true);
});

test('a path component over 255 bytes is refused, a long path of short components passes', async () => {
  expect(PathString.safeParse(`/tmp/${'x'.repeat(256)}`).success).toBe(false);
  // The schema counts characters, as the document (JSON Schema) does; the kernel's bytes are the
  // path normaliser's: a component of 256 bytes in 128 characters cannot exist (path_not_found).
  expect(PathString.safeParse(`/tmp/${'é'.repeat(128)}`).success).toBe(true);
  await expect(normalizePath(`/tmp/${'é'.repeat(128)}`)).rejects.toMatchObject({ code: 'path_not_found' });
  expect(PathString.safeParse(`/tmp/${'x/'.repeat(1000)}`).success).toBe(true);
  expect(PathString.safeParse('/tmp/a\u0000b').success).toBe(false);
});

test('the API bodies use these rules', () => {
  const bind = { worktreePath: '/tmp/w', branch: 'wt/a', executionSessionId: 's' };
  expect(BindBodySchema.safeParse(bind).success).toBe(true);
  expect(BindBodySchema.safeParse({ ...bind, lane: 'a\nb' }).success).toBe(false);
  expect(BindBodySchema.safeParse({ ...bind, branch: 'wt/\u0000' }).success).toBe(false);
  expect(BindBodySchema.safeParse({ ...bind, worktreePath: `/${'x'.repeat(300)}` }).success).toBe(false);
  expect(PlanBodySchema.safeParse({ executionSessionId: 's', epoch: 1, planRef: 'x\ud800' }).success).toBe(false);
  expect(HandoffBodySchema.safeParse({ executionSessionId: 's', epoch: 1, toExecutionSessionId: 't', reason: 'a\u0000' }).success).toBe(false);
});
