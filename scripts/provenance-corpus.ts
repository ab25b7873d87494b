import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Pool } from 'pg';
import type { OwnershipClient, OwnershipView } from '../src/client';
import type { Principal } from '../src/domain/identity';
import { cleanGitEnv } from '../src/git/exec';
import { installHooks } from '../src/git/guard';
import { recordLandedCommits } from '../src/provenance/landing-commits';
import { scanLandings } from '../src/landings/scan';
import { shipJournal } from '../src/provenance/attributions';
import { provenance } from '../src/provenance/provenance';
import type { Tenure } from '../src/domain/tenure';

/**
 * The provenance corpus and its score (docs/provenance.md#the-score): a real repository where owned
 * worktrees land in every style, a third of the landings sending no receipt; then `landings scan`
 * and, for every commit that landed (and every pre-land commit a landing brought), provenance's
 * authors against the truth the generator kept: the ownership and the session that made it.
 * A commit is correct when the authors name exactly the expected (ownership, session) pairs,
 * unknown when they name none, wrong otherwise. precision = correct / (correct + wrong),
 * recall = correct / all.
 */

export const STYLES = [
  'merge',
  'squash',
  'rebase',
  'fast_forward',
  'cherry_pick_x',
  'cherry_pick',
  'merge_queue',
  'autosquash',
  'amend_after_handoff',
  'revert',
  'force_push',
] as const;
export type Style = (typeof STYLES)[number];

export interface CorpusDeps {
  client: OwnershipClient;
  pool: Pool;
  hostId: string;
  allowedRoots: string[];
  /** a directory under the allowed roots for the repository */
  dir: string;
  /** The secret the API would answer for a tenure (the stack's service key): what each session runs git with. */
  tenureSecret: (t: Tenure) => string;
  log?: (line: string) => void;
}

interface Truth {
  style: Style;
  receipt: boolean;
  /** "ownershipId session" pairs */
  expected: string[];
}

export interface StyleScore {
  style: Style;
  receipt: boolean;
  commits: number;
  correct: number;
  wrong: number;
  unknown: number;
  precision: number;
  recall: number;
}

export interface CorpusScore {
  landings: number;
  landedCommits: number;
  scored: number;
  rows: StyleScore[];
  wrong: { sha: string; style: Style; expected: string[]; got: string[] }[];
}

const IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' };
const lander: Principal = { kind: 'landing', id: 'corpus-lander' };
const executor = (workerId: string): Principal => ({ kind: 'executor', id: `exec-${workerId}`, workerId });

