import type { z } from 'zod';
import { EXIT } from '../../src/cli/exit-codes';
import { ClaimOutputSchema, CliErrorSchema, HistoryOutputSchema, OwnershipOutputSchema } from '../../src/contract/cli-output';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { runCli, type CliResult } from '../support/cli';

/**
 * The lifecycle a person drives from a terminal: handoff, accept, cancel-handoff, reclaim (forced by
 * an admin) and submit, the real od-worktree binary against the real API server on real Temporal,
 * PostgreSQL and git. --json is parsed with the contract's schemas; refusals carry the API's codes.
 */

let s: ApiStack;
let repo: RepoFixture;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(3);
});
afterAll(async () => s?.stop());

function cli(args: string[], o: { token?: string; cwd?: string; url?: string } = {}): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, OD_API_URL: o.url ?? s.url, OD_TOKEN: o.token ?? s.tokens.executor };
  delete env.OVERDECK_EXECUTION_SESSION_ID;
  delete env.OVERDECK_EPOCH;
  for (const k of Object.keys(env)) if (k.startsWith('GIT_')) delete env[k];
  return runCli(args, { cwd: o.cwd ?? repo.repoRoot, env });
}

function parsed<S extends z.ZodType>(r: CliResult, schema: S): z.output<S> {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: EXIT.ok, stderr: '' });
  return schema.parse(JSON.parse(r.stdout));
}

/** A --json refusal: the code on stdout, one line on stderr, the exit code. */
function refused(r: CliResult): { exit: number; code: string; lines: number } {
  return { exit: r.code, code: CliErrorSchema.parse(JSON.parse(r.stdout)).code, lines: r.stderr.trim().split('\n').length };
}

const bind = (i: number, session: string) =>
  s
    .api(s.tokens.executor)
    .bind({ repoRoot: repo.repoRoot, worktreePath: repo.worktrees[i]!.path, branch: repo.worktrees[i]!.branch, executionSessionId: session });

test('bad input is a usage error (exit 2) that sends nothing: the service is not even reachable', async () => {
  const down = { url: 'http://127.0.0.1:1' };
  const own = ['--ownership', 'own_01ARZ3NDEKTSV4RRFFQ69G5FAV'];
  const runs = await Promise.all([
    cli(['handoff', ...own, '--session', 'a', '--epoch', '1', '--json'], down),
    cli(['handoff', ...own, '--session', 'a', '--epoch', '1', '--to', 'has spaces', '--json'], down),
    cli(['accept', ...own, '--json'], down),
    cli(['reclaim', ...own, '--session', 'r', '--force', '--json'], down),
    cli(['submit', ...own, '--session', 'a', '--epoch', '1', '--head', 'no-such-rev', '--json'], { ...down, cwd: repo.worktrees[0]!.path }),
  ]);
  expect(runs.map(refused)).toEqual(runs.map(() => ({ exit: EXIT.usage, code: 'usage', lines: 1 })));
});

test('handoff to a session of another worker; it accepts; the old owner is refused from then on', async () => {
  const bound = await bind(0, 'a-1');
  const id = bound.ownershipId;

  const started = parsed(
    await cli(['handoff', '--worktree', bound.worktreePath, '--session', 'a-1', '--epoch', '1', '--to', 'b-1', '--to-worker', s.otherWorkerId, '--json']),
    OwnershipOutputSchema,
  );
  expect(started.ownership).toMatchObject({ ownershipId: id, state: 'handoff_pending', epoch: 1, owner: { executionSessionId: 'a-1' } });
  expect(started.ownership.handoff).toMatchObject({ toExecutionSessionId: 'b-1', toWorkerId: s.otherWorkerId });

  // Only the named worker's executor may accept; the pending handoff is found without naming it.
  const [wrongWorker, accepted] = [
    await cli(['accept', '--ownership', id, '--session', 'b-1', '--json']),
    await cli(['accept', '--ownership', id, '--session', 'b-1', '--json'], { token: s.tokens.otherExecutor }),
  ];
  expect(refused(wrongWorker)).toEqual({ exit: EXIT.refused, code: 'handoff_mismatch', lines: 1 });
  const claim = parsed(accepted, ClaimOutputSchema);
  expect(claim.ownership).toMatchObject({ ownershipId: id, state: 'active', epoch: 2, owner: { executionSessionId: 'b-1' }, handoff: null });
  expect(claim.ownership.lineage.at(-1)).toMatchObject({
    via: 'handoff',
    epoch: 2,
    previousExecutionSessionId: 'a-1',
    handoffId: started.ownership.handoff!.handoffId,
  });
  expect(claim.tenure).toMatchObject({ executionSessionId: 'b-1', epoch: 2, env: { OVERDECK_EXECUTION_SESSION_ID: 'b-1', OVERDECK_EPOCH: '2' } });

  // The old owner, with its old tenure: refused with the API's code, in JSON and for a person.
  const [asJson, asText] = await Promise.all([
    cli(['submit', '--ownership', id, '--session', 'a-1', '--epoch', '1', '--json']),
    cli(['cancel-handoff', '--ownership', id, '--session', 'a-1', '--epoch', '1']),
  ]);
  expect(refused(asJson)).toEqual({ exit: EXIT.refused, code: 'worker_mismatch', lines: 1 });
  expect({ exit: asText.code, stdout: asText.stdout }).toEqual({ exit: EXIT.refused, stdout: '' });
  expect(asText.stderr).toMatch(/^od-worktree: worker_mismatch: an executor may act only for its own worker\n$/);
  expect((await s.api(s.tokens.admin).ownership(id)).owner?.executionSessionId).toBe('b-1');
});

