import { existsSync, rmSync } from 'node:fs';
import { summarizeView, type AnswerSummary } from '../chaos/answer';
import { believeView, type OwnerBelief } from '../chaos/belief';
import { JsonLines } from '../chaos/json-lines';
import { commitWork, dirty, exists, git, landOnMain, recycle, removeWorktree, type Worktree } from './git';
import { call, type CallLog, type Op } from './http';
import type { Rng } from '../chaos/rng';
import type { Tokens } from '../stack/principals';

/**
 * The load: one sequential driver per worktree, each a small orchestrator that binds, heartbeats,
 * binds plans, hands off (and accepts), releases, submits real commits, gets them landed (real
 * shas), has the worktree removed and recreated, and has an admin force reclaims. A driver sends
 * one logical operation (an intent) at a time and retries it on 503 or no answer, as a client
 * honouring Retry-After would: the checker judges intents (exactly once), and every attempt.
 */

export type Outcome = 'acked' | 'refused' | 'gave_up';

/** One logical operation and how it ended. */
export interface IntentRecord {
  id: number;
  phase: string;
  slot: number;
  op: Op;
  /** the identifying fields the expected event must carry (fresh sessions, lanes, heads) */
  fields: Record<string, unknown>;
  /** the ownership addressed in the URL, or (bind) the one answered */
  ownershipId: string | null;
  t0: number;
  t1: number;
  attempts: number;
  outcome: Outcome;
  /** some attempt got 503 or no answer: it may have been applied even if a later one was refused */
  inDoubt: boolean;
  code?: string;
  answer?: AnswerSummary;
}

/** Every intent of the run, in memory for the checker and one JSON line each in the run dir. */
export class IntentLog extends JsonLines<IntentRecord> {
  get intents(): readonly IntentRecord[] {
    return this.records;
  }
  nextId(): number {
    return this.nextN();
  }
}

export interface LoadContext {
  url: string;
  tokens: Tokens;
  calls: CallLog;
  intents: IntentLog;
  /** the run's tag: every session id is unique to the run */
  tag: string;
  /** an intent still in doubt this long is given up (the checker still accounts for it) */
  giveUpMs: number;
  clientTimeoutMs: number;
  log: (line: string) => void;
  /** which phase the intents and calls belong to */
  phase: () => string;
}

export interface Belief extends OwnerBelief {
  handoff: { handoffId: string; toSession: string; toWorker: number } | null;
  /** the worktree directory was deleted behind the service's back (fault e) */
  deleted: boolean;
}

const emptyBelief = (): Belief => ({ ownershipId: null, state: null, epoch: 0, seq: 0, ownerSession: null, handoff: null, deleted: false });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const is2xx = (s: number) => s >= 200 && s < 300;
const inDoubtStatus = (s: number) => s === 0 || s >= 500;

export interface IntentResult {
  outcome: Outcome;
  code?: string;
  answer?: AnswerSummary;
  body: unknown;
  ms: number;
}

export class Driver {
  belief: Belief = emptyBelief();
  /** which executor (index into tokens.executors) runs each session of this driver */
  private readonly workerOf = new Map<string, number>();
  private sessions = 0;
  private lanes = 0;
  private loop: Promise<void> | null = null;
  private stopping = false;
  steps = 0;
  errors: string[] = [];

  constructor(
    private readonly ctx: LoadContext,
    readonly wt: Worktree,
    private readonly rng: Rng,
  ) {}

  start(): void {
    if (this.loop) return;
    this.stopping = false;
    this.loop = (async () => {
      while (!this.stopping) {
        try {
          await this.step();
        } catch (err) {
          // A driver bug or a git failure of the fixture, not an answer of the service: recorded, the driver goes on.
          const msg = err instanceof Error ? err.message : String(err);
          this.errors.push(msg);
          this.ctx.log(`driver ${this.wt.name}: ${msg}`);
          await sleep(500);
          await this.refresh().catch(() => undefined);
        }
        this.steps++;
        await sleep(60 + this.rng.int(200));
      }
    })();
  }

  /**
   * Lets the current intent finish, then stops. `abandon`: an intent in doubt is given up after
   * its current attempt rather than retried (the fault healed; the next-message probe is due).
   */
  async stop(opts: { abandon?: boolean } = {}): Promise<void> {
    this.stopping = true;
    this.abandon = opts.abandon === true;
    await this.loop;
    this.loop = null;
    this.abandon = false;
  }
  private abandon = false;

  // --- the choice of the next operation -------------------------------------------------------

