import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Principal } from '../../src/domain/identity';
import { recordObservation } from '../../src/store/bindings';
import { provenance, renderProvenance, type Provenance } from '../../src/provenance/provenance';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { executorPrincipal as executor, startHarness, type Harness } from '../support/harness';

/**
 * docs/operations.md#landing-and-provenance: a commit on main resolves back to the source conversation, for merge, squash and rebase
 * landings done with real git, from the landing receipts only (no trailers, no notes).
 */

let h: Harness;
let repo: RepoFixture;
let repoRoot: string;

const lander: Principal = { kind: 'landing', id: 'lander' };
const CONVS = ['a1b2c3d4-0000-4000-8000-00000000000a', 'a1b2c3d4-0000-4000-8000-00000000000b', 'a1b2c3d4-0000-4000-8000-00000000000c'];

/** What the test knows about each landing, to check provenance against. */
interface Landing {
  name: string;
  ownershipId: string;
  session: string;
  workerId: string;
  conversationId: string | null;
  landedHead: string;
  /** commits inside the landing's range other than its head */
  inside: string[];
}
const landings: Record<string, Landing> = {};

beforeAll(async () => {
  h = await startHarness();
  repo = makeRepo(3);
  repoRoot = await h.client.normalize(repo.repoRoot);
});
afterAll(async () => h?.shutdown());

function commit(cwd: string, file: string, message: string): string {
  writeFileSync(path.join(cwd, file), `${message}\n`);
  git(cwd, 'add', file);
  git(cwd, 'commit', '-q', '-m', message);
  return git(cwd, 'rev-parse', 'HEAD');
}

/** Binds worktree i for a worker whose executor has observed a conversation (or none). */
async function bindWorktree(
  i: number,
  conversationId: string | null,
): Promise<{ ownershipId: string; ref: { repoRoot: string; worktreePath: string }; session: string; workerId: string }> {
  const workerId = `worker-prov-${i}`;
  if (conversationId) {
    const observed = await recordObservation(
      h.pool,
      { workerId, runId: `run-prov-${i}` },
      {
        executor: 'chatgpt-web',
        executorInstanceId: `ext-prov-${i}`,
        sessionGeneration: 'gen-1',
        sequence: 1,
        conversation: {
          conversationId,
          conversationUrl: `https://chatgpt.com/c/${conversationId}`,
          title: `Provenance lane ${i}`,
          observedAt: new Date().toISOString(),
        },
      },
    );
    expect('code' in observed).toBe(false);
  }
  const wt = repo.worktrees[i]!;
  const ref = { repoRoot, worktreePath: await h.client.normalize(wt.path) };
  const session = `session-prov-${i}`;
  const view = await h.client.bind({
    ...ref,
    branch: wt.branch,
    executionSessionId: session,
    runtime: conversationId ? 'chatgpt-web' : 'codex-cli',
    worker: { runId: `run-prov-${i}`, workerId },
    principal: executor(workerId),
  });
  expect(view.owner?.conversation?.conversationId ?? null).toBe(conversationId);
  return { ownershipId: view.ownershipId, ref, session, workerId };
}

async function land(ref: { repoRoot: string; worktreePath: string }, ownershipId: string, sourceHead: string, landedHead: string): Promise<void> {
  await h.client.landed(ref, { sourceHead, landedBranch: 'main', landedHead, landedAt: new Date().toISOString(), principal: lander });
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await h.pool.query('SELECT 1 FROM landing_receipts WHERE ownership_id = $1 AND landed_head = $2', [ownershipId, landedHead]);
    if (res.rowCount === 1) return;
    if (Date.now() > deadline) throw new Error('no landing receipt');
    await new Promise((r) => setTimeout(r, 100));
  }
}