test('cancel-handoff: the owner keeps it; an accept afterwards finds nothing pending', async () => {
  const bound = await bind(1, 'c-1');
  const id = bound.ownershipId;
  const text = await cli(['handoff', '--session', 'c-1', '--epoch', '1', '--to', 'c-2', '--reason', 'lunch'], { cwd: bound.worktreePath });
  expect(text.code).toBe(EXIT.ok);
  const handoffId = (await s.api(s.tokens.admin).ownership(id)).handoff!.handoffId;
  expect(text.stdout).toContain(`handoff ${handoffId} of ${bound.worktreePath} to session c-2 pending until `);
  expect(text.stdout).toContain(`the successor accepts with: od-worktree accept --ownership ${id} --handoff ${handoffId} --session c-2`);

  const cancelled = parsed(await cli(['cancel-handoff', '--session', 'c-1', '--epoch', '1', '--json'], { cwd: bound.worktreePath }), OwnershipOutputSchema);
  expect(cancelled.ownership).toMatchObject({ ownershipId: id, state: 'active', epoch: 1, handoff: null, owner: { executionSessionId: 'c-1' } });

  const [found, named] = await Promise.all([
    cli(['accept', '--ownership', id, '--session', 'c-2', '--json']),
    cli(['accept', '--ownership', id, '--session', 'c-2', '--handoff', handoffId, '--json']),
  ]);
  expect(refused(found)).toEqual({ exit: EXIT.refused, code: 'no_pending_handoff', lines: 1 });
  expect(refused(named)).toEqual({ exit: EXIT.refused, code: 'no_pending_handoff', lines: 1 });
});

test('submit records the head named as a revision of the worktree', async () => {
  const wt = repo.worktrees[1]!.path;
  const head = git(wt, 'rev-parse', 'HEAD');
  const out = parsed(await cli(['submit', '--session', 'c-1', '--epoch', '1', '--head', 'HEAD', '--json'], { cwd: wt }), OwnershipOutputSchema);
  expect(out.ownership).toMatchObject({ state: 'submitted', epoch: 1, submitted: { head } });
  const again = await cli(['submit', '--session', 'c-1', '--epoch', '2', '--json'], { cwd: wt });
  expect(refused(again)).toEqual({ exit: EXIT.refused, code: 'stale_epoch', lines: 1 });
});

test('reclaim: refused while the owner is alive; an executor may not force; an admin forces it with a reason kept in history', async () => {
  const bound = await bind(2, 'd-1');
  const id = bound.ownershipId;
  const on = ['--ownership', id];
  const [alive, aliveText, notAdmin] = await Promise.all([
    cli(['reclaim', ...on, '--session', 'd-2', '--json']),
    cli(['reclaim', ...on, '--session', 'd-2']),
    cli(['reclaim', ...on, '--session', 'd-2', '--force', '--reason', 'mine now', '--json']),
  ]);
  expect(refused(alive)).toEqual({ exit: EXIT.refused, code: 'owner_alive', lines: 1 });
  expect(aliveText.stderr).toBe('od-worktree: owner_alive: the owner session is alive; reclaim refused\n');
  expect(refused(notAdmin)).toEqual({ exit: EXIT.refused, code: 'force_requires_admin', lines: 1 });

  const reason = 'owner wedged in a loop';
  const forced = parsed(
    await cli(['reclaim', ...on, '--session', 'd-admin', '--worker', s.workerId, '--force', '--reason', reason, '--json'], { token: s.tokens.admin }),
    ClaimOutputSchema,
  );
  expect(forced.ownership).toMatchObject({ state: 'active', epoch: 2, owner: { executionSessionId: 'd-admin' } });
  expect(forced.ownership.lineage.at(-1)).toMatchObject({ via: 'forced_reclaim', epoch: 2, previousExecutionSessionId: 'd-1' });
  expect(forced.tenure).toMatchObject({ executionSessionId: 'd-admin', epoch: 2 });

  const history = parsed(await cli(['history', bound.worktreePath, '--json'], { token: s.tokens.admin }), HistoryOutputSchema);
  const entry = history.ownerships.find((o) => o.ownershipId === id)!;
  expect(entry.lineage.at(-1)).toMatchObject({ via: 'forced_reclaim', epoch: 2 });
  const events = entry.events;
  expect(events.find((e) => e.type === 'ownership.reclaimed')).toMatchObject({ data: { forced: true, reason, previousOwner: { executionSessionId: 'd-1' } } });
});