  async step(): Promise<void> {
    const b = this.belief;
    if (b.deleted) return this.recoverDeleted();
    switch (b.state) {
      case null:
      case 'closed':
        if (!exists(this.wt)) {
          await recycle(this.wt);
          this.belief = emptyBelief();
        }
        await this.bind();
        return;
      case 'released':
        if (this.rng.chance(0.75)) await this.bind();
        else await this.removeAndRecycle();
        return;
      case 'active': {
        const op = this.rng.weighted({ heartbeat: 4, plan: 2, handoff: 1.5, release: 0.6, reclaim: 1, submit: 0.7, dirty: 0.8 });
        if (op === 'heartbeat') await this.heartbeat();
        else if (op === 'plan') await this.plan();
        else if (op === 'handoff') await this.handoff();
        else if (op === 'release') await this.release();
        else if (op === 'reclaim') await this.reclaim();
        else if (op === 'submit') await this.submit();
        else dirty(this.wt, this.label());
        return;
      }
      case 'handoff_pending': {
        const op = this.rng.weighted({ accept: 3, cancel: 1, heartbeat: 1, wait: 0.3 });
        if (op === 'accept') await this.accept();
        else if (op === 'cancel') await this.cancel();
        else if (op === 'heartbeat') await this.heartbeat();
        else await sleep(2_000); // now and then, the handoff's own timeout ends it
        return;
      }
      case 'submitted':
        await this.landed();
        return;
      case 'landed':
        await this.removeAndRecycle();
        return;
      case 'stale':
        await this.reclaim();
        return;
      default:
        await this.refresh();
    }
  }

  // --- intents ------------------------------------------------------------------------------

  /** A file name no earlier commit of the repository has (landed trees come back on main). */
  private label(): string {
    return `${this.ctx.tag}-${this.wt.name}-${this.labels++}`;
  }
  private labels = 0;

  private newSession(): { session: string; worker: number } {
    const session = `f${this.ctx.tag}-${this.wt.name}-s${this.sessions++}`;
    const worker = this.rng.int(this.ctx.tokens.executors.length);
    this.workerOf.set(session, worker);
    return { session, worker };
  }

  private ownerToken(): string | null {
    const w = this.belief.ownerSession ? this.workerOf.get(this.belief.ownerSession) : undefined;
    return w === undefined ? null : this.ctx.tokens.executors[w]!.token;
  }

  /** A bind on this host, or (`hostId`) on another host whose agent must say what the worktree is first. */
  async bind(hostId = this.wt.hostId): Promise<IntentResult> {
    const { session, worker } = this.newSession();
    const r = await this.exec(
      'bind',
      '/v1/bind',
      this.ctx.tokens.executors[worker]!.token,
      { worktreePath: this.wt.path, branch: this.wt.branch, executionSessionId: session, runtime: 'faults', ...(hostId ? { hostId } : {}) },
      { session, workerId: this.ctx.tokens.executors[worker]!.workerId, worktreePath: this.wt.path },
      null,
    );
    if (r.outcome !== 'acked' && !r.answer) await this.refresh(true);
    // The previous lifecycle of this path is still finishing (its workflow drains): the next bind waits a moment.
    if (r.code === 'ownership_closed') await sleep(500);
    return r;
  }

  async heartbeat(): Promise<IntentResult | null> {
    const b = this.belief;
    const token = this.ownerToken();
    if (!b.ownershipId || !b.ownerSession || !token) return null;
    const body = { executionSessionId: b.ownerSession, epoch: b.epoch };
    return this.exec('heartbeat', `/v1/ownerships/${b.ownershipId}/heartbeat`, token, body, { session: b.ownerSession, epoch: b.epoch }, b.ownershipId);
  }

  async plan(): Promise<IntentResult | null> {
    const b = this.belief;
    const token = this.ownerToken();
    if (!b.ownershipId || !b.ownerSession || !token) return null;
    const lane = `lane-${this.ctx.tag}-${this.wt.name}-${this.lanes++}`;
    const body = { executionSessionId: b.ownerSession, epoch: b.epoch, lane, planRef: `docs/plans/${lane}.md` };
    return this.exec('plan', `/v1/ownerships/${b.ownershipId}/plan`, token, body, { session: b.ownerSession, epoch: b.epoch, lane }, b.ownershipId);
  }

  async handoff(): Promise<IntentResult | null> {
    const b = this.belief;
    const token = this.ownerToken();
    if (!b.ownershipId || !b.ownerSession || !token) return null;
    const to = this.newSession();
    const body = {
      executionSessionId: b.ownerSession,
      epoch: b.epoch,
      toExecutionSessionId: to.session,
      toWorkerId: this.ctx.tokens.executors[to.worker]!.workerId,
      reason: 'faults: handoff',
    };
    const r = await this.exec(
      'handoff',
      `/v1/ownerships/${b.ownershipId}/handoff`,
      token,
      body,
      { session: b.ownerSession, epoch: b.epoch, toSession: to.session },
      b.ownershipId,
    );
    if (r.outcome === 'acked' && this.belief.handoff) this.belief.handoff.toWorker = to.worker;
    return r;
  }

