import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Cleanup } from '../stack/cleanup';
import { loadLog, rebuildCheck } from '../faults/checker';
import { git, landOnMain, makeWorktrees, type Worktree } from '../faults/git';
import { Timeline } from '../faults/health';
import { CallLog } from '../faults/http';
import { IntentLog, makeDrivers } from '../faults/load';
import { Rng } from '../chaos/rng';
import { currentProcessIdentity } from '../src/activities/liveness';
import { BEACON_STALE_MS } from '../src/infra/beacon';
import { PROJECT_ROOT } from '../src/infra/tools';
import {
  awayCallAnswer,
  bindAwayHost,
  boundMissed,
  forcedReclaimSaid,
  hostsAgree,
  judgeLateHistory,
  judgeLoad,
  lateListed,
  lateWorkPreserved,
  reclaimRefused,
  refsHolding,
  whoSaysPending,
} from './judge';
import { inHost } from './netns';
import { MULTIHOST_SETTINGS, MultiHostStack, type Host } from './stack';

/**
 * `npm run multihost`: three real network hosts (./netns.ts) share one Temporal and one PostgreSQL,
 * and the run shows, with measured figures against stated bounds:
 *   1. owners on every host at once; the same answers to who, list --owners, history and
 *      provenance from any host; a handoff between two workers on one host; a bind for a host no
 *      agent serves answered at once;
 *   2. a host cut off past its owners' lease: its hooks keep refusing all but the owner they know; a
 *      successor's reclaim from another host is refused (liveness_unknown) at once; an admin's forced
 *      reclaim is recorded at once and said to be not yet enforced there;
 *   3. the link back: the projection converges within its bound; the old owner's commits made while
 *      cut off are preserved under a WIP ref, shown as late attempts of its tenure and attributed to
 *      it; rebuild-projection --check is clean;
 *   4. a host agent killed past every bound: each call on its worktrees answers within its bound
 *      (projection pending, or host_unavailable), and the next message is taken within seconds of
 *      its return;
 *   5. a worker process killed mid-load on one host: the other hosts' ownerships keep answering,
 *      nothing acknowledged is lost (the fault run's checker over the whole load).
 */

export interface MultiHostOptions {
  short: boolean;
  keep: boolean;
  seed: number;
  log: (line: string) => void;
}

export interface Bound {
  name: string;
  boundMs: number;
  measuredMs: number;
}

export interface Check {
  id: string;
  title: string;
  ok: boolean;
  details: string[];
}