function expectChain(p: Provenance | null, l: Landing, commitSha: string, via: Provenance['via']): void {
  expect(p).not.toBeNull();
  expect(p).toMatchObject({
    commit: commitSha,
    ownershipId: l.ownershipId,
    landedHead: l.landedHead,
    landedBranch: 'main',
    executionSessionId: l.session,
    worker: { workerId: l.workerId },
    via,
  });
  if (l.conversationId) {
    expect(p!.conversation).toEqual({
      conversationId: l.conversationId,
      conversationUrl: `https://chatgpt.com/c/${l.conversationId}`,
      title: expect.stringMatching(/^Provenance lane/),
    });
  } else {
    expect(p!.conversation).toBeNull();
  }
}

test('merge landing (git merge --no-ff): the merge commit and the merged commits', async () => {
  const { ownershipId, ref, session, workerId } = await bindWorktree(0, CONVS[0]!);
  const wt = repo.worktrees[0]!;
  const a1 = commit(wt.path, 'a.txt', 'a1');
  const a2 = commit(wt.path, 'a2.txt', 'a2');
  git(repo.repoRoot, 'merge', '-q', '--no-ff', '-m', 'merge feature-0', wt.branch);
  const head = git(repo.repoRoot, 'rev-parse', 'HEAD');
  await land(ref, ownershipId, a2, head);
  landings.merge = { name: 'merge', ownershipId, session, workerId, conversationId: CONVS[0]!, landedHead: head, inside: [a1, a2] };
});

test('squash landing (git merge --squash + commit): the squash commit and the squashed-away source commits', async () => {
  const { ownershipId, ref, session, workerId } = await bindWorktree(1, CONVS[1]!);
  const wt = repo.worktrees[1]!;
  const b1 = commit(wt.path, 'b.txt', 'b1');
  const b2 = commit(wt.path, 'b2.txt', 'b2');
  git(repo.repoRoot, 'merge', '-q', '--squash', wt.branch);
  git(repo.repoRoot, 'commit', '-q', '-m', 'squash feature-1');
  const head = git(repo.repoRoot, 'rev-parse', 'HEAD');
  await land(ref, ownershipId, b2, head);
  landings.squash = { name: 'squash', ownershipId, session, workerId, conversationId: CONVS[1]!, landedHead: head, inside: [b1, b2] };
});

test('rebase landing (rebase onto main, fast-forward main): the rebased commits and their originals', async () => {
  const { ownershipId, ref, session, workerId } = await bindWorktree(2, CONVS[2]!);
  const wt = repo.worktrees[2]!;
  const c1 = commit(wt.path, 'c.txt', 'c1');
  const c2 = commit(wt.path, 'c2.txt', 'c2');
  git(wt.path, 'rebase', '-q', 'main');
  const rebased = git(wt.path, 'rev-parse', 'HEAD');
  const rebasedFirst = git(wt.path, 'rev-parse', 'HEAD~1');
  expect(rebased).not.toBe(c2);
  git(repo.repoRoot, 'merge', '-q', '--ff-only', wt.branch);
  const head = git(repo.repoRoot, 'rev-parse', 'HEAD');
  expect(head).toBe(rebased);
  // The landing controller reports the head it was asked to land (before its rebase).
  await land(ref, ownershipId, c2, head);
  landings.rebase = { name: 'rebase', ownershipId, session, workerId, conversationId: CONVS[2]!, landedHead: head, inside: [rebasedFirst, c1, c2] };
});

test('every landed head and every commit inside a landed range resolves to its source conversation', async () => {
  expect(Object.keys(landings).sort()).toEqual(['merge', 'rebase', 'squash']);
  for (const l of Object.values(landings)) {
    expectChain(await provenance(h.pool, repoRoot, l.landedHead), l, l.landedHead, 'landed_head');
    expectChain(await provenance(h.pool, repoRoot, l.landedHead.slice(0, 7)), l, l.landedHead, 'landed_head');
    for (const c of l.inside) expectChain(await provenance(h.pool, repoRoot, c), l, c, 'range');
  }
  // From a linked worktree or a subdirectory of the repository, too: receipts name the main worktree.
  const l = landings.merge!;
  expectChain(await provenance(h.pool, repo.worktrees[1]!.path, l.inside[0]!), l, l.inside[0]!, 'range');
});