  async accept(): Promise<IntentResult | null> {
    const b = this.belief;
    if (!b.ownershipId || !b.handoff) return null;
    const h = b.handoff;
    const body = { executionSessionId: h.toSession, handoffId: h.handoffId, runtime: 'faults' };
    return this.exec(
      'accept',
      `/v1/ownerships/${b.ownershipId}/handoff/accept`,
      this.ctx.tokens.executors[h.toWorker]!.token,
      body,
      { session: h.toSession, handoffId: h.handoffId },
      b.ownershipId,
    );
  }

  async cancel(): Promise<IntentResult | null> {
    const b = this.belief;
    const token = this.ownerToken();
    if (!b.ownershipId || !b.ownerSession || !b.handoff || !token) return null;
    const body = { executionSessionId: b.ownerSession, epoch: b.epoch };
    return this.exec(
      'cancel',
      `/v1/ownerships/${b.ownershipId}/handoff/cancel`,
      token,
      body,
      { session: b.ownerSession, epoch: b.epoch, handoffId: b.handoff.handoffId },
      b.ownershipId,
    );
  }

  async release(): Promise<IntentResult | null> {
    const b = this.belief;
    const token = this.ownerToken();
    if (!b.ownershipId || !b.ownerSession || !token) return null;
    const body = { executionSessionId: b.ownerSession, epoch: b.epoch, reason: 'faults: done' };
    return this.exec('release', `/v1/ownerships/${b.ownershipId}/release`, token, body, { session: b.ownerSession, epoch: b.epoch }, b.ownershipId);
  }

  /** An admin's forced reclaim for a fresh session of some worker: WIP is preserved on the host first. */
  async reclaim(): Promise<IntentResult | null> {
    const b = this.belief;
    if (!b.ownershipId) return null;
    const to = this.newSession();
    const body = {
      executionSessionId: to.session,
      worker: { workerId: this.ctx.tokens.executors[to.worker]!.workerId },
      force: true,
      reason: 'faults: forced reclaim',
      runtime: 'faults',
    };
    return this.exec('reclaim', `/v1/ownerships/${b.ownershipId}/reclaim`, this.ctx.tokens.admin, body, { session: to.session }, b.ownershipId);
  }

  async submit(): Promise<IntentResult | null> {
    const b = this.belief;
    const token = this.ownerToken();
    if (!b.ownershipId || !b.ownerSession || !token || !exists(this.wt)) return null;
    const head = await commitWork(this.wt, this.label());
    const body = { executionSessionId: b.ownerSession, epoch: b.epoch, head };
    return this.exec('submit', `/v1/ownerships/${b.ownershipId}/submit`, token, body, { session: b.ownerSession, epoch: b.epoch, head }, b.ownershipId);
  }

  /** The landing controller: the submitted head lands on main as a real commit, then its receipt. */
  async landed(): Promise<IntentResult | null> {
    const b = this.belief;
    if (!b.ownershipId || !exists(this.wt)) return null;
    const sourceHead = await git(this.wt.path, ['rev-parse', 'HEAD']);
    const landedHead = await landOnMain(this.wt, sourceHead);
    const body = { sourceHead, landedBranch: 'main', landedHead, landedAt: new Date().toISOString() };
    const r = await this.exec('landed', `/v1/ownerships/${b.ownershipId}/landed`, this.ctx.tokens.landing, body, { landedHead }, b.ownershipId);
    if (r.outcome === 'acked') this.belief.state = 'landed';
    return r;
  }

  /** The lifecycle's end: the worktree is removed with git first, because the service believes git on the host, not the caller. */
  async worktreeRemoved(): Promise<IntentResult | null> {
    const b = this.belief;
    if (!b.ownershipId) return null;
    if (existsSync(this.wt.path)) {
      await removeWorktree(this.wt);
      this.belief.deleted = true;
    }
    return this.exec(
      'worktreeRemoved',
      `/v1/ownerships/${b.ownershipId}/worktree-removed`,
      this.ctx.tokens.landing,
      { reason: 'faults: removed' },
      {},
      b.ownershipId,
    );
  }

