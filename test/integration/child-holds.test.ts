import { existsSync } from 'node:fs';
import os from 'node:os';
import { EXIT } from '../../src/cli/exit-codes';
import { GcOutputSchema } from '../../src/contract/removal';
import { runCli, type CliResult } from '../support/cli';
import { readEvents } from '../../src/store/event-store';
import { guardAt } from '../../src/gate/guard';
import { readProjection } from '../../src/git/projection';
import { worktreeDirs } from '../../src/git/repo';
import type { GrantHoldResponse, OwnershipViewOut } from '../../src/contract/http';
import { makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';

/**
 * Child holds over the real stack (HTTP API, Temporal, PostgreSQL; docs/ownership-record.md#child-holds):
 * a parent grants two children holds; its release is refused naming both, so are the worktree's
 * removal and a gc sweep; its handoff, accepted, ends both holds first (hold_ended epoch_ended in the log before
 * the new owner's claimed), and at the gate: the TypeScript guard stands each child with its grant's
 * environment while the hold lives, and refuses both once the successor's projection is written.
 */
let s: ApiStack;
let repo: RepoFixture;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(1);
});
afterAll(async () => s?.stop());

function cli(args: string[], token: string): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, OD_API_URL: s.url, OD_ALLOWED_ROOTS: process.env.OD_TEST_TMP ?? os.tmpdir(), OD_TOKEN: token };
  for (const k of Object.keys(env)) if (k.startsWith('GIT_') || k.startsWith('OVERDECK_')) delete env[k];
  return runCli(args, { cwd: repo.repoRoot, env });
}

const children = (body: unknown) =>
  ((body as { details?: { children?: Array<{ executionSessionId: string }> } }).details?.children ?? []).map((c) => c.executionSessionId).sort();

