import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { cleanGitEnv } from '../../src/git/exec';
import { installHooks } from '../../src/git/guard';
import { shipJournal } from '../../src/provenance/attributions';
import { git, makeRepo } from '../support/git-fixture';
import { withTenureSecret } from '../support/tenure-env';
import { startApiStack, type ApiStack } from '../support/api-stack';

/**
 * `who` and `list` show the branch head as it moves: a commit in an owned worktree is journaled
 * by its reference-transaction hook and shipped by the host agent, which records the head then,
 * so the API does not answer with the head of the last projection write. Real stack, real hooks.
 */
let s: ApiStack;
beforeAll(async () => {
  s = await startApiStack();
});
afterAll(async () => s?.stop());

test('a commit after the last projection write is the head the live lookups answer, with its time', async () => {
  const repo = makeRepo(1);
  await installHooks(repo.repoRoot);
  const wt = repo.worktrees[0]!;
  const api = s.api(s.tokens.executor);
  const bound = await api.bind({ worktreePath: wt.path, branch: wt.branch, executionSessionId: 'head-s1', runtime: 'codex-cli' });
  const before = await api.getLive({ worktreePath: wt.path });
  const projectedHead = before.branchStatus?.head;
  expect(projectedHead).toBe(git(wt.path, 'rev-parse', 'HEAD'));

  writeFileSync(path.join(wt.path, 'h.txt'), 'h\n');
  const env = withTenureSecret(wt.path, {
    ...cleanGitEnv({ GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e.invalid' }),
    OVERDECK_EXECUTION_SESSION_ID: 'head-s1',
    OVERDECK_EPOCH: '1',
  });
  execFileSync('git', ['add', 'h.txt'], { cwd: wt.path, env });
  execFileSync('git', ['commit', '-q', '-m', 'h'], { cwd: wt.path, env });
  const head = git(wt.path, 'rev-parse', 'HEAD');
  expect(head).not.toBe(projectedHead);
  // What the host agent does every few seconds and after each projection write.
  await shipJournal(s.h.pool, wt.path, { hostId: s.h.hostId, allowedRoots: [process.env.OD_TEST_TMP!] });

  const after = await api.getLive({ worktreePath: wt.path });
  expect(after.branchStatus).toMatchObject({ head, base: 'main', ahead: 1 });
  expect(Date.parse(after.branchStatus!.at)).toBeGreaterThan(Date.parse(before.branchStatus!.at));
  const listed = await api.list({ repoRoot: repo.repoRoot, liveness: true });
  expect(listed.items.find((i) => i.ownershipId === bound.ownershipId)?.branchStatus?.head).toBe(head);
  const byId = await s.raw('GET', `/v1/ownerships/${bound.ownershipId}`, { token: s.tokens.reader });
  expect((byId.body as { projectionSync: { branch: { head: string } | null } }).projectionSync.branch?.head).toBe(head);
});
