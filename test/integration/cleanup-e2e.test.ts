import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { z } from 'zod';
import type { OwnershipViewOut } from '../../src/contract/http';
import { HistoryOutputSchema } from '../../src/contract/cli-output';
import { GcOutputSchema, RemoveOutputSchema, type RemovalResult } from '../../src/contract/removal';
import { RestoreOutputSchema } from '../../src/contract/restore';
import { EXIT } from '../../src/cli/exit-codes';
import { git, GIT_IDENTITY } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';
import { runCli, type CliResult } from '../support/cli';

/**
 * Lossless cleanup end to end (docs/cleanup.md, docs/restore.md, issue 28): the real od-worktree
 * binary against the real API on real Temporal, PostgreSQL and git. Worktrees whose ownership
 * ended by a landing (merge, squash, rebase), a release or a reclaim are removed with their
 * uncommitted work kept in a snapshot the receipt names, the removal is recorded with the service,
 * and `restore <path>` brings each back byte for byte with no owner; every unsafe case is refused
 * with its code and changes nothing; `gc` over 50+ worktrees in mixed states removes exactly what
 * its dry run said and never a held one.
 */

let s: ApiStack;
let root: string;
const timings: Record<string, number> = {};
const t0 = Date.now();

async function timed<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const start = Date.now();
  try {
    return await fn();
  } finally {
    timings[name] = (timings[name] ?? 0) + (Date.now() - start);
  }
}

beforeAll(async () => {
  s = await timed('stack', () => startApiStack());
  root = mkdtempSync(path.join(process.env.OD_TEST_TMP ?? os.tmpdir(), 'cleanup-e2e-'));
});
afterAll(async () => {
  console.log(
    `cleanup-e2e timings (ms): ${Object.entries(timings)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}; whole file ${Date.now() - t0}`,
  );
  await s?.stop();
});

// ---------------------------------------------------------------- helpers

function cli(args: string[], o: { token?: string; cwd: string; env?: Record<string, string> }): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, OD_API_URL: s.url, OD_ALLOWED_ROOTS: process.env.OD_TEST_TMP ?? os.tmpdir() };
  for (const k of Object.keys(env)) if (k.startsWith('GIT_') || k.startsWith('OVERDECK_')) delete env[k];
  delete env.OD_TOKEN;
  if (o.token) env.OD_TOKEN = o.token;
  Object.assign(env, o.env ?? {});
  return runCli(args, { cwd: o.cwd, env });
}

function parsed<S extends z.ZodType>(r: CliResult, schema: S, code: number = EXIT.ok): z.output<S> {
  expect({ code: r.code, stderr: r.code === code ? '' : r.stderr, stdout: r.code === code ? '' : r.stdout }).toEqual({ code, stderr: '', stdout: '' });
  return schema.parse(JSON.parse(r.stdout));
}

/** One bash script (a loop of git commands costs one process, not one per command). */
function sh(cwd: string, script: string): string {
  return execFileSync('bash', ['-euo', 'pipefail', '-c', script], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...GIT_IDENTITY },
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

function newRepo(name: string): string {
  const repo = path.join(root, name);
  sh(
    root,
    `git init -q -b main ${name} && cd ${name} && printf '# product\\n' > README.md && printf 'base\\n' > base.txt && git add . && git commit -q -m initial`,
  );
  writeFileSync(path.join(repo, '.git', 'info', 'exclude'), '.worktrees/\n');
  return repo;
}

/** Every file of a worktree (its `.git` aside): the sha-256 of its bytes and its mode, a symlink's target. */
function files(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (r === '.git') continue;
      const full = path.join(dir, r);
      const st = lstatSync(full);
      if (st.isSymbolicLink()) out[r] = `link ${readlinkSync(full)}`;
      else if (st.isDirectory()) walk(r);
      else out[r] = `${(st.mode & 0o7777).toString(8)} ${createHash('sha256').update(readFileSync(full)).digest('hex')}`;
    }
  };
  walk('');
  return out;
}

/** What a worktree holds: files, the index's entries (mode, blob, stage, path), HEAD and its branch. */
function worktreeState(wt: string) {
  return {
    files: files(wt),
    index: git(wt, 'ls-files', '-s'),
    head: git(wt, 'rev-parse', 'HEAD'),
    branch: git(wt, 'symbolic-ref', '-q', 'HEAD'),
  };
}

const refs = (repo: string) => git(repo, 'for-each-ref', '--format=%(objectname) %(refname)');
const worktreeList = (repo: string) => git(repo, 'worktree', 'list', '--porcelain');

