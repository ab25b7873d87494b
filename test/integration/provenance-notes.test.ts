import { execFileSync } from 'node:child_process';
import net from 'node:net';
import type { OwnershipView } from '../../src/client';
import { installHooks } from '../../src/git/guard';
import { NOTES_REF, ProvenanceNoteOutputSchema } from '../../src/provenance/provenance-notes';
import { loadConfig } from '../../src/config';
import { JournalShipper } from '../../src/provenance/attributions-shipper';
import { recordObservation } from '../../src/store/bindings';
import { apiEnv, runCli, type CliResult } from '../support/cli';
import { commitAs, git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { waitForView } from '../support/harness';

/**
 * Provenance readable from git alone (OD_PROVENANCE_NOTES, src/provenance/provenance-notes.ts): with the option
 * on, the host agent's recording of a landing writes the landed head's note; `od-worktree
 * provenance` answers from it when the service is unreachable, marked as such. Off: no note.
 */

let s: ApiStack;
let repo: RepoFixture;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(2);
  await installHooks(repo.repoRoot);
});
afterAll(async () => s?.stop());

async function closedPortUrl(): Promise<string> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

function cli(args: string[], url: string): Promise<CliResult> {
  return runCli(args, { cwd: repo.repoRoot, env: apiEnv(url, s.tokens.reader) });
}

function noteOf(head: string): string | null {
  try {
    return execFileSync('git', ['notes', `--ref=${NOTES_REF}`, 'show', head], { cwd: repo.repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch {
    return null;
  }
}

/** Binds worktree i, makes two commits, squash-lands them on main; the landed record as the host agent projects it. */
async function landSquash(i: number, session: string): Promise<{ view: OwnershipView; head: string; source: string; commits: string[] }> {
  const wt = repo.worktrees[i]!;
  const bound = await s
    .api(s.tokens.executor)
    .bind({ repoRoot: repo.repoRoot, worktreePath: wt.path, branch: wt.branch, executionSessionId: session, runtime: 'codex-cli' });
  const ref = { repoRoot: await s.h.client.normalize(repo.repoRoot), worktreePath: await s.h.client.normalize(wt.path) };
  await waitForView(s.h.client, ref, (v) => v.projectionSync.localSeq >= v.seq && v.projectionSync.error === null);
  const c1 = commitAs(ref.worktreePath, session, `${session}-1.txt`);
  const c2 = commitAs(ref.worktreePath, session, `${session}-2.txt`);
  git(repo.repoRoot, 'merge', '-q', '--squash', wt.branch);
  git(repo.repoRoot, 'commit', '-q', '-m', `squash ${session}`);
  const head = git(repo.repoRoot, 'rev-parse', 'HEAD');
  const landed = await s
    .api(s.tokens.landing)
    .land({ ownershipId: bound.ownershipId, sourceHead: c2, landedBranch: 'main', landedHead: head, landedAt: new Date().toISOString() });
  expect(landed.status).toBe('recorded');
  const view = await waitForView(s.h.client, ref, (v) => v.landings.some((l) => l.landedHead === head));
  return { view, head, source: c2, commits: [c1, c2] };
}

test('OD_PROVENANCE_NOTES=1: the landed head gets a note (ids only); the CLI answers from it when the service is unreachable', async () => {
  expect(loadConfig({ OD_PROVENANCE_NOTES: '1' }).provenanceNotes).toBe(true);
  // The worker's conversation has a title and a URL: the note must carry its id alone.
  const observed = await recordObservation(
    s.h.pool,
    { workerId: s.workerId, runId: null },
    {
      executor: 'chatgpt-web',
      executorInstanceId: `ext-${s.workerId}`,
      sessionGeneration: 'gen-1',
      sequence: 1,
      conversation: {
        conversationId: 'c0ffee00-0000-4000-8000-0000000000aa',
        conversationUrl: 'https://chatgpt.com/c/c0ffee00-0000-4000-8000-0000000000aa',
        title: 'Private lane title',
        observedAt: new Date().toISOString(),
      },
    },
  );
  expect(observed).not.toHaveProperty('code');
  const { view, head, source, commits } = await landSquash(0, 'notes-A');
  const shipper = new JournalShipper({
    pool: s.h.pool,
    hostId: s.h.hostId,
    allowedRoots: [process.env.OD_TEST_TMP!],
    provenanceNotes: loadConfig({ OD_PROVENANCE_NOTES: '1' }).provenanceNotes,
  });
  await shipper.afterProjection(view);
  await shipper.afterProjection(view); // idempotent: rewritten, not refused
  await shipper.stop();

  expect(noteOf(source)).toBeNull();
  const raw = noteOf(head);
  expect(raw).not.toBeNull();
  const note = JSON.parse(raw!) as Record<string, unknown> & {
    authors: { commit: string; executionSessionId: string; epoch: number; conversationId: string | null }[];
  };
  expect(note).toMatchObject({ commit: head, landedHead: head, ownershipId: view.ownershipId, lander: { executionSessionId: 'notes-A' } });
  expect(note.authors.map((a) => [a.commit, a.executionSessionId, a.epoch, a.conversationId])).toEqual(
    commits.map((c) => [c, 'notes-A', 1, 'c0ffee00-0000-4000-8000-0000000000aa']),
  );
  // Readable by anyone with the repository: ids, never a title, a URL or a path.
  expect(raw).not.toMatch(/title|Private lane|conversationUrl|worktreePath|https?:/);

  const down = await closedPortUrl();
  const t = await cli(['provenance', head.slice(0, 10), '--repo', repo.repoRoot], down);
  expect(t.code).toBe(0);
  expect(t.stdout).toMatch(/^Source: +from git notes; the service is unreachable$/m);
  expect(t.stdout).toMatch(new RegExp(`^Landed head: +${head}$`, 'm'));
  expect(t.stdout).toContain(`1. ${commits[0]!.slice(0, 12)} session notes-A, epoch 1`);
  const j = await cli(['provenance', head, '--repo', repo.repoRoot, '--json'], down);
  expect(j.code).toBe(0);
  const out = ProvenanceNoteOutputSchema.parse(JSON.parse(j.stdout));
  expect(out.message).toContain('from git notes; the service is unreachable');
  expect(out.note.landedHead).toBe(head);

  // A commit without a note: the unreachable service stands (exit 4).
  const none = await cli(['provenance', git(repo.repoRoot, 'rev-parse', 'HEAD~1'), '--repo', repo.repoRoot, '--json'], down);
  expect(none.code).toBe(4);
  expect(JSON.parse(none.stdout)).toMatchObject({ ok: false, code: 'unreachable' });
});

test('OD_PROVENANCE_NOTES off (the default): no note is written', async () => {
  expect(loadConfig({}).provenanceNotes).toBe(false);
  const { view, head } = await landSquash(1, 'notes-B');
  const shipper = new JournalShipper({
    pool: s.h.pool,
    hostId: s.h.hostId,
    allowedRoots: [process.env.OD_TEST_TMP!],
    provenanceNotes: loadConfig({}).provenanceNotes,
  });
  await shipper.afterProjection(view);
  await shipper.stop();
  expect((await s.h.pool.query('SELECT 1 FROM landing_commits WHERE landed_head = $1', [head])).rowCount).toBe(2);
  expect(noteOf(head)).toBeNull();
});