export interface MultiHostResult {
  checks: Check[];
  bounds: Bound[];
  runDir: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The bounds the run holds the service to (docs/operations.md#when-a-host-is-away says why each is what it is). */
export const BOUNDS = {
  /** a bind naming a host whose agent is away (or that no agent serves): refused host_unavailable */
  bindAwayHost: 3_000,
  /** a refused reclaim of a silent owner: answered by the workflow's validator */
  reclaimRefused: 3_000,
  /** an admin's forced reclaim of a worktree on a host that is away: recorded without the WIP */
  forcedReclaimAway: 5_000,
  /** a call on a host known to be away (beacon older than BEACON_STALE_MS): answered at durability */
  callHostAway: 5_000,
  /** a call in the first BEACON_STALE_MS after the host vanished: at most the projection wait (10 s) more */
  callHostVanishing: 10_000 + 5_000,
  /**
   * the host's projection after its link returns: a write lost into the cut link is tried again
   * once its 10 s heartbeat timeout passes (it waited out a 60 s attempt before, 50-58 s here)
   */
  convergeAfterHeal: 30_000,
  /** the next message after a host agent's return (from its ready line) */
  nextMessageAfterReturn: 10_000,
};

interface Api {
  status: number;
  body: Record<string, unknown>;
  ms: number;
}

export async function runMultiHost(opts: MultiHostOptions): Promise<MultiHostResult> {
  const cleanup = new Cleanup();
  const stack = new MultiHostStack(cleanup, opts.log, { hosts: 3, executors: 6, keep: opts.keep });
  const checks: Check[] = [];
  const bounds: Bound[] = [];
  const agents: ChildProcess[] = [];
  cleanup.add('stop session processes', () => agents.forEach((a) => a.kill('SIGKILL')));
  const onSignal = () => void cleanup.run(opts.log).then(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    cleanup.add('stop service processes', () => stack.stopAll(), 60_000);
    await stack.start();
    const ctx = new Context(stack, opts, bounds, agents);
    const worktrees = await ctx.makeRepos();
    checks.push(await ctx.everyHost(worktrees));
    const [cut, back] = await ctx.cutOff(worktrees);
    checks.push(cut, back);
    checks.push(await ctx.agentGone(worktrees));
    checks.push(await ctx.workerKilled(worktrees));
    return { checks, bounds, runDir: stack.runDir };
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    if (opts.keep) opts.log(`run dir kept: ${stack.root}`);
    await cleanup.run(opts.log);
  }
}

/** The worktrees of each host: [host index][k]. Worktree 0 of each gets an owner in check 1. */
type HostWorktrees = Worktree[][];

class Context {
  private readonly h: Host[];
  constructor(
    private readonly stack: MultiHostStack,
    private readonly opts: MultiHostOptions,
    private readonly bounds: Bound[],
    private readonly agents: ChildProcess[],
  ) {
    this.h = stack.hosts;
  }

  private log(line: string): void {
    this.opts.log(line);
  }

  /** One call of the API, from the run (outside every host), timed. */
  async api(method: 'GET' | 'POST', route: string, token: string, body?: unknown, timeoutMs = 90_000): Promise<Api> {
    const t0 = Date.now();
    try {
      const res = await fetch(`${this.stack.url}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.text();
      let parsed: Record<string, unknown> = {};
      try {
        parsed = JSON.parse(text) as Record<string, unknown>;
      } catch {
        parsed = { text };
      }
      return { status: res.status, body: parsed, ms: Date.now() - t0 };
    } catch (err) {
      return { status: 0, body: { error: err instanceof Error ? err.message : String(err) }, ms: Date.now() - t0 };
    }
  }

  bound(name: string, boundMs: number, measuredMs: number): boolean {
    this.bounds.push({ name, boundMs, measuredMs });
    const missed = boundMissed(name, boundMs, measuredMs);
    this.log(`  bound: ${name}: ${measuredMs} ms (bound ${boundMs} ms) ${missed ? 'MISSED' : 'met'}`);
    return missed === null;
  }

  /** `od-worktree …` run on a host (in its namespace), against the API over that host's link. */
  cli(host: Host, args: string[], env: Record<string, string> = {}): { code: number; stdout: string; stderr: string } {
    const { command, args: argv } = inHost(host.net, [process.execPath, path.join(PROJECT_ROOT, 'bin', 'od-worktree.js'), ...args]);
    const res = spawnSync(command, argv, {
      encoding: 'utf8',
      env: {
        ...process.env,
        OD_API_URL: this.stack.url,
        OD_TOKEN: this.stack.tokens.reader,
        OD_HOST_ID: host.id,
        DATABASE_URL: this.stack.databaseUrl,
        ...env,
      },
      timeout: 60_000,
    });
    return { code: res.status ?? -1, stdout: res.stdout ?? '', stderr: res.stderr ?? '' };
  }

  /** git in a worktree, as an agent on its host runs it: through the git gate, with the hooks. */
  agentGit(host: Host, wt: Worktree, args: string[], env: Record<string, string>): { code: number; out: string } {
    const gate = path.join(PROJECT_ROOT, 'bin', 'git-gate');
    const { command, args: argv } = inHost(host.net, ['git', ...args]);
    const res = spawnSync(command, argv, {
      cwd: wt.path,
      encoding: 'utf8',
      env: {
        ...process.env,
        PATH: `${gate}:${process.env.PATH ?? ''}`,
        GIT_AUTHOR_NAME: 'agent',
        GIT_AUTHOR_EMAIL: 'agent@example.invalid',
        GIT_COMMITTER_NAME: 'agent',
        GIT_COMMITTER_EMAIL: 'agent@example.invalid',
        ...env,
      },
      timeout: 60_000,
    });
    return { code: res.status ?? -1, out: `${res.stdout ?? ''}${res.stderr ?? ''}` };
  }

  /** A commit by an agent: a file written, added and committed through the gate; its sha when it went through. */
  agentCommit(host: Host, wt: Worktree, label: string, env: Record<string, string>): { code: number; out: string; sha: string | null } {
    writeFileSync(path.join(wt.path, `${label}.txt`), `${label}\n`);
    const add = this.agentGit(host, wt, ['add', `${label}.txt`], env);
    if (add.code !== 0) return { ...add, sha: null };
    const commit = this.agentGit(host, wt, ['commit', '-q', '-m', label], env);
    if (commit.code !== 0) return { ...commit, sha: null };
    return { ...commit, sha: this.agentGit(host, wt, ['rev-parse', 'HEAD'], env).out.trim() };
  }

  /** The projection the worktree's hooks enforce, read from git's own config file (no service involved). */
  localEpoch(wt: Worktree): number | null {
    const res = spawnSync('git', ['config', '--get', 'overdeck.owner.epoch'], { cwd: wt.path, encoding: 'utf8' });
    return res.status === 0 ? Number(res.stdout.trim()) : null;
  }

  /**
   * A session's own process on a host: it heartbeats its ownership over the host's link every 2 s
   * (stopping by itself when cut off, as a real agent's would) and is the process the local
   * liveness authority looks at.
   */
  async sessionProcess(
    host: Host,
    session: string,
  ): Promise<{
    proc: ChildProcess;
    process: Awaited<ReturnType<typeof currentProcessIdentity>>;
    heartbeat(ownershipId: string, epoch: number, token: string): void;
  }> {
    const script = `
      let target = null;
      process.stdin.on('data', (b) => { for (const l of String(b).split('\\n')) if (l.trim()) target = JSON.parse(l); });
      setInterval(() => {
        if (!target) return;
        fetch(process.env.OD_API_URL + '/v1/ownerships/' + target.ownershipId + '/heartbeat', {
          method: 'POST', headers: { authorization: 'Bearer ' + target.token, 'content-type': 'application/json' },
          body: JSON.stringify({ executionSessionId: process.env.OVERDECK_EXECUTION_SESSION_ID, epoch: target.epoch }),
          signal: AbortSignal.timeout(1500),
        }).catch(() => undefined);
      }, 2000);`;
    const { command, args } = inHost(host.net, [process.execPath, '-e', script]);
    const proc = spawn(command, args, {
      stdio: ['pipe', 'ignore', 'ignore'],
      env: { ...process.env, OD_API_URL: this.stack.url, OVERDECK_EXECUTION_SESSION_ID: session },
    });
    this.agents.push(proc);
    await sleep(100);
    const identity = await currentProcessIdentity(host.id, proc.pid!);
    return {
      proc,
      process: identity,
      heartbeat: (ownershipId, epoch, token) => proc.stdin!.write(`${JSON.stringify({ ownershipId, epoch, token })}\n`),
    };
  }

  async makeRepos(): Promise<HostWorktrees> {
    const out: HostWorktrees = [];
    for (const h of this.h) {
      const wts = await makeWorktrees(h.repos, 3, 3, `${h.net.name}wt`);
      for (const wt of wts) wt.hostId = h.id;
      // The guard hooks, installed as a person would on that host.
      const res = this.cli(h, ['install-hooks', '--worktree', wts[0]!.path, '--json']);
      if (res.code !== 0) throw new Error(`install-hooks on ${h.net.name} failed: ${res.stderr}`);
      out.push(wts);
    }
    return out;
  }

  private readonly owners = new Map<
    string,
    { ownershipId: string; session: string; epoch: number; secret: string; env: Record<string, string>; executor: number }
  >();

  private tenureEnv(body: Record<string, unknown>): { secret: string; env: Record<string, string> } {
    const t = body.tenure as { secret: string; env: Record<string, string> } | null;
    if (!t) throw new Error(`no tenure in ${JSON.stringify(body).slice(0, 300)}`);
    return t;
  }

  /** Check 1. */
  async everyHost(w: HostWorktrees): Promise<Check> {
    const d: string[] = [];
    let ok = true;
    const fail = (m: string) => ((ok = false), d.push(`FAIL ${m}`));
    this.log('1: owners on every host; the same answers from each; a handoff on one host; a bind for a host nobody serves');
    for (const [i, h] of this.h.entries()) {
      const wt = w[i]![0]!;
      const session = `mh-${this.stack.tag}-${h.net.name}-a`;
      const proc = await this.sessionProcess(h, session);
      const token = this.stack.tokens.executors[i]!.token;
      const r = await this.api('POST', '/v1/bind', token, {
        worktreePath: wt.path,
        branch: wt.branch,
        hostId: h.id,
        executionSessionId: session,
        runtime: 'multihost',
        process: proc.process,
      });
      if (r.status !== 200) {
        fail(`bind on ${h.net.name}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
        continue;
      }
      const t = this.tenureEnv(r.body);
      const ownershipId = r.body.ownershipId as string;
      this.owners.set(wt.path, { ownershipId, session, epoch: r.body.epoch as number, secret: t.secret, env: t.env, executor: i });
      proc.heartbeat(ownershipId, r.body.epoch as number, token);
      d.push(`${h.net.name}: ${session} owns ${wt.name} (${r.ms} ms, projection ${String(r.body.projection)})`);
    }
    // Every owner's projection on its own host: the hooks there enforce it.
    await this.until(() => w.every((wts) => this.localEpoch(wts[0]!) === 1), 15_000);
    for (const wts of w) if (this.localEpoch(wts[0]!) !== 1) fail(`projection of ${wts[0]!.name} not written on its host`);
    // A commit by each owner with its proof, for provenance.
    const shas: string[] = [];
    for (const [i, h] of this.h.entries()) {
      const wt = w[i]![0]!;
      const o = this.owners.get(wt.path);
      if (!o) continue;
      const c = this.agentCommit(h, wt, `owner-work-${h.net.name}`, o.env);
      if (!c.sha) fail(`owner's commit on ${h.net.name} refused: ${c.out.slice(0, 300)}`);
      else shas.push(c.sha);
    }
    // Each owner submits and the landing controller lands the commit (a real commit on main), so provenance has something to answer.
    for (const [i] of this.h.entries()) {
      const wt = w[i]![0]!;
      const o = this.owners.get(wt.path);
      const sha = shas[i];
      if (!o || !sha) continue;
      const sub = await this.api('POST', `/v1/ownerships/${o.ownershipId}/submit`, this.stack.tokens.executors[o.executor]!.token, {
        executionSessionId: o.session,
        epoch: o.epoch,
        head: sha,
      });
      const landedHead = await landOnMain(wt, sha);
      const landed = await this.api('POST', `/v1/ownerships/${o.ownershipId}/landed`, this.stack.tokens.landing, {
        sourceHead: sha,
        landedBranch: 'main',
        landedHead,
        landedAt: new Date().toISOString(),
      });
      if (sub.status !== 200 || landed.status >= 300)
        fail(`submit/landed of ${wt.name}: ${sub.status} ${landed.status} ${JSON.stringify(landed.body).slice(0, 200)}`);
    }
    // The journals ship asynchronously (after each projection write and every 5 s): wait until the history shows each commit.
    for (const [i] of this.h.entries()) {
      const wt = w[i]![0]!;
      if (!shas[i]) continue;
      const seen = await this.until(
        () => this.cli(this.h[0]!, ['history', wt.branch, '--repo', wt.repoRoot, '--json']).stdout.includes(shas[i]!),
        30_000,
        1_000,
      );
      if (!seen) fail(`history never showed ${wt.name}'s commit ${shas[i]!.slice(0, 8)}`);
    }
    // The same answers from every host (volatile fields aside: ages and clocks of the moment).
    const lookups: [string, string[]][] = [];
    for (const [i] of this.h.entries()) {
      const wt = w[i]![0]!;
      lookups.push([`who ${wt.name}`, ['who', wt.branch, '--repo', wt.repoRoot, '--json']]);
      lookups.push([`history ${wt.name}`, ['history', wt.branch, '--repo', wt.repoRoot, '--json']]);
      if (shas[i]) lookups.push([`provenance ${shas[i]!.slice(0, 8)}`, ['provenance', shas[i]!, '--repo', wt.repoRoot, '--json']]);
    }
    lookups.push(['list --owners', ['list', '--owners', '--json']]);
    for (const [name, args] of lookups) {
      const answers = this.h.map((h) => this.cli(h, args));
      const differ = hostsAgree(
        name,
        this.h.map((h) => h.net.name),
        answers,
      );
      if (differ) fail(differ.message);
      else d.push(`${name}: the same from h1, h2, h3`);
    }
    // A handoff between two workers whose sessions run on the same host (h2).
    const h2 = this.h[1]!;
    const wt = w[1]![1]!;
    const from = await this.sessionProcess(h2, `mh-${this.stack.tag}-h2-from`);
    const to = await this.sessionProcess(h2, `mh-${this.stack.tag}-h2-to`);
    const [e3, e4] = [this.stack.tokens.executors[3]!, this.stack.tokens.executors[4]!];
    const b = await this.api('POST', '/v1/bind', e3.token, {
      worktreePath: wt.path,
      branch: wt.branch,
      hostId: h2.id,
      executionSessionId: `mh-${this.stack.tag}-h2-from`,
      runtime: 'multihost',
      process: from.process,
    });
    const ho =
      b.status === 200
        ? await this.api('POST', `/v1/ownerships/${String(b.body.ownershipId)}/handoff`, e3.token, {
            executionSessionId: `mh-${this.stack.tag}-h2-from`,
            epoch: b.body.epoch,
            toExecutionSessionId: `mh-${this.stack.tag}-h2-to`,
            toWorkerId: e4.workerId,
          })
        : b;
    const acc =
      ho.status === 200
        ? await this.api('POST', `/v1/ownerships/${String(b.body.ownershipId)}/handoff/accept`, e4.token, {
            handoffId: (ho.body.handoff as { handoffId?: string } | null)?.handoffId,
            executionSessionId: `mh-${this.stack.tag}-h2-to`,
            runtime: 'multihost',
            process: to.process,
          })
        : ho;
    if (acc.status !== 200) fail(`handoff on h2: ${acc.status} ${JSON.stringify(acc.body).slice(0, 300)}`);
    else {
      await this.until(() => this.localEpoch(wt) === 2, 15_000);
      const enforced = (acc.body.enforcement as { state?: string } | undefined)?.state;
      if (this.localEpoch(wt) !== 2) fail('the accepted handoff never reached h2’s hooks');
      else d.push(`handoff on h2 between ${e3.workerId} and ${e4.workerId}: accepted (${acc.ms} ms, enforcement ${enforced}), h2's hooks enforce epoch 2`);
      this.owners.set(wt.path, {
        ownershipId: b.body.ownershipId as string,
        session: `mh-${this.stack.tag}-h2-to`,
        epoch: 2,
        ...this.tenureEnv(acc.body),
        executor: 4,
      });
      to.heartbeat(b.body.ownershipId as string, 2, e4.token);
    }
    // A bind for a host no agent serves.
    const nowhere = await this.api('POST', '/v1/bind', this.stack.tokens.executors[5]!.token, {
      worktreePath: path.join(this.stack.root, 'hosts', 'nowhere', 'wt'),
      branch: 'wt/nowhere',
      hostId: `mh-${this.stack.tag}-nowhere`,
      executionSessionId: `mh-${this.stack.tag}-nowhere`,
      runtime: 'multihost',
    });
    const away = bindAwayHost(nowhere);
    if (away) fail(away.message);
    if (!this.bound('bind for a host no agent serves (503 host_unavailable)', BOUNDS.bindAwayHost, nowhere.ms)) ok = false;
    return { id: '1', title: 'owners on three hosts; the same answers from any host; a handoff on one host; a bind for a host nobody serves', ok, details: d };
  }

  /** Checks 2 and 3: h3 cut off past the lease, then back. */
  async cutOff(w: HostWorktrees): Promise<[Check, Check]> {
    const d2: string[] = [];
    const d3: string[] = [];
    let ok2 = true;
    let ok3 = true;
    const fail2 = (m: string) => ((ok2 = false), d2.push(`FAIL ${m}`));
    const fail3 = (m: string) => ((ok3 = false), d3.push(`FAIL ${m}`));
    const h3 = this.h[2]!;
    // A worktree of h3 with an owner whose session runs on h3 and heartbeats over h3's link.
    const wt = w[2]![1]!;
    const session = `mh-${this.stack.tag}-h3-cut`;
    const proc = await this.sessionProcess(h3, session);
    const ownerEx = this.stack.tokens.executors[2]!;
    const bound = await this.api('POST', '/v1/bind', ownerEx.token, {
      worktreePath: wt.path,
      branch: wt.branch,
      hostId: h3.id,
      executionSessionId: session,
      runtime: 'multihost',
      process: proc.process,
    });
    if (bound.status !== 200)
      return [
        { id: '2', title: 'a host cut off', ok: false, details: [`bind on h3: ${bound.status} ${JSON.stringify(bound.body).slice(0, 300)}`] },
        { id: '3', title: 'the link back', ok: false, details: ['skipped'] },
      ];
    const owner = { ownershipId: bound.body.ownershipId as string, session, epoch: bound.body.epoch as number, ...this.tenureEnv(bound.body), executor: 2 };
    proc.heartbeat(owner.ownershipId, owner.epoch, ownerEx.token);
    await this.until(() => this.localEpoch(wt) === owner.epoch, 15_000);
    // Heartbeats keep it live before the cut.
    await sleep(3_000);
    this.log(`2: h3 cut off (link ${h3.net.link} down) for longer than the lease (${MULTIHOST_SETTINGS.leaseTtlMs} ms)`);
    const cutAt = Date.now();
    this.stack.net.cut(h3.net);
    // The owner falls silent: its heartbeats no longer arrive, its lease runs out.
    const silent = await this.until(
      async () =>
        ((await this.api('GET', `/v1/ownerships/${owner.ownershipId}`, this.stack.tokens.reader)).body.liveness as { status?: string } | null)?.status ===
        'silent',
      60_000,
    );
    if (!silent) fail2('the cut-off owner never went silent');
    else d2.push(`owner silent ${Date.now() - cutAt} ms after the cut (lease ${MULTIHOST_SETTINGS.leaseTtlMs} ms)`);
    // On h3 the hooks and the gate still enforce the owner they know.
    const intruder = this.agentCommit(h3, wt, 'intruder', { OVERDECK_EXECUTION_SESSION_ID: 'someone-else' });
    const copied = this.agentCommit(h3, wt, 'copied-id', { OVERDECK_EXECUTION_SESSION_ID: owner.session, OVERDECK_EPOCH: String(owner.epoch) });
    if (intruder.code === 0) fail2('another session committed on the cut-off host');
    if (copied.code === 0) fail2("the owner's session id without its secret committed on the cut-off host");
    if (intruder.code !== 0 && copied.code !== 0)
      d2.push(`h3's gate and hooks refused another session (${firstLine(intruder.out)}) and the owner's id without its secret (${firstLine(copied.out)})`);
    // Still its tenure (nobody has taken it yet): its own commit, made while cut off.
    const before = this.agentCommit(h3, wt, 'cut-before-reclaim', owner.env);
    if (!before.sha) fail2(`the owner it knows could not commit on the cut-off host: ${before.out.slice(0, 200)}`);
    // Git's reflog names whole seconds: a commit in the very second of a reclaim counts as late (src/git/late.ts). This one is seconds before.
    await sleep(2_000);
    // A successor on h2 asks for the worktree: liveness cannot be proven, so it is refused.
    const succ = this.stack.tokens.executors[1]!;
    const succSession = `mh-${this.stack.tag}-h2-successor`;
    const h2proc = await this.sessionProcess(this.h[1]!, succSession);
    const refused = await this.api('POST', `/v1/ownerships/${owner.ownershipId}/reclaim`, succ.token, {
      executionSessionId: succSession,
      runtime: 'multihost',
      process: h2proc.process,
    });
    const notRefused = reclaimRefused(refused);
    if (notRefused) fail2(notRefused.message);
    else d2.push(`successor's reclaim from h2 refused ${refused.body.code}`);
    if (!this.bound("successor's reclaim of a cut-off owner refused (liveness_unknown)", BOUNDS.reclaimRefused, refused.ms)) ok2 = false;
    // Past the beacon's staleness the API knows h3 is away.
    await sleep(Math.max(0, cutAt + BEACON_STALE_MS + 1_000 - Date.now()));
    const forced = await this.api('POST', `/v1/ownerships/${owner.ownershipId}/reclaim`, this.stack.tokens.admin, {
      executionSessionId: succSession,
      runtime: 'multihost',
      workerId: succ.workerId,
      force: true,
      reason: 'h3 is cut off',
      process: h2proc.process,
    });
    const enforcement = forced.body.enforcement as { state?: string; hostId?: string } | undefined;
    const unsaid = forcedReclaimSaid(forced);
    if (unsaid) fail2(unsaid.message);
    else
      d2.push(
        `admin's forced reclaim recorded at epoch ${String(forced.body.epoch)}: projection ${String(forced.body.projection)}, enforcement ${enforcement?.state} on ${enforcement?.hostId}`,
      );
    if (!this.bound("admin's forced reclaim of a worktree on a cut-off host", BOUNDS.forcedReclaimAway, forced.ms)) ok2 = false;
    const newEpoch = forced.status === 200 ? Number(forced.body.epoch) : NaN;
    const who = this.cli(this.h[0]!, ['who', wt.branch, '--repo', wt.repoRoot]);
    const whoUnsaid = whoSaysPending(who.stdout);
    if (whoUnsaid) fail2(whoUnsaid.message);
    else
      d2.push(
        `who on h1: "${who.stdout
          .split('\n')
          .find((l) => l.includes('NOT YET'))
          ?.trim()}"`,
      );
    // The owner h3 knows commits again while cut off, and leaves uncommitted work.
    // Late: made after its tenure was taken, still passing h3's hooks (they know no newer owner).
    const late1 = this.agentCommit(h3, wt, 'late-1', owner.env);
    const late2 = this.agentCommit(h3, wt, 'late-2', owner.env);
    if (!late1.sha || !late2.sha) fail2(`a late commit was refused while still cut off: ${late1.out.slice(0, 200)} ${late2.out.slice(0, 200)}`);
    writeFileSync(path.join(wt.path, 'late-uncommitted.txt'), 'late\n');
    const cutFor = this.opts.short ? 0 : 45_000;
    await sleep(Math.max(0, cutAt + MULTIHOST_SETTINGS.leaseTtlMs * 2 + cutFor - Date.now()));
    d2.push(`h3 cut off for ${Date.now() - cutAt} ms`);

    this.log('3: the link returns');
    const healAt = Date.now();
    this.stack.net.heal(h3.net);
    const converged = await this.until(() => this.localEpoch(wt) === newEpoch, BOUNDS.convergeAfterHeal);
    if (!converged) fail3(`h3's projection still at epoch ${this.localEpoch(wt)} ${BOUNDS.convergeAfterHeal} ms after the link returned`);
    if (!this.bound("h3's projection converges to the durable record after the link returns", BOUNDS.convergeAfterHeal, Date.now() - healAt)) ok3 = false;
    const stale = this.agentCommit(h3, wt, 'after-heal', owner.env);
    if (stale.code === 0) fail3('the old owner still commits after its host converged');
    else d3.push(`the old owner is refused once h3 converged (${firstLine(stale.out)})`);
    // The late work: preserved under a WIP ref, in history as late attempts of the old tenure, attributed to the old session.
    const lateShas = [late1.sha, late2.sha].filter((s): s is string => s !== null);
    const mine = [before.sha, ...lateShas].filter((s): s is string => s !== null);
    const refs = (await git(wt.repoRoot, ['for-each-ref', '--format=%(refname) %(objectname)', 'refs/overdeck/'])).split('\n').filter(Boolean);
    const reaches: { ref: string; reach: string }[] = [];
    for (const line of refs) {
      const [ref] = line.split(' ');
      reaches.push({ ref: ref!, reach: await git(wt.repoRoot, ['rev-list', ref!]).catch(() => '') });
    }
    const holding = refsHolding(reaches, mine);
    const notPreserved = lateWorkPreserved(holding, mine);
    if (notPreserved) fail3(notPreserved.message);
    else d3.push(`commits made while cut off (${mine.map((s) => s.slice(0, 8)).join(', ')}) preserved under ${holding.join(', ')}`);
    // The host agent ships the journal's late_preserved line after its projection write (and every 5 s).
    let history = this.cli(this.h[1]!, ['history', wt.branch, '--repo', wt.repoRoot, '--json']);
    await this.until(
      () => {
        history = this.cli(this.h[1]!, ['history', wt.branch, '--repo', wt.repoRoot, '--json']);
        return history.code === 0 && lateShas.every((sha) => lateListed(JSON.parse(history.stdout)).includes(sha));
      },
      30_000,
      1_000,
    );
    const histJson = history.code === 0 ? (JSON.parse(history.stdout) as unknown) : null;
    for (const f of judgeLateHistory(histJson, { lateShas, beforeSha: before.sha, ownerSession: owner.session, successorSession: succSession }))
      fail3(f.message);
    if (ok3)
      d3.push(
        `history lists the commits made after the reclaim as late attempts of the old tenure; the late ones attributed to ${owner.session}; none to ${succSession}`,
      );
    const rebuild = this.cli(this.h[0]!, ['admin', 'rebuild-projection', '--check', '--json']);
    if (rebuild.code !== 0) fail3(`rebuild-projection --check: ${rebuild.stdout.slice(0, 300)}`);
    else d3.push('admin rebuild-projection --check: consistent');
    return [
      {
        id: '2',
        title: 'a host cut off past the lease: its hooks keep the owner they know; reclaim fails closed; a forced reclaim is recorded, not yet enforced',
        ok: ok2,
        details: d2,
      },
      {
        id: '3',
        title: 'the link returns: the projection converges; late commits preserved, shown late, attributed to the old session; rebuild clean',
        ok: ok3,
        details: d3,
      },
    ];
  }

  /** Check 4: h2's agent killed past every bound. */
  async agentGone(w: HostWorktrees): Promise<Check> {
    const d: string[] = [];
    let ok = true;
    const fail = (m: string) => ((ok = false), d.push(`FAIL ${m}`));
    const h2 = this.h[1]!;
    // Away past the largest bound of a call (callHostVanishing, 15 s): every call below is answered with the agent still gone.
    const awayMs = this.opts.short ? 20_000 : 75_000;
    this.log(`4: h2's worker and host agent killed (kill -9) for ${awayMs} ms`);
    const wt = w[1]![2]!;
    const ex = this.stack.tokens.executors[2]!;
    const ses = (n: string) => `mh-${this.stack.tag}-h2-gone-${n}`;
    const first = await this.api('POST', '/v1/bind', ex.token, {
      worktreePath: wt.path,
      branch: wt.branch,
      hostId: h2.id,
      executionSessionId: ses('a'),
      runtime: 'multihost',
    });
    if (first.status !== 200)
      return {
        id: '4',
        title: 'a host agent gone past every bound',
        ok: false,
        details: [`bind before the kill: ${first.status} ${JSON.stringify(first.body).slice(0, 200)}`],
      };
    const id = first.body.ownershipId as string;
    const killedAt = Date.now();
    await h2.worker.kill9();
    const calls: { op: string; r: Api; known: boolean }[] = [];
    let epoch = first.body.epoch as number;
    let session = ses('a');
    const timed = async (op: string, fn: () => Promise<Api>) => {
      const known = Date.now() - killedAt > BEACON_STALE_MS;
      const r = await fn();
      calls.push({ op, r, known });
      return r;
    };
    // One owner change right away (the host not yet known to be away: its beacon is still fresh)…
    const accepted = (r: Api, next: string) => {
      if (r.status === 200) {
        session = next;
        epoch = r.body.epoch as number;
      }
    };
    const ho0 = await timed('handoff (right away)', () =>
      this.api('POST', `/v1/ownerships/${id}/handoff`, ex.token, {
        executionSessionId: session,
        epoch,
        toExecutionSessionId: ses('b'),
        toWorkerId: ex.workerId,
      }),
    );
    accepted(
      await timed('accept (right away)', () =>
        this.api('POST', `/v1/ownerships/${id}/handoff/accept`, ex.token, {
          handoffId: (ho0.body.handoff as { handoffId?: string } | null)?.handoffId,
          executionSessionId: ses('b'),
          runtime: 'multihost',
        }),
      ),
      ses('b'),
    );
    // …then each kind of call once it is.
    await sleep(Math.max(0, killedAt + BEACON_STALE_MS + 1_000 - Date.now()));
    await timed('plan', () => this.api('POST', `/v1/ownerships/${id}/plan`, ex.token, { executionSessionId: session, epoch, lane: 'host-away' }));
    const ho = await timed('handoff', () =>
      this.api('POST', `/v1/ownerships/${id}/handoff`, ex.token, {
        executionSessionId: session,
        epoch,
        toExecutionSessionId: ses('c'),
        toWorkerId: ex.workerId,
      }),
    );
    accepted(
      await timed('accept', () =>
        this.api('POST', `/v1/ownerships/${id}/handoff/accept`, ex.token, {
          handoffId: (ho.body.handoff as { handoffId?: string } | null)?.handoffId,
          executionSessionId: ses('c'),
          runtime: 'multihost',
        }),
      ),
      ses('c'),
    );
    const reclaimed = await timed('reclaim (not forced)', () =>
      this.api('POST', `/v1/ownerships/${id}/reclaim`, this.stack.tokens.executors[5]!.token, { executionSessionId: ses('x'), runtime: 'multihost' }),
    );
    if (reclaimed.status === 200) d.push('FAIL a reclaim without proof of death went through');
    accepted(
      await timed('forced reclaim', () =>
        this.api('POST', `/v1/ownerships/${id}/reclaim`, this.stack.tokens.admin, {
          executionSessionId: ses('d'),
          runtime: 'multihost',
          workerId: ex.workerId,
          force: true,
          reason: 'h2 agent gone',
        }),
      ),
      ses('d'),
    );
    await timed('release', () => this.api('POST', `/v1/ownerships/${id}/release`, ex.token, { executionSessionId: session, epoch }));
    // A first bind of another of h2's worktrees: h2's agent must inspect it first, so it is refused at once.
    const other = w[1]![0]!;
    await timed('bind (first claim on the away host)', () =>
      this.api('POST', '/v1/bind', ex.token, {
        worktreePath: `${other.path}-new`,
        branch: 'wt/new',
        hostId: h2.id,
        executionSessionId: ses('e'),
        runtime: 'multihost',
      }),
    );
    let worstKnown = 0;
    let worstVanishing = 0;
    for (const c of calls) {
      const enforcement = (c.r.body.enforcement as { state?: string } | undefined)?.state;
      const answered =
        c.r.status === 200 ? `200 projection ${String(c.r.body.projection)}${enforcement ? `, ${enforcement}` : ''}` : `${c.r.status} ${String(c.r.body.code)}`;
      d.push(`${c.op}: ${answered} in ${c.r.ms} ms`);
      const unexpected = awayCallAnswer(c.op, c.r);
      if (unexpected) fail(unexpected.message);
      if (c.known) worstKnown = Math.max(worstKnown, c.r.ms);
      else worstVanishing = Math.max(worstVanishing, c.r.ms);
    }
    if (!this.bound('a call on a host whose agent is known to be away', BOUNDS.callHostAway, worstKnown)) ok = false;
    if (!this.bound('a call in the first seconds after a host agent vanished', BOUNDS.callHostVanishing, worstVanishing)) ok = false;
    await sleep(Math.max(0, killedAt + awayMs - Date.now()));
    await h2.worker.start();
    const backAt = Date.now();
    // The next message on h2's ownerships, from the agent's return: a bind of the worktree released above, a plan of the handed-off one.
    let worstNext = 0;
    // As a client honouring Retry-After would: the first answers may still say host_unavailable until the agent's first beacon lands.
    let again: Api;
    let refusedFirst = 0;
    // Each answer after the return, with when it came (from the ready line), so a slow one says which and why.
    const after = (op: string, r: Api) =>
      d.push(
        `after the return, ${op}: ${r.status === 200 ? `200 projection ${String(r.body.projection)}` : `${r.status} ${String(r.body.code)}`} in ${r.ms} ms, at +${Date.now() - backAt} ms`,
      );
    for (;;) {
      again = await this.api('POST', '/v1/bind', ex.token, {
        worktreePath: wt.path,
        branch: wt.branch,
        hostId: h2.id,
        executionSessionId: ses('f'),
        runtime: 'multihost',
      });
      if (again.status !== 503 || Date.now() - backAt > BOUNDS.nextMessageAfterReturn) break;
      refusedFirst++;
      await sleep(500);
    }
    if (refusedFirst > 0) d.push(`after the return, bind: ${refusedFirst} × 503 before the agent's first beacon`);
    after('bind', again);
    if (again.status !== 200) fail(`bind on h2 after its return: ${again.status} ${JSON.stringify(again.body).slice(0, 200)}`);
    else {
      const sub = await this.api('POST', `/v1/ownerships/${id}/submit`, ex.token, { executionSessionId: ses('f'), epoch: again.body.epoch });
      after('submit', sub);
      if (sub.status !== 200) fail(`submit on h2 after its return: ${sub.status} ${JSON.stringify(sub.body).slice(0, 200)}`);
    }
    worstNext = Math.max(worstNext, Date.now() - backAt);
    const o = this.owners.get(w[1]![1]!.path);
    if (o) {
      const r = await this.api('POST', `/v1/ownerships/${o.ownershipId}/plan`, this.stack.tokens.executors[o.executor]!.token, {
        executionSessionId: o.session,
        epoch: o.epoch,
        lane: 'after-return',
      });
      after(`plan of ${o.ownershipId}`, r);
      if (r.status !== 200) fail(`plan on ${o.ownershipId} after h2 returned: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      worstNext = Math.max(worstNext, Date.now() - backAt);
    }
    if (!this.bound("the next message after the host agent's return", BOUNDS.nextMessageAfterReturn, worstNext)) ok = false;
    return {
      id: '4',
      title: 'a host agent gone past every bound: every call answered within its bound; the next message taken after its return',
      ok,
      details: d,
    };
  }

  /** Check 5: h3's worker killed mid-load on h1's and h2's worktrees. */
  async workerKilled(_w: HostWorktrees): Promise<Check> {
    const d: string[] = [];
    let ok = true;
    const fail = (m: string) => ((ok = false), d.push(`FAIL ${m}`));
    this.log("5: h3's worker killed mid-load on h1's and h2's worktrees; the fault run's checker over the load");
    const calls = new CallLog(path.join(this.stack.runDir, 'requests.jsonl'));
    const intents = new IntentLog(path.join(this.stack.runDir, 'intents.jsonl'));
    const timeline = new Timeline();
    let phase = 'load';
    // Fresh worktrees for the load, two on h1 and two on h2.
    const loadWts: Worktree[] = [];
    for (const [i, h] of this.h.slice(0, 2).entries()) {
      const wts = await makeWorktrees(path.join(h.repos, 'load'), 2, 2, `${h.net.name}ld`, 100 + i * 10);
      for (const wt of wts) wt.hostId = h.id;
      loadWts.push(...wts);
    }
    const drivers = makeDrivers(
      {
        url: this.stack.url,
        tokens: this.stack.tokens,
        calls,
        intents,
        tag: this.stack.tag,
        giveUpMs: 60_000,
        clientTimeoutMs: 95_000,
        log: (l) => this.log(`  ${l}`),
        phase: () => phase,
      },
      loadWts,
      new Rng(this.opts.seed),
    );
    drivers.forEach((dr) => dr.start());
    const loadMs = this.opts.short ? 16_000 : 60_000;
    await sleep(loadMs / 4);
    phase = 'h3-worker-killed';
    const h3 = this.h[2]!;
    const down = timeline.down('worker', phase);
    await h3.worker.kill9();
    await sleep(loadMs / 4);
    await h3.worker.start();
    timeline.up(down);
    phase = 'after';
    await sleep(loadMs / 2);
    await Promise.all(drivers.map((dr) => dr.stop()));
    await calls.close();
    await intents.close();
    const log = await loadLog(this.stack.pool);
    const rebuild = await rebuildCheck(this.stack.databaseUrl, 'load');
    const { findings, violations } = judgeLoad(log, intents.intents, calls.records, timeline, rebuild.violations);
    const acked = intents.intents.filter((i) => i.outcome === 'acked').length;
    d.push(
      `${intents.intents.length} intents (${acked} acknowledged), ${calls.records.length} calls on 4 worktrees of h1 and h2, h3's worker killed for ${loadMs / 4} ms; rebuild ${rebuild.clean ? 'clean' : 'NOT clean'}`,
    );
    for (const f of findings) fail(f.message);
    const five = calls.records.filter((c) => c.status >= 500).length;
    d.push(`5xx answers: ${five}; violations: ${violations.length}`);
    return { id: '5', title: "a worker killed on one host mid-load: the other hosts' ownerships keep answering; nothing acknowledged lost", ok, details: d };
  }

  async until(ok: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 250): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await ok()) return true;
      if (Date.now() > deadline) return false;
      await sleep(everyMs);
    }
  }
}

const firstLine = (s: string) => (s.split('\n').find((l) => l.trim() !== '') ?? '').trim().slice(0, 160);
