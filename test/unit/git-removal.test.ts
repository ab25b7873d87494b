/**
 * Lossless worktree removal on real git (src/git/removal.ts, docs/cleanup.md): merge, squash and
 * rebase landings count as landed, an unlanded commit refuses with its sha, uncommitted and
 * untracked files are snapshotted byte for byte before the worktree goes, a locked worktree is
 * unlocked and removed, and nothing changes on a refusal or a dry run.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { OwnershipFact } from '../../src/domain/removal';
import { realGit } from '../../src/git/real-git';
import { refusedServiceGit } from '../../src/git/safe-env';
import { analyzeBranch, listWorktrees, removeWorktree, type RemoveOptions } from '../../src/git/removal';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';

// The host's own git config (hooksPath, signing, templates) must not change what these tests see.
process.env.GIT_CONFIG_GLOBAL = '/dev/null';
process.env.GIT_CONFIG_NOSYSTEM = '1';

const made: string[] = [];
let fx: RepoFixture;
let wt: string;
let branch: string;

beforeEach(() => {
  fx = makeRepo(1);
  made.push(path.dirname(fx.repoRoot));
  wt = fx.worktrees[0]!.path;
  branch = fx.worktrees[0]!.branch;
});
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

const released: OwnershipFact = { ownershipId: 'own_01JREMOVAL', state: 'released', executionSessionId: 'sess-1', source: 'projection' };
const opts = (o: Partial<RemoveOptions> = {}): RemoveOptions => ({ ownership: released, callerIsOwner: false, liveness: 'unknown', ...o });

function commit(cwd: string, file: string, content = `${file}\n`): string {
  writeFileSync(path.join(cwd, file), content);
  git(cwd, 'add', file);
  git(cwd, 'commit', '-q', '-m', `add ${file}`);
  return git(cwd, 'rev-parse', 'HEAD');
}

const refs = (cwd: string) => git(cwd, 'for-each-ref', '--format=%(refname) %(objectname)');

describe('landed work', () => {
  test('a merge landing: every commit is on main by ancestry; the worktree is removed and its branch kept', async () => {
    commit(wt, 'a.txt');
    const head = commit(wt, 'b.txt');
    git(fx.repoRoot, 'merge', '-q', '--no-ff', '-m', 'merge', branch);

    const a = await analyzeBranch(wt);
    expect(a).toMatchObject({ head, unlanded: [], headLandedOn: 'refs/heads/main' });
    const out = await removeWorktree(wt, opts());
    expect(out.status).toBe('removed');
    expect(existsSync(wt)).toBe(false);
    expect((await listWorktrees(fx.repoRoot)).map((w) => w.path)).toEqual([fx.repoRoot]);
    expect(git(fx.repoRoot, 'rev-parse', `refs/heads/${branch}`)).toBe(head);
    expect(out.branch).toEqual({ name: branch, status: 'kept' });
  });

  test('a squash landing: the combined diff of the branch equals the landed commit, after main moved on', async () => {
    const c1 = commit(wt, 'a.txt');
    const c2 = commit(wt, 'b.txt');
    commit(fx.repoRoot, 'unrelated.txt');
    git(fx.repoRoot, 'merge', '-q', '--squash', branch);
    git(fx.repoRoot, 'commit', '-q', '-m', 'squashed');
    const squash = git(fx.repoRoot, 'rev-parse', 'HEAD');

    const a = await analyzeBranch(wt);
    expect(a.unlanded).toEqual([]);
    expect(a.accounted).toEqual(
      expect.arrayContaining([
        { sha: c1, method: 'squash', via: squash },
        { sha: c2, method: 'squash', via: squash },
      ]),
    );
    expect((await removeWorktree(wt, opts())).status).toBe('removed');
  });

  test('a branch squashed up to one commit and carrying one more refuses with only the later sha', async () => {
    commit(wt, 'a.txt');
    commit(wt, 'b.txt');
    git(fx.repoRoot, 'merge', '-q', '--squash', branch);
    git(fx.repoRoot, 'commit', '-q', '-m', 'squashed');
    const later = commit(wt, 'c.txt');
    const a = await analyzeBranch(wt);
    expect(a.unlanded).toEqual([later]);
    expect(a.accounted.map((x) => x.method)).toEqual(['squash', 'squash']);
  });

  test('a rebase landing: each commit has a landed twin with the same patch id', async () => {
    const c1 = commit(wt, 'a.txt');
    const c2 = commit(wt, 'b.txt');
    commit(fx.repoRoot, 'unrelated.txt');
    git(fx.repoRoot, 'cherry-pick', c1, c2);
    const [p1, p2] = git(fx.repoRoot, 'rev-list', '--reverse', '-n', '2', 'HEAD').split('\n');

    const a = await analyzeBranch(wt);
    expect(a.unlanded).toEqual([]);
    expect(a.accounted).toEqual(
      expect.arrayContaining([
        { sha: c1, method: 'patch_id', via: p1 },
        { sha: c2, method: 'patch_id', via: p2 },
      ]),
    );
    const out = await removeWorktree(wt, opts());
    expect(out.status).toBe('removed');
    expect(out.decision.verdict === 'remove' && out.decision.receipt.accounted.map((x) => x.method)).toEqual(['patch_id', 'patch_id']);
  });

  test('a merge of main into the branch changed nothing of its own: it loses nothing once its parents are accounted for', async () => {
    const c1 = commit(wt, 'a.txt');
    git(fx.repoRoot, 'update-ref', 'refs/overdeck/wip/own_X/tree-keep', c1);
    commit(fx.repoRoot, 'unrelated.txt');
    git(wt, 'merge', '-q', '--no-edit', 'main');
    const merge = git(wt, 'rev-parse', 'HEAD');
    const a = await analyzeBranch(wt);
    expect(a.unlanded).toEqual([]);
    expect(a.accounted).toEqual([
      { sha: c1, method: 'preserved', via: 'refs/overdeck/wip/own_X/tree-keep' },
      { sha: merge, method: 'clean_merge', via: merge },
    ]);
  });

  test('a merge of main that resolved a conflict its own way is work: it refuses', async () => {
    commit(wt, 'a.txt', 'branch\n');
    commit(fx.repoRoot, 'a.txt', 'main\n');
    expect(() => git(wt, 'merge', '-q', '--no-edit', 'main')).toThrow();
    writeFileSync(path.join(wt, 'a.txt'), 'resolved\n');
    git(wt, 'add', 'a.txt');
    git(wt, 'commit', '-q', '--no-edit');
    const merge = git(wt, 'rev-parse', 'HEAD');
    // The branch's own commit is kept by a ref: only the merge's resolution is left.
    git(fx.repoRoot, 'update-ref', 'refs/overdeck/wip/own_X/tree-keep', git(wt, 'rev-parse', 'HEAD^1'));
    expect((await analyzeBranch(wt)).unlanded).toEqual([merge]);
  });

  test('a commit a landing receipt names counts as landed, even when main shows no trace of it', async () => {
    const c1 = commit(wt, 'a.txt');
    // Landed elsewhere with other content (a conflict resolved on the way): no patch matches.
    commit(fx.repoRoot, 'a.txt', 'resolved differently\n');
    const landedHead = git(fx.repoRoot, 'rev-parse', 'HEAD');
    expect((await analyzeBranch(wt)).unlanded).toEqual([c1]);
    const a = await analyzeBranch(wt, { receipts: [{ sourceHead: c1, landedHead, landedBranch: 'main' }] });
    expect(a.unlanded).toEqual([]);
    expect(a.accounted).toEqual([{ sha: c1, method: 'receipt', via: landedHead }]);
  });

  test('a commit kept by a ref under refs/overdeck/ is preserved, not lost', async () => {
    const c1 = commit(wt, 'a.txt');
    git(fx.repoRoot, 'update-ref', 'refs/overdeck/wip/own_X/tree-keep', c1);
    const a = await analyzeBranch(wt);
    expect(a.unlanded).toEqual([]);
    expect(a.accounted).toEqual([{ sha: c1, method: 'preserved', via: 'refs/overdeck/wip/own_X/tree-keep' }]);
  });
});

describe('what removal would lose', () => {
  test('an unlanded commit refuses with its sha, and nothing changes', async () => {
    commit(wt, 'a.txt');
    const lost = commit(wt, 'b.txt');
    commit(fx.repoRoot, 'unrelated.txt');
    git(fx.repoRoot, 'cherry-pick', git(wt, 'rev-parse', 'HEAD~1'));
    const before = refs(fx.repoRoot);

    const out = await removeWorktree(wt, opts());
    expect(out.status).toBe('refused');
    expect(out.decision.verdict === 'refuse' && out.decision.refusal).toMatchObject({
      code: 'unlanded_commits',
      details: { count: 1, commits: [lost] },
    });
    expect(existsSync(wt)).toBe(true);
    expect(refs(fx.repoRoot)).toBe(before);
  });

  test('a modified tracked file is snapshotted, then the worktree removed: the snapshot holds it byte for byte', async () => {
    const bytes = Buffer.from([0x68, 0x69, 0x0d, 0x0a, 0x00, 0xff, 0xfe, 0x0a]);
    writeFileSync(path.join(wt, 'README.md'), bytes);
    const head = git(wt, 'rev-parse', 'HEAD');

    const out = await removeWorktree(wt, opts());
    expect(out.status).toBe('removed');
    expect(existsSync(wt)).toBe(false);
    const receipt = out.decision.verdict === 'remove' ? out.decision.receipt : null;
    expect(receipt?.preserved).toHaveLength(1);
    const { ref, sha } = receipt!.preserved[0]!;
    expect(ref).toMatch(/^refs\/overdeck\/wip\/own_01JREMOVAL\/tree-[0-9a-f]{40}$/);
    expect(git(fx.repoRoot, 'rev-parse', ref)).toBe(sha);
    expect(git(fx.repoRoot, 'rev-parse', `${sha}^`)).toBe(head);
    expect(execFileSync('git', ['cat-file', 'blob', `${sha}:README.md`], { cwd: fx.repoRoot })).toEqual(bytes);
    expect(out.facts.dirtyFiles).toEqual(['README.md']);
  });

  test('an untracked file is snapshotted likewise (an ignored one is not work)', async () => {
    mkdirSync(path.join(wt, 'notes'));
    writeFileSync(path.join(wt, 'notes', 'draft.md'), 'half a thought\n');
    writeFileSync(path.join(wt, '.gitignore'), 'build/\n');
    mkdirSync(path.join(wt, 'build'));
    writeFileSync(path.join(wt, 'build', 'out.bin'), 'generated\n');

    const out = await removeWorktree(wt, opts());
    expect(out.status).toBe('removed');
    const sha = out.decision.verdict === 'remove' ? out.decision.receipt.preserved[0]!.sha : '';
    expect(git(fx.repoRoot, 'show', `${sha}:notes/draft.md`)).toBe('half a thought');
    expect(out.facts.dirtyFiles.sort()).toEqual(['.gitignore', 'notes/draft.md']);
    expect(() => git(fx.repoRoot, 'cat-file', '-e', `${sha}:build/out.bin`)).toThrow();
  });

  test('dirty files with no ownership to file a snapshot under refuse (dirty_files), and nothing changes', async () => {
    writeFileSync(path.join(wt, 'new.txt'), 'x\n');
    const before = refs(fx.repoRoot);
    const out = await removeWorktree(wt, opts({ ownership: null }));
    expect(out.decision.verdict === 'refuse' && out.decision.refusal.code).toBe('dirty_files');
    expect(existsSync(wt)).toBe(true);
    expect(refs(fx.repoRoot)).toBe(before);
  });

  test('a snapshot that fails refuses (snapshot_failed): nothing is removed', async () => {
    writeFileSync(path.join(wt, 'new.txt'), 'x\n');
    // Not ref-safe: the WIP ref cannot be named, so the snapshot fails.
    const out = await removeWorktree(wt, opts({ ownership: { ...released, ownershipId: 'not ref safe' } }));
    expect(out.decision.verdict === 'refuse' && out.decision.refusal.code).toBe('snapshot_failed');
    expect(existsSync(wt)).toBe(true);
  });

  test('a nested repository cannot be snapshotted: dirty_files, even with an ownership', async () => {
    execFileSync('git', ['init', '-q', path.join(wt, 'vendor-repo')]);
    writeFileSync(path.join(wt, 'vendor-repo', 'f'), 'x\n');
    const out = await removeWorktree(wt, opts());
    expect(out.decision.verdict === 'refuse' && out.decision.refusal).toMatchObject({ code: 'dirty_files', details: { files: ['vendor-repo/'] } });
    expect(existsSync(wt)).toBe(true);
  });

  test('a session holding the worktree keeps it whoever sweeps (worktree_owned); its owner may remove it', async () => {
    const held: OwnershipFact = { ...released, state: 'active' };
    const out = await removeWorktree(wt, opts({ ownership: held }));
    expect(out.decision.verdict === 'refuse' && out.decision.refusal.code).toBe('worktree_owned');
    expect(existsSync(wt)).toBe(true);
    expect((await removeWorktree(wt, opts({ ownership: held, callerIsOwner: true }))).status).toBe('removed');
  });

  test('staged work undone on disk is still work: snapshotted', async () => {
    writeFileSync(path.join(wt, 'README.md'), 'staged\n');
    git(wt, 'add', 'README.md');
    writeFileSync(path.join(wt, 'README.md'), '# product\n');
    const out = await removeWorktree(wt, opts());
    expect(out.status).toBe('removed');
    expect(out.facts.dirtyFiles).toEqual(['README.md']);
    expect(out.decision.verdict === 'remove' && out.decision.receipt.preserved).toHaveLength(1);
  });

  test('a dry run decides and changes nothing: no snapshot ref, the worktree stays', async () => {
    writeFileSync(path.join(wt, 'README.md'), 'edited\n');
    const before = refs(fx.repoRoot);
    const out = await removeWorktree(wt, opts({ dryRun: true }));
    expect(out.status).toBe('would_remove');
    expect(out.decision.verdict === 'remove' && out.decision.receipt.snapshotPlanned).toBe(true);
    expect(existsSync(wt)).toBe(true);
    expect(refs(fx.repoRoot)).toBe(before);
  });
});

describe('the removal itself', () => {
  test("a locked worktree is unlocked and removed (git's own lock, with a reason)", async () => {
    git(fx.repoRoot, 'worktree', 'lock', '--reason', 'overdeck: owned by session s', wt);
    const out = await removeWorktree(wt, opts());
    expect(out.status).toBe('removed');
    expect(existsSync(wt)).toBe(false);
    expect(git(fx.repoRoot, 'worktree', 'list', '--porcelain')).not.toContain('.worktrees');
  });

  test('asked to, a landed branch is deleted after the removal (compared with the head the analysis saw)', async () => {
    commit(wt, 'a.txt');
    git(fx.repoRoot, 'merge', '-q', '--no-ff', '-m', 'merge', branch);
    const out = await removeWorktree(wt, opts({ deleteBranch: true }));
    expect(out.branch).toEqual({ name: branch, status: 'deleted' });
    expect(() => git(fx.repoRoot, 'rev-parse', '--verify', `refs/heads/${branch}`)).toThrow();
  });

  test('the main worktree is never removed', async () => {
    await expect(removeWorktree(fx.repoRoot, opts())).rejects.toThrow(/main worktree/);
  });

  test('the service runs `worktree remove` only forced: unforced, git would run `status` (filters) in the worktree', () => {
    expect(refusedServiceGit(['worktree', 'remove', '--force', '/x'])).toBeNull();
    expect(refusedServiceGit(['worktree', 'remove', '/x'])).toEqual(expect.any(String));
    expect(refusedServiceGit(['worktree', 'move', '/x', '/y'])).toEqual(expect.any(String));
  });
});

describe('other worktrees vanishing under git', () => {
  /**
   * git reads every entry of .git/worktrees before it removes or lists one, and dies on an entry a
   * concurrent removal (gc, a removal in another process) deleted meanwhile: `fatal: failed to read
   * .../worktrees/<other>/commondir: No such file or directory` (seen with 60 `git worktree remove`
   * side by side, and in cleanup-e2e's parallel removals). A git in front of the real one answers
   * that, once, for the first `worktree remove` or `worktree list`, naming the entry given.
   */
  function racingGit(entry: string): { dir: string; env: () => () => void } {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'od-git-race-'));
    made.push(dir);
    const real = realGit();
    writeFileSync(
      path.join(dir, 'git'),
      `#!/bin/sh
case " $* " in *" worktree remove "*|*" worktree list "*)
  if [ ! -e "${dir}/raced" ]; then : > "${dir}/raced"; echo "fatal: failed to read $GIT_DIR/worktrees/${entry}/commondir: No such file or directory" >&2; exit 128; fi ;;
esac
exec "${real}" "$@"
`,
    );
    chmodSync(path.join(dir, 'git'), 0o755);
    return {
      dir,
      env: () => {
        const old = process.env.PATH;
        process.env.PATH = `${dir}:${old ?? ''}`;
        return () => {
          process.env.PATH = old;
        };
      },
    };
  }

  test("another worktree's entry vanishing fails neither the removal nor the list: tried again, removed", async () => {
    const race = racingGit('another');
    const restore = race.env();
    try {
      const out = await removeWorktree(wt, opts());
      expect(out.status).toBe('removed');
      expect(existsSync(path.join(race.dir, 'raced'))).toBe(true);
    } finally {
      restore();
    }
    expect(existsSync(wt)).toBe(false);
    const again = racingGit('another');
    const restoreList = again.env();
    try {
      expect((await listWorktrees(fx.repoRoot)).map((w) => w.path)).toEqual([fx.repoRoot]);
      expect(existsSync(path.join(again.dir, 'raced'))).toBe(true);
    } finally {
      restoreList();
    }
  });

  test('its own entry vanishing is no race: the removal fails at once and says why', async () => {
    const race = racingGit(path.basename(wt));
    const restore = race.env();
    try {
      await expect(removeWorktree(wt, opts())).rejects.toThrow(/git_failed: .*worktrees\/feature-0\/commondir: No such file or directory/);
    } finally {
      restore();
    }
    expect(existsSync(wt)).toBe(true);
  });
});