  /** After a landing (or a release): the removal message, the lifecycle's end, the next worktree. */
  private async removeAndRecycle(): Promise<void> {
    const r = await this.worktreeRemoved();
    if (!r || r.outcome !== 'acked') return this.refresh();
    if (!(await this.waitState((s) => s === 'closed', 20_000))) return;
    await recycle(this.wt);
    this.belief = emptyBelief();
  }

  /** A worktree deleted behind the service's back: tell it, end the lifecycle, recreate the worktree. */
  private async recoverDeleted(): Promise<void> {
    await this.refresh();
    const b = this.belief;
    if (b.state === 'closed' || b.state === null) {
      await recycle(this.wt);
      this.belief = emptyBelief();
      return;
    }
    if (b.state === 'handoff_pending') {
      await this.cancel();
      return;
    }
    const r = await this.worktreeRemoved();
    if (!r || r.outcome !== 'acked') return;
    await this.waitState(() => true, 2_000);
    const st = this.belief.state;
    if (st === 'active' || st === 'stale') await this.release();
    else if (st === 'submitted') await this.landed();
    await this.waitState((s) => s === 'closed', 20_000);
  }

  /** Deletes the worktree directory (rm -rf, no message): git still lists it, the service is not told. */
  deleteWorktree(): void {
    rmSync(this.wt.path, { recursive: true, force: true });
    this.belief.deleted = true;
  }

  /** Uncommitted work of many files, so that preserving it takes git a moment. */
  dirtyMany(files: number): void {
    const batch = this.label();
    for (let i = 0; i < files; i++) dirty(this.wt, `${batch}-${i}`);
  }