function gitIn(cwd: string, env: Record<string, string>, ...args: string[]): string {
  const base = cleanGitEnv(IDENTITY);
  delete base.OVERDECK_EXECUTION_SESSION_ID;
  delete base.OVERDECK_EPOCH;
  return execFileSync('git', args, { cwd, env: { ...base, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

interface Owned {
  ownershipId: string;
  path: string;
  branch: string;
  session: string;
  epoch: number;
  ref: { repoRoot: string; worktreePath: string };
}

export async function buildAndScore(deps: CorpusDeps, opts: { rounds: number }): Promise<CorpusScore> {
  const log = deps.log ?? (() => undefined);
  const repoRoot = path.join(deps.dir, 'corpus');
  mkdirSync(repoRoot, { recursive: true });
  gitIn(repoRoot, {}, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(repoRoot, 'README.md'), '# corpus\n');
  writeFileSync(path.join(repoRoot, '.gitignore'), '/wt/\n');
  gitIn(repoRoot, {}, 'add', '.');
  gitIn(repoRoot, {}, 'commit', '-q', '-m', 'initial');
  await installHooks(repoRoot);
  const root = await deps.client.normalize(repoRoot);
  const main = (...args: string[]) => gitIn(repoRoot, {}, ...args);
  const head = () => main('rev-parse', 'HEAD');
  const truth = new Map<string, Truth>();
  const expect = (sha: string, style: Style, receipt: boolean, ...owners: Owned[]) =>
    truth.set(sha, { style, receipt, expected: owners.map((o) => `${o.ownershipId} ${o.session}`).sort() });
  let n = 0;
  let landings = 0;
  let landedCommits = 0;

  const waitView = async (ref: Owned['ref'], pred: (v: OwnershipView) => boolean) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const v = await deps.client.projection(ref);
      if (v && pred(v)) return v;
      if (Date.now() > deadline) throw new Error(`corpus: projection not caught up (${v?.state})`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const caughtUp = (v: OwnershipView) => v.projectionSync.localSeq >= v.seq && v.projectionSync.error === null;

  const open = async (tag: string): Promise<Owned> => {
    n++;
    const branch = `wt/${tag}-${n}`;
    const wt = path.join(repoRoot, 'wt', `${tag}-${n}`);
    main('worktree', 'add', '-q', '-b', branch, wt, 'main');
    const ref = { repoRoot: root, worktreePath: await deps.client.normalize(wt) };
    const session = `corpus-${tag}-${n}`;
    const view = await deps.client.bind({
      ...ref,
      branch,
      executionSessionId: session,
      runtime: 'codex-cli',
      worker: { runId: null, workerId: `corpus-w${n}` },
      principal: executor(`corpus-w${n}`),
    });
    await waitView(ref, caughtUp);
    return { ownershipId: view.ownershipId, path: ref.worktreePath, branch, session, epoch: view.epoch, ref };
  };
  /** The environment a session runs git with: its id, epoch and tenure secret (docs/agent-gate.md). */
  const as = (o: Owned): Record<string, string> => ({
    OVERDECK_EXECUTION_SESSION_ID: o.session,
    OVERDECK_EPOCH: String(o.epoch),
    OVERDECK_TENURE_SECRET: deps.tenureSecret({ ownershipId: o.ownershipId, epoch: o.epoch, executionSessionId: o.session }),
  });
  const work = (o: Owned, file: string, message = file): string => {
    writeFileSync(path.join(o.path, file), `${o.branch} ${file} ${Math.random()}\n`);
    const env = as(o);
    gitIn(o.path, env, 'add', file);
    gitIn(o.path, env, 'commit', '-q', '-m', message);
    return gitIn(o.path, env, 'rev-parse', 'HEAD');
  };
  /** The landing's end: a receipt (and, every other one, worktree removal and branch deletion) or none. */
  const finish = async (o: Owned, receipt: boolean, sourceHead: string, landedHead: string, remove: boolean) => {
    landings++;
    if (!receipt) {
      // Stands in for the host agent's 5 s pass (no projection write follows these commits).
      await shipJournal(deps.pool, o.path, { hostId: deps.hostId, allowedRoots: deps.allowedRoots });
      return;
    }
    await deps.client.landed(o.ref, { sourceHead, landedBranch: 'main', landedHead, landedAt: new Date().toISOString(), principal: lander });
    await waitView(o.ref, (v) => v.state === 'landed' && caughtUp(v));
    // What the host agent does after the landed projection write, done here so that removal cannot overtake it.
    await shipJournal(deps.pool, o.path, { hostId: deps.hostId, allowedRoots: deps.allowedRoots });
    await recordLandedCommits(deps.pool, o.path, root, { ownershipId: o.ownershipId, sourceHead, landedHead });
    if (remove) {
      main('worktree', 'remove', '--force', o.path);
      main('branch', '-D', o.branch);
      await deps.client.worktreeRemoved(o.ref, { principal: { kind: 'system', id: 'corpus' } });
    }
  };

  let i = 0;
  for (let round = 0; round < opts.rounds; round++) {
    for (const style of STYLES) {
      const receipt = i % 3 !== 2;
      const remove = receipt && i % 2 === 0;
      i++;
      if (style === 'merge') {
        const o = await open('merge');
        const c = [work(o, 'm1'), work(o, 'm2')];
        main('merge', '-q', '--no-ff', '-m', `merge ${o.branch}`, o.branch);
        const l = head();
        for (const x of [...c, l]) expect(x, style, receipt, o);
        landedCommits += 3;
        await finish(o, receipt, c[1]!, l, remove);
      } else if (style === 'squash' || style === 'force_push') {
        const o = await open(style);
        const c1 = work(o, 's1');
        let c2 = work(o, 's2');
        if (style === 'force_push') {
          // The source branch rewritten before landing: s2 replaced by s2b.
          gitIn(o.path, as(o), 'reset', '-q', '--hard', 'HEAD~1');
          c2 = work(o, 's2b');
        }
        main('merge', '-q', '--squash', o.branch);
        main('commit', '-q', '-m', `squash ${o.branch}`);
        const l = head();
        for (const x of [c1, c2, l]) expect(x, style, receipt, o);
        landedCommits += 1;
        await finish(o, receipt, c2, l, remove);
      } else if (style === 'rebase') {
        const o = await open('rebase');
        const c = [work(o, 'r1'), work(o, 'r2')];
        // main moves on meanwhile (a commit nobody owns), so the rebase rewrites
        writeFileSync(path.join(repoRoot, `direct-${n}.txt`), 'direct\n');
        main('add', `direct-${n}.txt`);
        main('commit', '-q', '-m', 'direct on main');
        gitIn(o.path, as(o), 'rebase', '-q', 'main');
        const copies = [gitIn(o.path, {}, 'rev-parse', 'HEAD~1'), gitIn(o.path, {}, 'rev-parse', 'HEAD')];
        main('merge', '-q', '--ff-only', o.branch);
        for (const x of [...c, ...copies]) expect(x, style, receipt, o);
        landedCommits += 2;
        await finish(o, receipt, c[1]!, copies[1]!, remove);
      } else if (style === 'fast_forward') {
        const o = await open('ff');
        const c = [work(o, 'f1'), work(o, 'f2')];
        main('merge', '-q', '--ff-only', o.branch);
        for (const x of c) expect(x, style, receipt, o);
        landedCommits += 2;
        await finish(o, receipt, c[1]!, c[1]!, remove);
      } else if (style === 'cherry_pick_x' || style === 'cherry_pick') {
        const o = await open(style === 'cherry_pick' ? 'pick' : 'pickx');
        const c = work(o, 'p1');
        main('cherry-pick', ...(style === 'cherry_pick_x' ? ['-x'] : []), c);
        const l = head();
        for (const x of [c, l]) expect(x, style, receipt, o);
        landedCommits += 1;
        await finish(o, receipt, c, l, remove);
      } else if (style === 'merge_queue') {
        const batch = [await open('queue'), await open('queue'), await open('queue')];
        const tips = batch.map((o) => {
          const c = work(o, `q-${o.branch.slice('wt/'.length)}`);
          expect(c, style, receipt, o);
          return c;
        });
        main('merge', '-q', '--no-ff', '-m', 'merge queue batch', ...batch.map((o) => o.branch));
        const l = head();
        expect(l, style, receipt, ...batch);
        landedCommits += 4;
        for (const [k, o] of batch.entries()) await finish(o, receipt, tips[k]!, l, remove);
        landings -= 2;
      } else if (style === 'autosquash') {
        const o = await open('fixup');
        work(o, 'a1', 'a1');
        work(o, 'a1', 'fixup! a1');
        work(o, 'a2', 'a2');
        const base = main('rev-parse', 'HEAD');
        gitIn(o.path, { ...as(o), GIT_SEQUENCE_EDITOR: 'true' }, 'rebase', '-q', '-i', '--autosquash', base);
        const c = [gitIn(o.path, {}, 'rev-parse', 'HEAD~1'), gitIn(o.path, {}, 'rev-parse', 'HEAD')];
        main('merge', '-q', '--ff-only', o.branch);
        for (const x of c) expect(x, style, receipt, o);
        landedCommits += 2;
        await finish(o, receipt, c[1]!, c[1]!, remove);
      } else if (style === 'amend_after_handoff') {
        const a = await open('amend');
        work(a, 'h1');
        const started = await deps.client.handoff(a.ref, {
          executionSessionId: a.session,
          epoch: 1,
          principal: executor(`corpus-w${n}`),
          toExecutionSessionId: `${a.session}-b`,
          toWorkerId: `corpus-w${n}`,
        });
        await deps.client.acceptHandoff(a.ref, {
          handoffId: started.handoff!.handoffId,
          executionSessionId: `${a.session}-b`,
          runtime: 'codex-cli',
          parentExecutionSessionId: a.session,
          worker: { runId: null, workerId: `corpus-w${n}` },
          principal: executor(`corpus-w${n}`),
        });
        await waitView(a.ref, (v) => v.epoch === 2 && caughtUp(v));
        const b: Owned = { ...a, session: `${a.session}-b`, epoch: 2 };
        writeFileSync(path.join(b.path, 'h1'), `amended ${Math.random()}\n`);
        gitIn(b.path, as(b), 'commit', '-q', '-a', '--amend', '-m', 'h1 amended');
        const amended = gitIn(b.path, {}, 'rev-parse', 'HEAD');
        main('merge', '-q', '--squash', b.branch);
        main('commit', '-q', '-m', `squash ${b.branch}`);
        const l = head();
        for (const x of [amended, l]) expect(x, style, receipt, b);
        landedCommits += 1;
        await finish(b, receipt, amended, l, remove);
      } else if (style === 'revert') {
        const o = await open('revert');
        const target = main('rev-list', '--no-merges', '--max-count=1', 'HEAD', '--', '.', ':!README.md');
        gitIn(o.path, as(o), 'revert', '--no-edit', target);
        const r = gitIn(o.path, {}, 'rev-parse', 'HEAD');
        main('merge', '-q', '--ff-only', o.branch);
        expect(r, style, receipt, o);
        landedCommits += 1;
        await finish(o, receipt, r, r, remove);
      }
    }
    log(`round ${round + 1}/${opts.rounds}: ${landings} landings, ${landedCommits} landed commits`);
  }

  const scan = await scanLandings(deps.pool, { repo: repoRoot, branch: 'main', limit: 20_000 });
  log(`scan: ${scan.scanned} commits, ${scan.inferred} inferred, ${scan.ambiguous} ambiguous`);

  const tally = new Map<string, StyleScore>();
  const wrong: CorpusScore['wrong'] = [];
  let scored = 0;
  for (const [sha, t] of truth) {
    if (++scored % 200 === 0) log(`scored ${scored}/${truth.size}`);
    const p = await provenance(deps.pool, repoRoot, sha);
    const got = [
      ...new Set((p?.authors ?? []).filter((a) => a.via !== 'unknown' && a.ownershipId !== null).map((a) => `${a.ownershipId} ${a.executionSessionId}`)),
    ].sort();
    const key = `${t.style}|${t.receipt}`;
    const row = tally.get(key) ?? { style: t.style, receipt: t.receipt, commits: 0, correct: 0, wrong: 0, unknown: 0, precision: 1, recall: 0 };
    row.commits++;
    if (got.length === 0) row.unknown++;
    else if (got.join('|') === t.expected.join('|')) row.correct++;
    else {
      row.wrong++;
      wrong.push({ sha, style: t.style, expected: t.expected, got });
    }
    tally.set(key, row);
  }
  const rows = [...tally.values()].map((r) => ({
    ...r,
    precision: r.correct + r.wrong === 0 ? 1 : r.correct / (r.correct + r.wrong),
    recall: r.correct / r.commits,
  }));
  rows.sort((a, b) => STYLES.indexOf(a.style) - STYLES.indexOf(b.style) || Number(b.receipt) - Number(a.receipt));
  return { landings, landedCommits, scored: truth.size, rows, wrong };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

export function renderScore(s: CorpusScore): string {
  const lines = [
    `${s.landings} landings, ${s.landedCommits} landed commits; ${s.scored} commits scored (landed ones and the pre-land commits a landing brought)`,
    '',
    '| style | receipt | commits | correct | unknown | wrong | precision | recall |',
    '|---|---|---|---|---|---|---|---|',
    ...s.rows.map(
      (r) => `| ${r.style} | ${r.receipt ? 'yes' : 'no'} | ${r.commits} | ${r.correct} | ${r.unknown} | ${r.wrong} | ${pct(r.precision)} | ${pct(r.recall)} |`,
    ),
  ];
  return lines.join('\n');
}