/** Uncommitted work of every kind: a modified tracked file, a staged file modified again, a deleted file, an untracked binary, an executable, a symlink. */
function makeDirty(wt: string, tag: string): void {
  writeFileSync(path.join(wt, 'README.md'), `# product\nedited in ${tag}\n`);
  writeFileSync(path.join(wt, `staged-${tag}.txt`), 'staged\n');
  git(wt, 'add', `staged-${tag}.txt`);
  writeFileSync(path.join(wt, `staged-${tag}.txt`), 'staged, then changed on disk\n');
  rmSync(path.join(wt, 'base.txt'));
  mkdirSync(path.join(wt, 'notes'), { recursive: true });
  writeFileSync(path.join(wt, 'notes', `${tag}.bin`), randomBytes(4096));
  writeFileSync(path.join(wt, `run-${tag}.sh`), '#!/bin/sh\necho hi\n');
  chmodSync(path.join(wt, `run-${tag}.sh`), 0o755);
  symlinkSync('README.md', path.join(wt, `link-${tag}`));
}

async function pool<T, R>(items: readonly T[], n: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

/** The worktree's local projection has caught up with the ownership (what the hooks and the CLI read offline). */
async function settled(id: string): Promise<OwnershipViewOut> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = (await s.api(s.tokens.admin).ownership(id)) as OwnershipViewOut;
    if (v.projectionSync && v.projectionSync.localSeq >= v.seq && v.projectionSync.error === null) return v;
    if (Date.now() > deadline) throw new Error(`projection of ${id} not caught up: ${v.state} ${JSON.stringify(v.projectionSync)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const bind = async (repo: string, wt: string, session: string) =>
  s.api(s.tokens.executor).bind({ repoRoot: repo, worktreePath: wt, executionSessionId: session, worker: { workerId: s.workerId } });

const landedAt = () => new Date().toISOString();

// ---------------------------------------------------------------- 1-3: each ending, each refusal, each restore

interface Removed {
  name: string;
  wt: string;
  ownershipId: string;
  before: ReturnType<typeof worktreeState>;
  result: RemovalResult;
}

let repoA = '';
const removed: Removed[] = [];

test('worktrees whose ownership ended each way are removed with nothing lost, the receipt says where, the service records it', async () => {
  repoA = newRepo('a');
  const names = ['merge', 'squash', 'rebase', 'released', 'reclaimed'] as const;
  const wt = (n: string) => path.join(repoA, '.worktrees', n);
  sh(repoA, names.map((n) => `git worktree add -q -b wt/${n} .worktrees/${n} main`).join(' && '));
  const own = Object.fromEntries(await timed('bind', () => pool(names, 5, async (n) => [n, await bind(repoA, wt(n), `s-${n}`)] as const)));

  // Two commits on each landing branch, main moved on meanwhile (a squash and a rebase are no fast-forward).
  for (const n of ['merge', 'squash', 'rebase'])
    sh(wt(n), `for i in 1 2; do echo "${n} $i" > ${n}-$i.txt; git add ${n}-$i.txt; git commit -q -m "${n} $i"; done`);
  sh(repoA, `echo moved > main.txt && git add main.txt && git commit -q -m 'main moves'`);
  const tips = Object.fromEntries(['merge', 'squash', 'rebase'].map((n) => [n, git(wt(n), 'rev-parse', 'HEAD')]));
  sh(repoA, `git merge -q --no-ff -m 'merge wt/merge' wt/merge`);
  const merged = git(repoA, 'rev-parse', 'HEAD');
  sh(repoA, `git merge -q --squash wt/squash && git commit -q -m 'squash of wt/squash'`);
  const squashed = git(repoA, 'rev-parse', 'HEAD');
  sh(repoA, `git cherry-pick main..wt/rebase >/dev/null`);
  const rebased = git(repoA, 'rev-parse', 'HEAD');

  // The landing controller's receipts: by repository and source branch, and by ownership id.
  const landing = s.api(s.tokens.landing);
  await timed('landed', () =>
    Promise.all([
      landing.land({ repoRoot: repoA, sourceBranch: 'wt/merge', sourceHead: tips.merge!, landedBranch: 'main', landedHead: merged, landedAt: landedAt() }),
      landing.landed(own.squash!.ownershipId, { sourceHead: tips.squash!, landedBranch: 'main', landedHead: squashed, landedAt: landedAt() }),
      landing.landed(own.rebase!.ownershipId, { sourceHead: tips.rebase!, landedBranch: 'main', landedHead: rebased, landedAt: landedAt() }),
      s.api(s.tokens.executor).release(own.released!.ownershipId, { executionSessionId: 's-released', epoch: 1 }),
    ]),
  );

  // Reclaimed: its owner's uncommitted work is there when an admin takes the worktree over; the reclaim keeps it; the new owner releases.
  makeDirty(wt('reclaimed'), 'reclaimed');
  const reclaimedFiles = files(wt('reclaimed'));
  const taken = await s
    .api(s.tokens.admin)
    .reclaim(own.reclaimed!.ownershipId, { executionSessionId: 's-reclaimer', force: true, reason: 'owner gone', worker: { workerId: s.workerId } });
  expect(taken).toMatchObject({ state: 'active', epoch: 2 });
  const wipOfReclaim = git(repoA, 'for-each-ref', '--format=%(refname)', `refs/overdeck/wip/${own.reclaimed!.ownershipId}/`);
  expect(wipOfReclaim).not.toBe('');
  expect(files(wt('reclaimed'))).toEqual(reclaimedFiles); // the reclaim left the files as they were
  await s.api(s.tokens.executor).release(own.reclaimed!.ownershipId, { executionSessionId: 's-reclaimer', epoch: 2 });

  for (const n of names) if (n !== 'reclaimed') makeDirty(wt(n), n);
  const views = await Promise.all(names.map((n) => settled(own[n]!.ownershipId)));
  expect(views.map((v) => v.state)).toEqual(['landed', 'landed', 'landed', 'released', 'released']);

  // Removed three at a time (each a CLI process of its own, as people and sweepers run them side by side).
  const befores = Object.fromEntries(names.map((n) => [n, worktreeState(wt(n))]));
  const runs = await timed('remove', () => pool(names, 3, (n) => cli(['remove', wt(n), '--json'], { token: s.tokens.landing, cwd: repoA })));
  for (const [i, n] of names.entries()) {
    const before = befores[n]!;
    const out = parsed(runs[i]!, RemoveOutputSchema);
    const r = out.result;
    expect({ n, status: r.status, service: out.service.status, record: r.record?.status }).toEqual({
      n,
      status: 'removed',
      service: 'used',
      record: 'recorded',
    });
    expect(existsSync(wt(n))).toBe(false);
    // What was kept where: one snapshot under the ownership's WIP refs, holding every changed path.
    const id = own[n]!.ownershipId;
    expect(r.receipt).toMatchObject({ ownershipId: id, head: before.head, branch: `wt/${n}`, snapshotPlanned: false });
    expect(r.receipt!.preserved).toHaveLength(1);
    const kept = r.receipt!.preserved[0]!;
    expect(kept.ref).toMatch(new RegExp(`^refs/overdeck/wip/${id}/tree-`));
    expect(git(repoA, 'rev-parse', kept.ref)).toBe(kept.sha);
    expect(r.facts!.dirtyFiles).toEqual(expect.arrayContaining(['README.md', 'base.txt', `staged-${n}.txt`, `notes/${n}.bin`, `run-${n}.sh`, `link-${n}`]));
    expect(git(repoA, 'rev-parse', `refs/heads/wt/${n}`)).toBe(before.head); // the branch is kept
    removed.push({ name: n, wt: wt(n), ownershipId: id, before, result: r });
  }

  // How each branch's commits were found landed.
  const by = Object.fromEntries(removed.map((x) => [x.name, x.result.receipt!]));
  expect(by.merge!.headLandedOn).toBe('refs/heads/main');
  for (const n of ['squash', 'rebase']) {
    expect(by[n]!.headLandedOn).toBeNull();
    expect(by[n]!.accounted.map((a) => a.sha).sort()).toEqual(git(repoA, 'rev-list', `main..wt/${n}`).split('\n').sort());
  }
  // The reclaim's snapshot of the previous owner's work and the removal's hold the same files.
  expect(git(repoA, 'rev-parse', `${wipOfReclaim.split('\n')[0]!}^{tree}`)).toBe(git(repoA, 'rev-parse', `${by.reclaimed!.preserved[0]!.sha}^{tree}`));

  // The service's history shows each removal, with the receipt's summary.
  const histories = await timed('history', () => pool(removed, 3, (x) => cli(['history', x.wt, '--json'], { token: s.tokens.admin, cwd: repoA })));
  for (const [i, x] of removed.entries()) {
    const h = parsed(histories[i]!, HistoryOutputSchema);
    const entry = h.ownerships.find((o) => o.ownershipId === x.ownershipId)!;
    const ev = entry.events.find((e) => e.type === 'ownership.worktree_removed');
    expect({ n: x.name, reason: (ev?.data as { reason?: string } | undefined)?.reason?.slice(0, 24) }).toEqual({
      n: x.name,
      reason: 'od-worktree remove: head',
    });
    expect((ev!.data as { reason: string }).reason).toContain(x.result.receipt!.preserved[0]!.sha.slice(0, 12));
    // And the receipt itself, structured: the snapshot that holds the files, the head, the branch kept.
    const kept = x.result.receipt!.preserved[0]!;
    expect((ev!.data as { receipt?: unknown }).receipt).toMatchObject({ head: x.before.head, preserved: [{ ref: kept.ref, sha: kept.sha }], branch: 'kept' });
    expect(entry.record.state).toBe('closed');
  }
});

test('each unsafe case is refused with its code, and nothing on disk or in refs changes', async () => {
  const wt = (n: string) => path.join(repoA, '.worktrees', n);
  const names = ['live', 'unlanded', 'dirty', 'snapfail'] as const;
  sh(repoA, names.map((n) => `git worktree add -q -b wt/${n} .worktrees/${n} main`).join(' && '));
  const live = await bind(repoA, wt('live'), 's-live');
  const snap = await bind(repoA, wt('snapfail'), 's-snapfail');
  await s.api(s.tokens.executor).release(snap.ownershipId, { executionSessionId: 's-snapfail', epoch: 1 });
  makeDirty(wt('live'), 'live');
  const unlanded = sh(wt('unlanded'), `echo mine > mine.txt && git add mine.txt && git commit -q -m 'landed nowhere' && git rev-parse HEAD`);
  writeFileSync(path.join(wt('dirty'), 'draft.txt'), 'nobody committed this\n');
  makeDirty(wt('snapfail'), 'snapfail');
  // A real failure of the snapshot: a ref where its namespace must be a directory (git cannot create refs/overdeck/wip/<id>/tree-…).
  git(repoA, 'update-ref', `refs/overdeck/wip/${snap.ownershipId}`, git(repoA, 'rev-parse', 'main'));
  await Promise.all([settled(live.ownershipId), settled(snap.ownershipId)]);

  const expected: Record<(typeof names)[number], string[]> = {
    live: ['owner_alive', 'worktree_owned'],
    unlanded: ['unlanded_commits'],
    dirty: ['dirty_files'],
    snapfail: ['snapshot_failed'],
  };
  for (const n of names) {
    const before = { wt: worktreeState(wt(n)), refs: refs(repoA), list: worktreeList(repoA) };
    const r = await timed('remove', () => cli(['remove', wt(n), '--json'], { token: s.tokens.landing, cwd: repoA }));
    expect({ n, exit: r.code }).toEqual({ n, exit: EXIT.refused });
    const out = RemoveOutputSchema.parse(JSON.parse(r.stdout));
    expect(out.result.status).toBe('refused');
    expect({ n, code: out.result.refusal?.code ?? null }).toEqual({ n, code: expect.stringMatching(new RegExp(`^(${expected[n].join('|')})$`)) });
    if (n === 'unlanded') expect(out.result.refusal!.details).toMatchObject({ count: 1, commits: [unlanded] });
    if (n === 'dirty') expect(out.result.refusal!.details).toMatchObject({ files: ['draft.txt'] });
    if (n === 'snapfail') expect(out.result.refusal!.details).toMatchObject({ detail: 'git_failed' });
    expect({ n, wt: worktreeState(wt(n)), refs: refs(repoA), list: worktreeList(repoA) }).toEqual({ n, ...before });
  }
  git(repoA, 'update-ref', '-d', `refs/overdeck/wip/${snap.ownershipId}`);
});

test('every removed worktree comes back with restore <path>, byte for byte, index and HEAD included, with no owner until bind', async () => {
  expect(removed).toHaveLength(5);
  const runs = await timed('restore', () => pool(removed, 3, (x) => cli(['restore', x.wt, '--json'], { cwd: repoA })));
  for (const [i, x] of removed.entries()) {
    const out = parsed(runs[i]!, RestoreOutputSchema);
    expect(out).toMatchObject({ worktreePath: x.wt, verified: true, owner: null, restored: { index: 'restored' } });
    expect(out.head).toMatchObject({ mode: 'branch', ref: `refs/heads/wt/${x.name}`, sha: x.before.head });
    expect({ n: x.name, ...worktreeState(x.wt) }).toEqual({ n: x.name, ...x.before });
    // No owner: no projection in the worktree, no lock; a bind makes a new ownership at epoch 1.
    expect(() => git(x.wt, 'config', '--worktree', '--get', 'overdeck.owner.ownership-id')).toThrow();
    expect(worktreeList(repoA)).not.toMatch(new RegExp(`worktree ${x.wt}\\n[^\\n]*\\n[^\\n]*\\nlocked`));
    const again = await bind(repoA, x.wt, `s-after-${x.name}`);
    expect(again.ownershipId).not.toBe(x.ownershipId);
    expect(again).toMatchObject({ state: 'active', epoch: 1 });
  }
});

// ---------------------------------------------------------------- 4: gc over 50+ worktrees

test('gc over 51 worktrees in mixed states: the dry run names each verdict and why; --apply removes exactly those, never a held one', async () => {
  const repo = newRepo('b');
  const groups = {
    live: 8, // bound, active (two of them dirty)
    receipt: 5, // bound, squash-landed with a receipt
    merged: 4, // unowned, merged into main
    squashed: 4, // unowned, squash-merged, no receipt
    rebased: 4, // unowned, cherry-picked onto main, no receipt
    released: 6, // bound, released, dirty
    unlanded: 8, // unowned, a commit landed nowhere
    dirty: 6, // unowned, an untracked file
    clean: 6, // unowned, at main
  } as const;
  type Group = keyof typeof groups;
  const all: { name: string; group: Group; wt: string }[] = [];
  for (const [group, n] of Object.entries(groups) as [Group, number][]) {
    for (let i = 0; i < n; i++) all.push({ name: `${group}-${i}`, group, wt: path.join(repo, '.worktrees', `${group}-${i}`) });
  }
  expect(all.length).toBeGreaterThanOrEqual(50);
  const of = (g: Group) => all.filter((w) => w.group === g);

  await timed('gc setup (git)', async () => {
    const lines = all.map((w) => `git worktree add -q -b wt/${w.name} .worktrees/${w.name} main`);
    for (const w of all.filter((x) => ['receipt', 'merged', 'squashed', 'rebased', 'unlanded'].includes(x.group))) {
      lines.push(`(cd .worktrees/${w.name} && echo ${w.name} > ${w.name}.txt && git add ${w.name}.txt && git commit -q -m ${w.name})`);
    }
    lines.push(`echo moved > main.txt && git add main.txt && git commit -q -m 'main moves'`);
    for (const w of of('merged')) lines.push(`git merge -q --no-ff -m 'merge ${w.name}' wt/${w.name}`);
    for (const w of [...of('squashed'), ...of('receipt')]) lines.push(`git merge -q --squash wt/${w.name} && git commit -q -m 'squash ${w.name}'`);
    for (const w of of('rebased')) lines.push(`git cherry-pick wt/${w.name} >/dev/null`);
    sh(repo, lines.join('\n'));
  });
  const bound = new Map<string, string>();
  await timed('gc setup (bind)', () =>
    pool([...of('live'), ...of('receipt'), ...of('released')], 6, async (w) => {
      bound.set(w.name, (await bind(repo, w.wt, `s-${w.name}`)).ownershipId);
    }),
  );
  const main = git(repo, 'rev-parse', 'main');
  const squashOf = (w: { name: string }) => git(repo, 'log', '--format=%H', '-1', `--grep=^squash ${w.name}$`, 'main');
  await timed('gc setup (land, release)', () =>
    pool([...of('receipt'), ...of('released')], 6, async (w) => {
      const id = bound.get(w.name)!;
      if (w.group === 'released') await s.api(s.tokens.executor).release(id, { executionSessionId: `s-${w.name}`, epoch: 1 });
      else
        await s
          .api(s.tokens.landing)
          .landed(id, { sourceHead: git(w.wt, 'rev-parse', 'HEAD'), landedBranch: 'main', landedHead: squashOf(w), landedAt: landedAt() });
    }),
  );
  expect(git(repo, 'rev-parse', 'main')).toBe(main);
  for (const w of [...of('released'), ...of('live').slice(0, 2)]) makeDirty(w.wt, w.name);
  for (const w of of('dirty')) writeFileSync(path.join(w.wt, 'draft.txt'), `${w.name}\n`);
  await timed('gc setup (settle)', () => Promise.all([...bound.values()].map((id) => settled(id))));

  const removable = new Set<Group>(['receipt', 'merged', 'squashed', 'rebased', 'released', 'clean']);
  const stateOf = () => Object.fromEntries(all.filter((w) => existsSync(w.wt)).map((w) => [w.name, worktreeState(w.wt)]));
  const beforeAll = stateOf();
  const refsBefore = refs(repo);

  // The dry run: one row per worktree, its verdict and why.
  const dry = await timed('gc dry run', () => cli(['gc', repo], { token: s.tokens.admin, cwd: repo }));
  expect({ code: dry.code, stderr: dry.stderr }).toEqual({ code: EXIT.ok, stderr: '' });
  const rows = new Map<string, { verdict: string; why: string }>();
  for (const line of dry.stdout.split('\n')) {
    const m = /^\.worktrees\/(\S+)\s+(remove|stays|FAILED)\s+(.*)$/.exec(line);
    if (m) rows.set(m[1]!, { verdict: m[2]!, why: m[3]! });
  }
  expect(rows.size).toBe(all.length);
  const whyOf: Record<Group, RegExp> = {
    live: /^(owner_alive|worktree_owned) \(active, \w+\)$/,
    receipt: /^\d+ receipt$/,
    merged: /^landed on main$/,
    squashed: /^1 squash$|^1 patch_id$/,
    rebased: /^1 patch_id$/,
    released: /^landed on main, \d+ files to snapshot$/,
    unlanded: /^unlanded_commits 1$/,
    dirty: /^dirty_files 1$/,
    clean: /^landed on main$/,
  };
  for (const w of all) {
    const row = rows.get(w.name);
    expect({ w: w.name, verdict: row?.verdict, why: whyOf[w.group].test(row?.why ?? '') ? 'ok' : row?.why }).toEqual({
      w: w.name,
      verdict: removable.has(w.group) ? 'remove' : 'stays',
      why: 'ok',
    });
  }
  expect(dry.stdout).toContain(`ownership state and liveness: local projection and the service at ${s.url}`);
  expect(stateOf()).toEqual(beforeAll); // a dry run changes nothing
  expect(refs(repo)).toBe(refsBefore);

  const applied = parsed(await timed('gc --apply', () => cli(['gc', repo, '--apply', '--json'], { token: s.tokens.admin, cwd: repo })), GcOutputSchema);
  const status = Object.fromEntries(applied.results.map((r) => [path.basename(r.worktree), r.status]));
  const said = Object.fromEntries([...rows].map(([n, r]) => [n, r.verdict === 'remove' ? 'removed' : 'refused']));
  expect(status).toEqual(said);
  for (const w of all) expect({ w: w.name, exists: existsSync(w.wt) }).toEqual({ w: w.name, exists: !removable.has(w.group) });
  for (const r of applied.results.filter((x) => x.status === 'removed' && x.receipt!.ownershipId !== null)) {
    expect({ w: r.worktree, record: r.record?.status }).toEqual({ w: r.worktree, record: 'recorded' });
  }
  for (const w of of('released')) {
    const r = applied.results.find((x) => x.worktree === w.wt)!;
    expect(r.receipt!.preserved.map((p) => p.ref)).toEqual([expect.stringMatching(new RegExp(`^refs/overdeck/wip/${bound.get(w.name)!}/tree-`))]);
  }

  // The survivors are untouched: files, index, HEAD, branch; the only new refs are the removed ones' snapshots.
  const survivors = Object.fromEntries(Object.entries(beforeAll).filter(([n]) => !removable.has(all.find((w) => w.name === n)!.group)));
  expect(stateOf()).toEqual(survivors);
  const kept = new Set(refsBefore.split('\n'));
  const added = refs(repo)
    .split('\n')
    .filter((l) => !kept.has(l));
  expect(refsBefore.split('\n').every((l) => refs(repo).includes(l))).toBe(true);
  const snapshotRefs = applied.results.flatMap((r) => r.receipt?.preserved.map((p) => `${p.sha} ${p.ref}`) ?? []);
  expect(added.sort()).toEqual(snapshotRefs.sort());
  // The live ones are still locked by git (their projection holds them).
  for (const w of of('live')) expect(worktreeList(repo)).toContain(`worktree ${w.wt}\nHEAD ${beforeAll[w.name]!.head}\nbranch refs/heads/wt/${w.name}\nlocked`);
});