  /** Steps until the worktree has a live owner (bounded). */
  async ensureActive(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.belief.state === 'active' && !this.belief.deleted && this.belief.ownershipId && exists(this.wt)) return true;
      const s = this.belief.state;
      if (s === 'handoff_pending') await this.accept();
      else if (s === 'submitted') await this.landed();
      else await this.step();
      await sleep(50);
    }
    return false;
  }

  // --- the next message after a fault ---------------------------------------------------------

  /**
   * The next message, which the ownership must take within `boundMs`: an owner's plan while it
   * is held (an update the workflow itself must answer), a forced reclaim of a stale owner, the
   * removal once it landed, a bind when nobody holds it. A refusal (the state moved meanwhile, or
   * a lifecycle still closing refuses the next one's bind) is followed by a fresh look and the
   * message that state calls for, until one is taken or the bound has passed.
   */
  async probe(boundMs: number, since = Date.now()): Promise<{ op: Op | 'none'; ok: boolean; ms: number; code?: string }> {
    const t0 = since;
    const left = () => Math.max(1_000, boundMs - (Date.now() - t0));
    return this.probeLoop(boundMs, t0, left);
  }

  private async probeLoop(boundMs: number, t0: number, left: () => number): Promise<{ op: Op | 'none'; ok: boolean; ms: number; code?: string }> {
    let op: Op | 'none' = 'none';
    let code: string | undefined;
    while (Date.now() - t0 < boundMs) {
      await this.refresh(true, left());
      const b = this.belief;
      let r: IntentResult | null;
      if (b.state === 'active' || b.state === 'handoff_pending' || b.state === 'submitted') {
        op = 'plan';
        r = await this.withGiveUp(left(), () => this.plan());
      } else if (b.state === 'stale') {
        op = 'reclaim';
        r = await this.withGiveUp(left(), () => this.reclaim());
      } else if (b.state === 'landed') {
        op = 'worktreeRemoved';
        r = await this.withGiveUp(left(), () => this.worktreeRemoved());
        if (r?.outcome === 'acked' && !(await this.waitState((s) => s === 'closed', left()))) r = { ...r, outcome: 'gave_up', code: 'not_closed' };
      } else if (!b.deleted && exists(this.wt)) {
        op = 'bind';
        r = await this.withGiveUp(left(), () => this.bind());
      } else {
        return { op, ok: true, ms: Date.now() - t0 }; // a deleted worktree nobody holds: no message to take
      }
      const ms = Date.now() - t0;
      if (r?.outcome === 'acked') return { op, ok: ms <= boundMs, ms };
      code = r?.code ?? code;
      await sleep(300);
    }
    return { op, ok: false, ms: Date.now() - t0, ...(code ? { code } : {}) };
  }

  async withGiveUp<T>(ms: number, fn: () => Promise<T>): Promise<T> {
    this.giveUpOverride = ms;
    try {
      return await fn();
    } finally {
      this.giveUpOverride = null;
    }
  }
  private giveUpOverride: number | null = null;

  // --- plumbing -----------------------------------------------------------------------------

  private async exec(
    op: Op,
    urlPath: string,
    token: string,
    body: Record<string, unknown>,
    fields: Record<string, unknown>,
    ownershipId: string | null,
  ): Promise<IntentResult> {
    const id = this.ctx.intents.nextId();
    const phase = this.ctx.phase();
    const t0 = Date.now();
    const giveUp = this.giveUpOverride ?? this.ctx.giveUpMs;
    let inDoubt = false;
    for (let attempt = 1; ; attempt++) {
      const a = await call(
        this.ctx.calls,
        this.ctx.url,
        'POST',
        urlPath,
        token,
        body,
        { op, slot: this.wt.k, intent: id, attempt, fields },
        this.ctx.clientTimeoutMs,
      );
      const rec = a.record;
      const done = (outcome: Outcome): IntentResult => {
        const out: IntentRecord = {
          id,
          phase,
          slot: this.wt.k,
          op,
          fields,
          ownershipId: ownershipId ?? rec.answer?.ownershipId ?? null,
          t0,
          t1: Date.now(),
          attempts: attempt,
          outcome,
          inDoubt,
        };
        if (rec.code) out.code = rec.code;
        if (rec.answer) out.answer = rec.answer;
        this.ctx.intents.add(out);
        return { outcome, ...(rec.code ? { code: rec.code } : {}), ...(rec.answer ? { answer: rec.answer } : {}), body: a.body, ms: out.t1 - t0 };
      };
      if (is2xx(rec.status)) {
        this.observe(a.body);
        return done('acked');
      }
      if (!inDoubtStatus(rec.status)) {
        const r = done('refused');
        await this.refresh();
        return r;
      }
      inDoubt = true;
      const waitS = Number(rec.retryAfter ?? '1');
      const wait = Math.min(Number.isFinite(waitS) && waitS > 0 ? waitS * 1000 : 1000, 5_000);
      // Stopping (the fault healed, the next-message probe is due): no more retries, the intent stays in doubt.
      if (Date.now() + wait - t0 > giveUp || this.abandon) {
        const r = done('gave_up');
        if (!this.abandon) await this.refresh();
        return r;
      }
      await sleep(wait);
    }
  }

  /** Folds a view (bind and owner updates answer with one) into the belief. */
  private observe(body: unknown): void {
    const v = summarizeView(body);
    const b = this.belief;
    if (!v || !believeView(b, v)) return;
    const toWorker = v.handoffTo ? (this.workerOf.get(v.handoffTo) ?? this.belief.handoff?.toWorker ?? 0) : 0;
    b.handoff = v.handoffId && v.handoffTo ? { handoffId: v.handoffId, toSession: v.handoffTo, toWorker } : null;
  }

  /** The belief from the service (reads keep working without Temporal; they need PostgreSQL). */
  async refresh(byPath = false, boundMs = 60_000): Promise<void> {
    const deadline = Date.now() + boundMs;
    const useId = this.belief.ownershipId !== null && !byPath;
    const q = useId ? `/v1/ownerships/${this.belief.ownershipId}` : `/v1/ownership?worktreePath=${encodeURIComponent(this.wt.path)}`;
    for (;;) {
      const a = await call(
        this.ctx.calls,
        this.ctx.url,
        'GET',
        q,
        this.ctx.tokens.reader,
        undefined,
        { op: 'get', slot: this.wt.k, intent: -1, attempt: 1, fields: {} },
        this.ctx.clientTimeoutMs,
      );
      const s = a.record.status;
      if (is2xx(s)) {
        const v = summarizeView(a.body);
        if (!v) return;
        if (!useId && v.ownershipId !== this.belief.ownershipId) {
          // Another lifecycle than we believed (a bind in doubt that was applied, or the next one).
          this.belief = { ...emptyBelief(), deleted: this.belief.deleted };
        }
        this.belief.seq = 0;
        this.observe(a.body);
        return;
      }
      if (s === 404) {
        if (useId) return this.refresh(true, Math.max(1_000, deadline - Date.now()));
        this.belief = { ...emptyBelief(), deleted: this.belief.deleted };
        return;
      }
      if (Date.now() > deadline || (this.stopping && !inDoubtStatus(s))) return;
      await sleep(1_000);
    }
  }

  /** Polls the record until `ok(state)` (bounded); false when it never got there. */
  async waitState(ok: (state: string | null) => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.refresh(false, Math.max(1_000, deadline - Date.now()));
      if (ok(this.belief.state)) return true;
      if (Date.now() > deadline) return false;
      await sleep(300);
    }
  }
}

export function makeDrivers(ctx: LoadContext, worktrees: Worktree[], rng: Rng): Driver[] {
  return worktrees.map((wt) => new Driver(ctx, wt, rng.fork(wt.k)));
}
