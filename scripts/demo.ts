import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { currentProcessIdentity } from '../src/activities/liveness';
import { ApiClient, ApiError, DEFAULT_API_URL, normalizeApiUrl } from '../src/api/client';
import type { OwnershipViewOut } from '../src/contract/http';
import type { RestoreOutput } from '../src/contract/restore';
import { devSecretFile } from '../src/auth/principals';
import { renderWho } from '../src/cli/render';
import { loadConfig } from '../src/config';
import { installHooks } from '../src/git/guard';

/**
 * `npm run demo`: the whole story against the running service of `npm start` (OD_API_URL, tokens
 * from <OD_DATA_DIR>/dev-principals.json.secret.json or OD_DEMO_TOKENS), in a temporary repository with two
 * worktrees. Prints the `who` view after each step, exits 0, and fails loudly (exit 1) on any answer
 * it did not expect.
 */

const SESSION_A = `demo-a-${Date.now().toString(36)}`;
const SESSION_B = `demo-b-${Date.now().toString(36)}`;
/** A nested agent A starts in its worktree: it writes under a hold of A's tenure. */
const SESSION_CHILD = `demo-a-child-${Date.now().toString(36)}`;
/** Session A's lease: short, so its death is noticed within seconds (a per-owner lease, see leaseTtlMs). */
const LEASE_A_MS = 3_000;
const ROOT = path.resolve(__dirname, '..');

class DemoFailure extends Error {}

function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new DemoFailure(`unexpected: ${what}`);
}

const say = (s = '') => process.stdout.write(`${s}\n`);
let stepNo = 0;
function step(title: string): void {
  stepNo++;
  say('');
  say(`=== ${stepNo}. ${title} ${'='.repeat(Math.max(3, 72 - title.length))}`);
}

async function refused(p: Promise<unknown>, code: string): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  check(err instanceof ApiError, `expected a refusal ${code}, got ${err === null ? 'success' : String(err)}`);
  check(err.code === code, `expected refusal ${code}, got ${err.code} (${err.message})`);
  return err;
}

async function poll<T>(what: string, fn: () => Promise<T>, ok: (x: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const x = await fn();
    if (ok(x)) return x;
    if (Date.now() > deadline) throw new DemoFailure(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function sh(cwd: string, args: string[], env: Record<string, string> = {}): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'demo',
      GIT_AUTHOR_EMAIL: 'demo@example.invalid',
      GIT_COMMITTER_NAME: 'demo',
      GIT_COMMITTER_EMAIL: 'demo@example.invalid',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

/**
 * A commit as a session would make it, with the environment its bind, accept or reclaim answered
 * (`tenure.env`: session, epoch and the tenure's secret, which the guard hooks check).
 */
function commitAs(wt: string, env: Readonly<Record<string, string>>, file: string, message: string): { ok: boolean; output: string } {
  try {
    sh(wt, ['add', '-A'], env);
    sh(wt, ['commit', '-q', '-m', message], env);
    return { ok: true, output: `committed ${file} as ${sh(wt, ['rev-parse', '--short', 'HEAD'])}` };
  } catch (err) {
    const e = err as { stderr?: string };
    return { ok: false, output: (e.stderr ?? String(err)).trim() };
  }
}

/** The temporary repository: under an allowed root (the service refuses anything else). */
function makeRepo(allowedRoots: string[]): { repoRoot: string; a: { path: string; branch: string }; b: { path: string; branch: string } } {
  const tmp = os.tmpdir();
  const base = allowedRoots.find((r) => tmp === r || tmp.startsWith(`${r}/`)) ? tmp : allowedRoots[0];
  check(base, 'OD_ALLOWED_ROOTS is empty');
  const dir = mkdtempSync(path.join(base, 'od-demo-'));
  const repoRoot = path.join(dir, 'product');
  execFileSync('git', ['init', '-q', '-b', 'main', repoRoot]);
  writeFileSync(path.join(repoRoot, 'README.md'), '# product\n');
  sh(repoRoot, ['add', '.']);
  sh(repoRoot, ['commit', '-q', '-m', 'initial']);
  const wt = (name: string) => {
    const p = path.join(repoRoot, '.worktrees', name);
    sh(repoRoot, ['worktree', 'add', '-q', '-b', `wt/${name}`, p]);
    return { path: p, branch: `wt/${name}` };
  };
  const a = wt('feature-a');
  const b = wt('feature-b');
  writeFileSync(path.join(repoRoot, '.git', 'info', 'exclude'), '.worktrees/\n');
  return { repoRoot, a, b };
}

/** Session A's process: a real child that heartbeats until it is killed. Its token comes over stdin, never argv. */
function startSessionProcess(): ChildProcess {
  const script = `
    process.stdin.once('data', (d) => {
      const c = JSON.parse(String(d));
      const beat = () => fetch(c.url, { method: 'POST', headers: { authorization: 'Bearer ' + c.token, 'content-type': 'application/json' },
        body: JSON.stringify({ executionSessionId: c.session, epoch: c.epoch }) }).catch(() => {});
      beat();
      setInterval(beat, 1000);
    });
    setInterval(() => {}, 1 << 30);`;
  return spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'ignore', 'inherit'] });
}

