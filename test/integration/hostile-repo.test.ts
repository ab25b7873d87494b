import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { OwnershipView } from '../../src/client';
import type { OwnershipViewOut } from '../../src/contract/http';
import { installHooks } from '../../src/git/guard';
import { NOTES_REF } from '../../src/provenance/provenance-notes';
import { JournalShipper } from '../../src/provenance/attributions-shipper';
import { runCli } from '../support/cli';
import { makeHostileRepo, type HostileRepo } from '../support/hostile-repo';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { waitForView } from '../support/harness';
import { withTenureSecret } from '../support/tenure-env';

/**
 * The service never runs repository code (docs/guarantees.md#out-of-reach, src/git/safe-env.ts):
 * in a repository whose every agent-writable place names a marker-writing program (hooks of every
 * name, core.fsmonitor, filters, textconv and diff drivers, gpg.program, pager/editor/ssh/askpass,
 * the same from global and system config and from the service's own environment), every service
 * operation is run through the real stack, and the marker file must stay empty. A program that did
 * run would also have written down the environment it saw (DATABASE_URL, OD_*).
 */

let s: ApiStack;
let hr: HostileRepo;
const saved: Record<string, string | undefined> = {};
const caughtUp = (v: OwnershipView): boolean => v.projectionSync.localSeq >= v.seq && v.projectionSync.error === null;

beforeAll(async () => {
  s = await startApiStack();
  hr = makeHostileRepo(4);
  // The service process carries every variable that names a program, a global and a system config
  // full of them, and a secret of its own: none may reach a git child (let alone a program).
  for (const k of [...Object.keys(hr.hostileEnv), 'GIT_CONFIG_NOSYSTEM']) saved[k] = process.env[k];
  Object.assign(process.env, hr.hostileEnv);
  delete process.env.GIT_CONFIG_NOSYSTEM;
  // The ownership guard, chaining to the hostile hooks directory (the agent's commits run both, quietly).
  await installHooks(hr.repoRoot);
});
afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await s?.stop();
});

/** The marker file is empty: no program of the repository's ran since the last clear. */
function expectNothingRan(step: string): void {
  expect({ step, ran: hr.marks() }).toEqual({ step, ran: [] });
}

const wt = (i: number) => hr.worktrees[i]!;
const refOf = (v: { repoRoot: string; worktreePath: string }) => ({ repoRoot: v.repoRoot, worktreePath: v.worktreePath });

async function bind(i: number, session: string): Promise<OwnershipViewOut> {
  const view = await s
    .api(s.tokens.executor)
    .bind({ repoRoot: hr.repoRoot, worktreePath: wt(i).path, branch: wt(i).branch, executionSessionId: session, runtime: 'codex-cli' });
  await waitForView(s.h.client, refOf(view), caughtUp);
  return view;
}

/** An agent commit in worktree i by `session`, through the hooks (journalled) and the filters, signed. */
function commit(i: number, session: string, file: string): string {
  writeFileSync(path.join(wt(i).path, file), `${file}\n`);
  hr.agentGit(wt(i).path, session, 'add', file);
  hr.agentGit(wt(i).path, session, 'commit', '-q', '-m', file);
  return hr.agentGit(wt(i).path, session, 'rev-parse', 'HEAD');
}

/** The environment of an od-worktree process on the service host: ours (hostile variables, DATABASE_URL) plus the given. */
function cliEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  if (extra.OVERDECK_EXECUTION_SESSION_ID === undefined) delete env.OVERDECK_EXECUTION_SESSION_ID;
  if (extra.OVERDECK_EPOCH === undefined) delete env.OVERDECK_EPOCH;
  if (extra.OVERDECK_TENURE_SECRET === undefined) delete env.OVERDECK_TENURE_SECRET;
  return env;
}

test('bind, heartbeat, handoff and accept project into the worktree without running anything of the repository', async () => {
  hr.clear();
  const a = await bind(0, 'hostile-a');
  expectNothingRan('bind (projection write)');
  // The projection is there: the service did work in this repository.
  expect(hr.agentGit(wt(0).path, null, 'config', '--worktree', '--includes', 'overdeck.owner.execution-session-id')).toBe('hostile-a');

  const owner = s.api(s.tokens.executor);
  await owner.heartbeat(a.ownershipId, { executionSessionId: 'hostile-a', epoch: 1 });
  const started = await owner.handoff(a.ownershipId, { executionSessionId: 'hostile-a', epoch: 1, toExecutionSessionId: 'hostile-b' });
  const accepted = await owner.acceptHandoff(a.ownershipId, { handoffId: started.handoff!.handoffId, executionSessionId: 'hostile-b', runtime: 'codex-cli' });
  await waitForView(s.h.client, refOf(accepted), (v) => caughtUp(v) && v.owner?.executionSessionId === 'hostile-b');
  expectNothingRan('heartbeat, handoff, accept');
  expect(hr.agentGit(wt(0).path, null, 'config', '--worktree', '--includes', 'overdeck.owner.execution-session-id')).toBe('hostile-b');
});