test('commits no receipt accounts for are unknown (null), never guessed', async () => {
  const initial = git(repo.repoRoot, 'rev-list', '--max-parents=0', 'HEAD');
  expect(await provenance(h.pool, repoRoot, initial)).toBeNull();
  // A commit made straight on main after the landings.
  const direct = commit(repo.repoRoot, 'direct.txt', 'direct on main');
  expect(await provenance(h.pool, repoRoot, direct)).toBeNull();
  // A commit that does not exist anywhere, and a repository path that does not exist.
  expect(await provenance(h.pool, repoRoot, 'f'.repeat(40))).toBeNull();
  expect(await provenance(h.pool, path.join(repoRoot, 'no-such-dir'), 'abcdef1')).toBeNull();
  await expect(provenance(h.pool, repoRoot, 'xyz')).rejects.toThrow();
});

test('after the worktree and branch are removed, the squashed-away commits still resolve while git keeps their objects', async () => {
  const l = landings.squash!;
  const wt = repo.worktrees[1]!;
  const ref = { repoRoot, worktreePath: await h.client.normalize(wt.path) };
  const deadline = Date.now() + 20_000;
  // Landing unlocks the worktree once the local projection has caught up.
  for (;;) {
    const v = await h.client.projection(ref);
    if (v && v.state === 'landed' && v.projectionSync.localSeq >= v.seq) break;
    if (Date.now() > deadline) throw new Error('projection did not catch up');
    await new Promise((r) => setTimeout(r, 100));
  }
  git(repo.repoRoot, 'worktree', 'remove', '--force', wt.path);
  git(repo.repoRoot, 'branch', '-D', wt.branch);
  await h.client.worktreeRemoved(ref, { principal: { kind: 'system', id: 'host' } });
  for (const c of [l.landedHead, ...l.inside]) expectChain(await provenance(h.pool, repoRoot, c), l, c, c === l.landedHead ? 'landed_head' : 'range');
});

test('a first fast-forward landing with nothing to bound it attributes its head only; a non-ChatGPT owner renders unknown', async () => {
  const fresh = makeRepo(1);
  const freshRoot = await h.client.normalize(fresh.repoRoot);
  const wt = fresh.worktrees[0]!;
  const ref = { repoRoot: freshRoot, worktreePath: await h.client.normalize(wt.path) };
  const view = await h.client.bind({
    ...ref,
    branch: wt.branch,
    executionSessionId: 'session-ff',
    runtime: 'codex-cli',
    worker: { runId: null, workerId: 'worker-ff' },
    principal: executor('worker-ff'),
  });
  const d1 = commit(wt.path, 'd1.txt', 'd1');
  const d2 = commit(wt.path, 'd2.txt', 'd2');
  git(fresh.repoRoot, 'merge', '-q', '--ff-only', wt.branch);
  await land(ref, view.ownershipId, d2, d2);

  const head = await provenance(h.pool, freshRoot, d2);
  expectChain(
    head,
    { name: 'ff', ownershipId: view.ownershipId, session: 'session-ff', workerId: 'worker-ff', conversationId: null, landedHead: d2, inside: [] },
    d2,
    'landed_head',
  );
  expect(head!.worker).toEqual({ runId: null, workerId: 'worker-ff' });
  const text = renderProvenance(head!);
  expect(text).toMatch(/^Conversation: +unknown$/m);
  expect(text).toMatch(/^Run: +unknown$/m);
  expect(text).not.toMatch(/null|undefined/);
  // Where the branch began is not recorded and main has no earlier landing: d1 is not attributed.
  expect(await provenance(h.pool, freshRoot, d1)).toBeNull();
});