async function main(): Promise<void> {
  const cfg = loadConfig();
  const url = process.env.OD_API_URL ? normalizeApiUrl(process.env.OD_API_URL) : DEFAULT_API_URL;
  // npm start writes the dev principals to <OD_DATA_DIR>/dev-principals.json and their clear tokens beside it.
  const candidates = process.env.OD_DEMO_TOKENS
    ? [process.env.OD_DEMO_TOKENS]
    : [cfg.tokensFile, path.join(cfg.dataDir, 'dev-principals.json'), path.join(cfg.dataDir, 'tokens.json')].filter(Boolean).map(devSecretFile);
  const secretFile = candidates.find((f) => existsSync(f));
  let tokens: { admin: string; landing: string; executor: string };
  try {
    check(secretFile, 'no secret file');
    tokens = (JSON.parse(readFileSync(secretFile, 'utf8')) as { tokens: typeof tokens }).tokens;
  } catch {
    throw new DemoFailure(`no dev tokens at ${candidates.join(' or ')}: start the service with \`npm start\` first (it creates them), or set OD_DEMO_TOKENS`);
  }
  const executor = new ApiClient({ baseUrl: url, token: tokens.executor });
  const landing = new ApiClient({ baseUrl: url, token: tokens.landing });

  const who = async (id: string, label: string) => {
    const v = await executor.ownership(id);
    say(`--- who ${label}`);
    say(renderWho(v, v.liveness, v.projectionSync?.branch ?? null, Date.now()));
    return v;
  };

  step(`the service at ${url}`);
  const health = await fetch(`${url}/healthz`).then(
    (r) => r.json() as Promise<{ ok: boolean }>,
    () => null,
  );
  check(health?.ok === true, `the service at ${url} is not healthy (${JSON.stringify(health)}); is \`npm start\` running?`);
  const { repoRoot, a, b } = makeRepo(cfg.allowedRoots);
  say(`temporary repository ${repoRoot} with worktrees ${a.path} and ${b.path}`);

  let child: ChildProcess | null = null;
  try {
    step('the executor reports the conversation it observed for its worker');
    const observed = randomUUID();
    const report = await executor.reportConversation({
      executor: 'chatgpt-web',
      executorInstanceId: 'demo-extension',
      sessionGeneration: `demo-${Date.now()}`,
      sequence: 1,
      conversation: {
        conversationId: observed,
        conversationUrl: `https://chatgpt.com/c/${observed}`,
        title: 'Demo: feature A',
        observedAt: new Date().toISOString(),
      },
    });
    const conversation = report.conversation;
    check(conversation, 'the worker has no bound conversation after the report');
    say(
      report.firstBound
        ? `bound ${conversation.conversationId} to worker ${report.workerId}`
        : `worker ${report.workerId} keeps its first conversation ${conversation.conversationId} (this observation is kept as a conflict)`,
    );

    step(`session A binds ${a.branch} (its process reported, lease ${LEASE_A_MS} ms)`);
    child = startSessionProcess();
    check(child.pid, 'could not start session A’s process');
    const processA = await currentProcessIdentity(cfg.hostId, child.pid);
    const boundA = await executor.bind({
      repoRoot,
      worktreePath: a.path,
      branch: a.branch,
      executionSessionId: SESSION_A,
      runtime: 'chatgpt-web',
      lane: 'feature-a',
      planRef: 'docs/plans/feature-a.md',
      process: processA,
      leaseTtlMs: LEASE_A_MS,
    });
    check(boundA.state === 'active' && boundA.epoch === 1, `bind answered state ${boundA.state}, epoch ${boundA.epoch}`);
    check(boundA.owner?.conversation?.conversationId === conversation.conversationId, 'the ownership does not carry the worker’s conversation');
    const idA = boundA.ownershipId;
    child.stdin?.end(JSON.stringify({ url: `${url}/v1/ownerships/${idA}/heartbeat`, token: tokens.executor, session: SESSION_A, epoch: 1 }));
    await who(idA, a.branch);

    step(`session B binds ${b.branch}, then is refused ${a.branch}`);
    const boundB = await executor.bind({
      repoRoot,
      worktreePath: b.path,
      branch: b.branch,
      executionSessionId: SESSION_B,
      runtime: 'chatgpt-web',
      lane: 'feature-b',
    });
    check(boundB.state === 'active', `B's bind answered ${boundB.state}`);
    const denied = await refused(
      executor.bind({ repoRoot, worktreePath: a.path, branch: a.branch, executionSessionId: SESSION_B, runtime: 'chatgpt-web' }),
      'worktree_owned',
    );
    say(`refused: ${denied.code}: ${denied.message} (owner ${JSON.stringify(denied.body.details?.owner)})`);
    await who(boundB.ownershipId, b.branch);

    step('guard hooks installed: A may commit in its worktree, B may not');
    const hooks = await installHooks(repoRoot);
    say(`installed ${hooks.hooks.join(', ')} in ${hooks.hooksPath}`);
    await poll(
      'A’s local projection',
      () => executor.ownership(idA),
      (v) => (v.projectionSync?.localSeq ?? 0) >= v.seq,
    );
    writeFileSync(path.join(a.path, 'feature.txt'), 'feature A, first part\n');
    check(boundA.tenure, 'A’s bind answered no tenure proof');
    say(
      `A runs git with its tenure’s environment from the bind answer: ${Object.keys(boundA.tenure.env).join(', ')} (the worktree holds only the secret’s SHA-256)`,
    );
    const byA = commitAs(a.path, boundA.tenure.env, 'feature.txt', 'feature A: first part');
    check(byA.ok, `A's commit was refused: ${byA.output}`);
    say(`A: ${byA.output}`);
    writeFileSync(path.join(a.path, 'intruder.txt'), 'B was here\n');
    check(boundB.tenure, 'B’s bind answered no tenure proof');
    // B holds a tenure of its own (feature-b): its secret proves nothing in A's worktree.
    const byB = commitAs(a.path, boundB.tenure.env, 'intruder.txt', 'B trying');
    check(!byB.ok, 'B’s commit in A’s worktree was allowed');
    say(`B: ${byB.output}`);
    execFileSync('git', ['reset', '-q', 'intruder.txt'], { cwd: a.path });
    execFileSync('rm', ['-f', path.join(a.path, 'intruder.txt')]);
    await who(idA, a.branch);

    step(`A grants a child session a hold in ${a.branch}: the child commits under it, A cannot release over it, the hold ends`);
    const granted = await executor.grantHold(idA, {
      executionSessionId: SESSION_A,
      epoch: 1,
      childExecutionSessionId: SESSION_CHILD,
      runtime: 'claude-code',
    });
    check(granted.tenure && granted.tenure.executionSessionId === SESSION_CHILD, 'the grant answered no tenure proof for the child');
    check(granted.tenure.secret !== boundA.tenure.secret, 'the child was handed its parent’s secret');
    say(`hold ${granted.holdId} granted to ${SESSION_CHILD}: its own secret, scoped to the hold and A’s epoch (${Object.keys(granted.tenure.env).join(', ')})`);
    await poll(
      'the hold in A’s local projection',
      () => executor.ownership(idA),
      (v) => (v.projectionSync?.localSeq ?? 0) >= v.seq,
    );
    writeFileSync(path.join(a.path, 'child.txt'), 'written by A’s child\n');
    const byChild = commitAs(a.path, granted.tenure.env, 'child.txt', 'feature A: the child’s part');
    check(byChild.ok, `the child's commit under its hold was refused: ${byChild.output}`);
    say(`child: ${byChild.output} (the journal attributes it to the child and, through A, to A’s conversation)`);
    const releaseOver = await refused(executor.release(idA, { executionSessionId: SESSION_A, epoch: 1 }), 'holds_live');
    say(`A’s release refused: ${releaseOver.code} (children ${JSON.stringify(releaseOver.body.details?.children)})`);
    await who(idA, `${a.branch} (a tree of holders)`);
    await executor.endHold(idA, granted.holdId, { executionSessionId: SESSION_CHILD, epoch: 1 });
    await poll(
      'the hold’s end in A’s local projection',
      () => executor.ownership(idA),
      (v) => (v.holds ?? []).length === 0 && (v.projectionSync?.localSeq ?? 0) >= v.seq,
    );
    writeFileSync(path.join(a.path, 'child.txt'), 'the child again, after its hold ended\n');
    const afterEnd = commitAs(a.path, granted.tenure.env, 'child.txt', 'the child, too late');
    check(!afterEnd.ok, 'the child committed after its hold ended');
    say(`hold ${granted.holdId} ended; the child again: ${afterEnd.output.split('\n')[0]}`);
    execFileSync('git', ['checkout', '-q', 'HEAD', '--', 'child.txt'], { cwd: a.path });
    await who(idA, a.branch);

    step('A dies (its process is killed); the liveness authority proves it; the ownership goes stale');
    // A kept working and left uncommitted work behind.
    writeFileSync(path.join(a.path, 'notes.txt'), 'A’s unfinished notes\n');
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
    child = null;
    const stale = await poll(
      'the ownership to go stale',
      () => executor.ownership(idA),
      (v) => v.state === 'stale',
      60_000,
    );
    check(stale.liveness?.verdict === 'dead', `liveness verdict ${stale.liveness?.verdict}`);
    await who(idA, a.branch);

    step('B reclaims A’s worktree: A’s uncommitted work is preserved first');
    const processB = await currentProcessIdentity(cfg.hostId, process.pid);
    const reclaimed = await executor.reclaim(idA, {
      executionSessionId: SESSION_B,
      runtime: 'chatgpt-web',
      process: processB,
      parentExecutionSessionId: SESSION_A,
    });
    check(reclaimed.state === 'active' && reclaimed.epoch === 2, `reclaim answered ${reclaimed.state}, epoch ${reclaimed.epoch}`);
    check(reclaimed.latestWip, 'no WIP receipt after reclaiming a dirty worktree');
    const wipFiles = sh(a.path, ['show', '--name-only', '--format=', reclaimed.latestWip.sha]);
    check(wipFiles.includes('notes.txt'), `the WIP commit does not hold A's notes (${wipFiles})`);
    say(`WIP preserved at ${reclaimed.latestWip.ref} (${reclaimed.latestWip.sha.slice(0, 12)}): ${wipFiles.split('\n').join(', ')}`);
    await who(idA, a.branch);

    step('B finishes the work and submits it');
    await poll(
      'B’s local projection',
      () => executor.ownership(idA),
      (v) => (v.projectionSync?.localSeq ?? 0) >= v.seq,
    );
    writeFileSync(path.join(a.path, 'feature.txt'), 'feature A, first part\nfeature A, second part\n');
    check(reclaimed.tenure, 'the reclaim answered no tenure proof');
    const byB2 = commitAs(a.path, reclaimed.tenure.env, 'feature.txt', 'feature A: finished');
    check(byB2.ok, `B's commit after the reclaim was refused: ${byB2.output}`);
    say(`B: ${byB2.output}`);
    const staleA = commitAs(a.path, boundA.tenure.env, 'feature.txt', 'A again');
    check(!staleA.ok, 'a commit by the dead session A was allowed after the reclaim');
    const sourceHead = sh(a.path, ['rev-parse', 'HEAD']);
    const submitted = await executor.submit(idA, { executionSessionId: SESSION_B, epoch: 2, head: sourceHead });
    check(submitted.state === 'submitted', `submit answered ${submitted.state}`);
    await who(idA, a.branch);

    step('the landing controller merges into main and records the landing');
    sh(repoRoot, ['merge', '-q', '--no-ff', '-m', `Land ${a.branch}`, a.branch]);
    const landedHead = sh(repoRoot, ['rev-parse', 'HEAD']);
    const landed = await landing.land({ repoRoot, sourceBranch: a.branch, sourceHead, landedBranch: 'main', landedHead, landedAt: new Date().toISOString() });
    check(landed.status === 'recorded' && landed.receipt?.landedHead === landedHead, `landing answered ${landed.status}`);
    say(`receipt: main@${landedHead.slice(0, 12)} <- ${a.branch}@${sourceHead.slice(0, 12)}, session ${landed.receipt.executionSessionId}`);
    await who(idA, a.branch);

    step('the worktree is removed: nothing lost (its commits landed, its uncommitted notes snapshotted first)');
    await poll(
      'the landed projection',
      () => executor.ownership(idA),
      (v) => (v.projectionSync?.localSeq ?? 0) >= v.seq,
    );
    // Notes B keeps beside the code and never commits: the removal must not lose them.
    writeFileSync(path.join(a.path, 'review-notes.md'), '# after landing\n- follow up on the flaky test\n');
    const removal = await landing.removeWorktree({ worktreePath: a.path });
    check(removal.result.status === 'removed', `removal answered ${removal.result.status} ${removal.result.refusal?.code ?? removal.result.error ?? ''}`);
    check(!existsSync(a.path), 'the worktree is still there after its removal');
    const kept = removal.result.receipt?.preserved[0];
    check(kept, 'the removal kept no snapshot of the untracked notes');
    say(`removed ${a.path}: head landed on ${removal.result.receipt?.headLandedOn ?? '?'}; ${kept.files} files kept at ${kept.ref} (${kept.sha.slice(0, 12)})`);
    say(`worktree_removed: ${removal.result.record?.status ?? 'not sent'}`);
    await poll(
      'the ownership to close',
      () => executor.ownership(idA),
      (v: OwnershipViewOut) => v.state === 'closed',
    );
    await who(idA, a.branch);

    step(`od-worktree restore ${a.path}: the worktree back, byte for byte, with no owner`);
    const restored = JSON.parse(
      execFileSync(process.execPath, [path.join(ROOT, 'bin/od-worktree.js'), 'restore', a.path, '--repo', repoRoot, '--json'], {
        encoding: 'utf8',
        env: { ...process.env, OD_API_URL: url, OD_TOKEN: tokens.executor },
      }),
    ) as RestoreOutput;
    check(restored.ok && restored.verified && restored.owner === null, `restore answered ${JSON.stringify(restored)}`);
    check(readFileSync(path.join(a.path, 'review-notes.md'), 'utf8').includes('follow up'), 'the restored worktree lacks the review notes');
    say(
      `restored ${restored.worktreePath} (${restored.restored.files} files, ${restored.restored.untracked} untracked): verified against ${kept.sha.slice(0, 12)}, no owner until a bind or a reclaim`,
    );

    step(`od-worktree provenance ${landedHead.slice(0, 12)}`);
    const out = execFileSync(process.execPath, [path.join(ROOT, 'bin/od-worktree.js'), 'provenance', landedHead, '--repo', repoRoot], {
      encoding: 'utf8',
      env: { ...process.env, OD_API_URL: url, OD_TOKEN: tokens.executor },
    });
    say(out.trimEnd());
    check(out.includes(`Conversation URL: https://chatgpt.com/c/${conversation.conversationId}`), 'provenance does not name the conversation');
    check(out.includes(`Session:          ${SESSION_B}`), 'provenance does not name the session that landed');
    check(out.includes(`(child under hold ${granted.holdId} of parent session ${SESSION_A})`), 'provenance does not name the child’s commit as the child’s');

    step('tidy up: B removes its other worktree (its owner: released first, then removed)');
    const removedB = await executor.removeWorktree({ worktreePath: b.path, executionSessionId: SESSION_B, epoch: 1 });
    check(removedB.released === boundB.ownershipId && removedB.result.status === 'removed', `B's removal answered ${removedB.result.status}`);
    say(`released ${removedB.released} and removed ${b.path}`);
    say('');
    say(`demo complete: the repository is left at ${repoRoot}`);
  } finally {
    child?.kill('SIGKILL');
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    const msg =
      err instanceof DemoFailure
        ? err.message
        : err instanceof ApiError
          ? `the service answered ${err.status} ${err.code}: ${err.message}`
          : err instanceof Error
            ? err.message
            : String(err);
    process.stderr.write(`\ndemo FAILED: ${msg}\n`);
    process.exit(1);
  },
);