test('an admin-forced reclaim preserves dirty and untracked files as they are on disk, and nothing of the repository runs; nor on release', async () => {
  const a = await bind(1, 'hostile-dead');
  commit(1, 'hostile-dead', 'committed.txt');
  // Work in progress of every kind the attributes route to a driver: shared config, include, global, system, process filter.
  const dirty: Record<string, string> = {
    'committed.txt': 'changed after the commit\r\n',
    'README.md': '# rewritten\r\nwith CRLF\r\n',
    'untracked.txt': 'untracked\r\n',
    'a.proc': 'process filter\n',
    'b.inc': 'included driver\n',
    'c.glob': 'global driver\n',
    'd.sys': 'system driver\n',
  };
  for (const [f, c] of Object.entries(dirty)) writeFileSync(path.join(wt(1).path, f), c);
  hr.clear();

  const reclaimed = await s.api(s.tokens.admin).reclaim(a.ownershipId, {
    executionSessionId: 'hostile-next',
    runtime: 'codex-cli',
    force: true,
    reason: 'hostile repository test',
    worker: { workerId: s.workerId },
  });
  expectNothingRan('forced reclaim (WIP preservation)');
  const wip = reclaimed.latestWip;
  expect(wip?.ref).toMatch(new RegExp(`^refs/overdeck/wip/${a.ownershipId}/\\d+$`));
  for (const [f, c] of Object.entries(dirty)) expect([f, hr.agentGit(hr.repoRoot, null, 'cat-file', 'blob', `${wip!.sha}:${f}`)]).toEqual([f, c.trimEnd()]);

  const view = await waitForView(s.h.client, refOf(reclaimed), caughtUp);
  await s.api(s.tokens.executor).release(a.ownershipId, { executionSessionId: 'hostile-next', epoch: view.epoch });
  await waitForView(s.h.client, refOf(reclaimed), (v) => caughtUp(v) && v.state === 'released');
  expectNothingRan('release');
});

test('a landing receipt, its landed commits, the journal, provenance notes and the provenance lookup run nothing of the repository', async () => {
  const bound = await bind(2, 'hostile-lander');
  const c1 = commit(2, 'hostile-lander', 'l1.txt');
  const c2 = commit(2, 'hostile-lander', 'l2.txt');
  hr.agentGit(hr.repoRoot, null, 'merge', '-q', '--squash', wt(2).branch);
  hr.agentGit(hr.repoRoot, null, 'commit', '-q', '-m', 'squash hostile-lander');
  const head = hr.agentGit(hr.repoRoot, null, 'rev-parse', 'HEAD');
  hr.clear();

  const landed = await s
    .api(s.tokens.landing)
    .land({ ownershipId: bound.ownershipId, sourceHead: c2, landedBranch: 'main', landedHead: head, landedAt: new Date().toISOString() });
  expect(landed.status).toBe('recorded');
  const view = await waitForView(s.h.client, refOf(bound), (v) => caughtUp(v) && v.landings.some((l) => l.landedHead === head));
  // The host agent's shipping, with notes on: the journal, the landed commits (patch ids), the note.
  const shipper = new JournalShipper({ pool: s.h.pool, hostId: s.h.hostId, allowedRoots: [process.env.OD_TEST_TMP!], provenanceNotes: true });
  await shipper.afterProjection(view);
  await shipper.stop();
  const p = await s.api(s.tokens.reader).provenance(head, hr.repoRoot);
  expectNothingRan('landing, journal shipping, notes, provenance');

  // The work was done: the note names both commits by the session the journal attributed them to.
  const note = JSON.parse(hr.agentGit(hr.repoRoot, null, 'notes', `--ref=${NOTES_REF}`, 'show', head)) as {
    authors: { commit: string; executionSessionId: string }[];
  };
  expect(note.authors.map((x) => [x.commit, x.executionSessionId])).toEqual([
    [c1, 'hostile-lander'],
    [c2, 'hostile-lander'],
  ]);
  expect(p).toMatchObject({ ownershipId: bound.ownershipId, via: 'landed_head' });
});

test('the CLI service commands: landings scan, admin rebuild-projection, and the owner’s snapshot run nothing of the repository', async () => {
  const bound = await bind(3, 'hostile-scan');
  const picked = commit(3, 'hostile-scan', 'picked.txt');
  hr.agentGit(hr.repoRoot, null, 'cherry-pick', picked);
  const landedCopy = hr.agentGit(hr.repoRoot, null, 'rev-parse', 'HEAD');
  writeFileSync(path.join(wt(3).path, 'snap.txt'), 'snapshot me\r\n');
  hr.clear();

  const scan = await runCli(['landings', 'scan', '--json'], { cwd: hr.repoRoot, env: cliEnv({ OD_API_URL: s.url, OD_TOKEN: s.tokens.landing }) });
  expect({ code: scan.code, stderr: scan.stderr }).toEqual({ code: 0, stderr: '' });
  const report = (JSON.parse(scan.stdout) as { report: { results: { commit: string; status: string; method: string | null; ownershipId: string | null }[] } })
    .report;
  expect(report.results.find((r) => r.commit === landedCopy)).toMatchObject({ status: 'inferred', method: 'patch_id', ownershipId: bound.ownershipId });
  expectNothingRan('od-worktree landings scan');

  const rebuild = await runCli(['admin', 'rebuild-projection', '--check', '--json', '--ownership', bound.ownershipId], {
    cwd: hr.repoRoot,
    env: cliEnv({ DATABASE_URL: process.env.OD_TEST_DATABASE_URL! }),
  });
  expect(rebuild.code).toBe(0);
  expectNothingRan('od-worktree admin rebuild-projection');

  const snap = await runCli(['snapshot', '--json'], {
    cwd: wt(3).path,
    env: cliEnv(
      withTenureSecret(wt(3).path, {
        OVERDECK_EXECUTION_SESSION_ID: 'hostile-scan',
        OVERDECK_EPOCH: '1',
        OD_ALLOWED_ROOTS: process.env.OD_TEST_TMP!,
      }) as Record<string, string>,
    ),
  });
  expect({ code: snap.code, stderr: snap.stderr }).toEqual({ code: 0, stderr: '' });
  const saved = (JSON.parse(snap.stdout) as { snapshot: { ref: string; sha: string } }).snapshot;
  expect(hr.agentGit(hr.repoRoot, null, 'cat-file', 'blob', `${saved.sha}:snap.txt`)).toBe('snapshot me');
  expectNothingRan('od-worktree snapshot');
});