test('two child holds: release, removal and gc refused holds_live naming both; the accepted handoff ends both before the new owner claims', async () => {
  const wt = repo.worktrees[0]!;
  const bound = await s.raw('POST', '/v1/bind', {
    token: s.tokens.executor,
    body: { repoRoot: repo.repoRoot, worktreePath: wt.path, branch: wt.branch, executionSessionId: 'parent', runtime: 'claude-code' },
  });
  expect(bound.status).toBe(200);
  const id = (bound.body as OwnershipViewOut).ownershipId;
  const post = (p: string, body: Record<string, unknown>, token = s.tokens.executor) => s.raw('POST', `/v1/ownerships/${id}/${p}`, { token, body });

  const grants: GrantHoldResponse[] = [];
  for (const [child, runtime] of [
    ['child-a', 'codex-cli'],
    ['child-b', 'claude-code'],
  ] as const) {
    const res = await post('holds', { executionSessionId: 'parent', epoch: 1, childExecutionSessionId: child, runtime });
    expect(res.status).toBe(200);
    grants.push(res.body as GrantHoldResponse);
  }
  const [a, b] = grants as [GrantHoldResponse, GrantHoldResponse];
  expect(b.holds?.map((h) => [h.executionSessionId, h.runtime])).toEqual([
    ['child-a', 'codex-cli'],
    ['child-b', 'claude-code'],
  ]);
  // Each child gets its own proof, scoped to its hold: never the parent's, never the other child's.
  expect(a.tenure?.executionSessionId).toBe('child-a');
  expect(a.tenure?.secret).toMatch(/^odt1_/);
  expect(a.tenure?.secret).not.toBe(b.tenure?.secret);
  const parentProof = await post('tenure', { executionSessionId: 'parent' });
  expect((parentProof.body as { secret: string }).secret).not.toBe(a.tenure?.secret);

  // The worktree's gate stands each child with the environment its grant answered, and no other.
  const gd = (await worktreeDirs(wt.path)).privateDir;
  const envOf = (g: GrantHoldResponse) => g.tenure!.env as Record<string, string>;
  expect((await readProjection(wt.path))?.holds?.map((h) => h.executionSessionId)).toEqual(['child-a', 'child-b']);
  expect(guardAt(gd, envOf(a), 'git')).toMatchObject({ status: 0, holdId: a.holdId });
  expect(guardAt(gd, envOf(b), 'git')).toMatchObject({ status: 0, holdId: b.holdId });
  expect(guardAt(gd, { ...envOf(a), OVERDECK_TENURE_SECRET: b.tenure!.secret }, 'git')).toMatchObject({ reason: 'tenure_unproven' });

  // A child heartbeats its own hold; another session's heartbeat for it is refused.
  expect((await post(`holds/${a.holdId}/heartbeat`, { executionSessionId: 'child-a', epoch: 1 })).status).toBe(202);
  expect((await post(`holds/${a.holdId}/heartbeat`, { executionSessionId: 'child-b', epoch: 1 })).body).toMatchObject({ code: 'not_owner' });

  const released = await post('release', { executionSessionId: 'parent', epoch: 1 });
  expect({ status: released.status, code: (released.body as { code?: string }).code }).toEqual({ status: 409, code: 'holds_live' });
  expect(children(released.body)).toEqual(['child-a', 'child-b']);

  const removed = await s.raw('POST', '/v1/worktrees/remove', {
    token: s.tokens.executor,
    body: { worktreePath: wt.path, executionSessionId: 'parent', epoch: 1 },
  });
  expect({ status: removed.status, code: (removed.body as { code?: string }).code }).toEqual({ status: 409, code: 'holds_live' });
  expect(children(removed.body)).toEqual(['child-a', 'child-b']);
  // ...and so is a sweep: gc --apply (an admin's, as a sweeper runs it) keeps the worktree, naming both.
  const swept = await cli(['gc', repo.repoRoot, '--apply', '--json'], s.tokens.admin);
  expect({ code: swept.code, stderr: swept.stderr }).toEqual({ code: EXIT.ok, stderr: '' });
  const row = GcOutputSchema.parse(JSON.parse(swept.stdout)).results.find((r) => r.worktree === wt.path);
  expect(row?.status).toBe('refused');
  const held = row?.refusals.find((r) => r.code === 'holds_live');
  expect(children(held)).toEqual(['child-a', 'child-b']);
  expect(existsSync(wt.path)).toBe(true);
  expect((await readEvents(s.h.pool, id)).map((e) => e.type)).toEqual(['ownership.claimed', 'ownership.hold_granted', 'ownership.hold_granted']);

  const offered = await post('handoff', { executionSessionId: 'parent', epoch: 1, toExecutionSessionId: 'successor' });
  expect(offered.status).toBe(200);
  const accepted = await post('handoff/accept', {
    handoffId: (offered.body as OwnershipViewOut).handoff!.handoffId,
    executionSessionId: 'successor',
    runtime: 'claude-code',
  });
  expect(accepted.status).toBe(200);
  expect({ epoch: (accepted.body as OwnershipViewOut).epoch, holds: (accepted.body as OwnershipViewOut).holds ?? [] }).toEqual({ epoch: 2, holds: [] });
  const log = (await readEvents(s.h.pool, id)).map((e) => [
    e.type,
    (e.data as { reason?: unknown }).reason ?? null,
    (e.data as { executionSessionId?: unknown }).executionSessionId ?? null,
  ]);
  expect(log.slice(3)).toEqual([
    ['ownership.handoff_started', null, null],
    ['ownership.hold_ended', 'epoch_ended', 'child-a'],
    ['ownership.hold_ended', 'epoch_ended', 'child-b'],
    ['ownership.claimed', null, null],
  ]);
  // ...and at the gate: the successor's projection names no hold, so both children are refused.
  expect(await readProjection(wt.path)).toMatchObject({ epoch: 2, executionSessionId: 'successor' });
  expect((await readProjection(wt.path))?.holds).toBeUndefined();
  expect(guardAt(gd, envOf(a), 'git')).toMatchObject({ reason: 'not_owner' });
  expect(guardAt(gd, { ...envOf(b), OVERDECK_EPOCH: '2' }, 'git')).toMatchObject({ reason: 'not_owner' });
  // The old children hold nothing now.
  expect((await post(`holds/${a.holdId}/heartbeat`, { executionSessionId: 'child-a', epoch: 1 })).body).toMatchObject({ code: 'not_found' });
});
