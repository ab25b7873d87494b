import {
  AcceptHandoffInputSchema,
  CancelHandoffInputSchema,
  ClaimInputSchema,
  HandoffInputSchema,
  HeartbeatInputSchema,
  LandedInputSchema,
  ReclaimInputSchema,
  ReleaseInputSchema,
  SubmitInputSchema,
  WorktreeRemovedInputSchema,
} from '../../../src/domain/commands';
import {
  checkReclaim,
  isReclaimReplay,
  decideAcceptHandoff,
  decideCancelHandoff,
  decideClaim,
  decideHandoff,
  decideHandoffTimeout,
  decideLanded,
  decideReclaim,
  decideRelease,
  decideSubmit,
  decideWorktreeRemoved,
  type Decision,
  type LivenessView,
} from '../../../src/domain/decide';
import { stampEvent, type EventDraft, type OwnershipEvent } from '../../../src/domain/events';
import { decideHeartbeat, decideStale } from '../../../src/domain/liveness';
import type { Principal, WorktreeRef } from '../../../src/domain/identity';
import { applyEvent, type OwnershipRecord } from '../../../src/domain/projection';
import type { ReasonCode } from '../../../src/domain/reasons';
import type { Actor, ModelCommand } from './reference';

/**
 * Drives the real decisions (decide.ts) and reducer (projection.ts) for one worktree the way the
 * ownership workflow does: inputs pass the workflow's schemas, drafts are stamped by `emit` exactly
 * as src/workflows/durable-log.ts stamps them, heartbeats and liveness verdicts are decided by the
 * workflow's own pure rules (src/domain/liveness.ts), and the one rule that lives in the workflow
 * itself (the reclaim's WIP event) is restated here.
 */

export type RealOutcome = { kind: 'changed'; events: OwnershipEvent[] } | { kind: 'noop' } | { kind: 'refused'; code: ReasonCode };

const BASE_MS = Date.parse('2026-01-01T00:00:00.000Z');
const HANDOFF_TIMEOUT_MS = 600_000;
/** The handoff timer fires only once the offer has expired; any later instant will do. */
const AFTER_EVERY_EXPIRY = '2999-01-01T00:00:00.000Z';
const WIP_SHA = 'd'.repeat(40);

export function principalOf(a: Actor): Principal {
  switch (a.kind) {
    case 'executor':
      return { kind: 'executor', id: `exec-${a.worker}`, workerId: a.worker };
    case 'admin':
      return { kind: 'admin', id: 'ops' };
    case 'landing':
      return { kind: 'landing', id: 'lander' };
    case 'system':
      return { kind: 'system', id: 'reconcile' };
  }
}

export class WorktreeDriver {
  record: OwnershipRecord | null = null;
  readonly events: OwnershipEvent[] = [];
  private clock = 0;
  private offers = 0;

  constructor(
    readonly ownershipId: string,
    readonly worktree: WorktreeRef,
  ) {}

  private now(): string {
    return new Date(BASE_MS + this.clock * 1000).toISOString();
  }

  /** A fresh id per offer, as the workflow's `handoffId()` draws one (random there, counted here). */
  nextHandoffId(): string {
    return `hof_${this.ownershipId.slice(-1)}_${this.offers + 1}`;
  }

  /** Stamps drafts into events and folds them, as ownership.ts `emit` does. */
  private emit(drafts: EventDraft[]): OwnershipEvent[] {
    const out: OwnershipEvent[] = [];
    for (const d of drafts) {
      const w = this.worktree;
      const base = this.record ?? { repoRoot: w.repoRoot, worktreePath: w.worktreePath, branch: w.branch, hostId: w.hostId, seq: 0 };
      const event = stampEvent(this.ownershipId, base, d, this.now());
      this.record = applyEvent(this.record, event);
      this.events.push(event);
      out.push(event);
    }
    return out;
  }

  private run(d: Decision): RealOutcome {
    if ('code' in d) return { kind: 'refused', code: d.code };
    return this.emitted(d.events);
  }

  private emitted(drafts: EventDraft[]): RealOutcome {
    if (drafts.length === 0) return { kind: 'noop' };
    return { kind: 'changed', events: this.emit(drafts) };
  }

  step(c: ModelCommand): RealOutcome {
    this.clock++;
    const r = this.record;
    const addr = 'ownershipId' in c && c.ownershipId !== undefined ? { ownershipId: c.ownershipId } : {};
    const newOwner = (session: string, worker: string, actor: Actor) => ({
      ...addr,
      executionSessionId: session,
      runtime: 'codex-cli',
      worker: { runId: null, workerId: worker },
      principal: principalOf(actor),
    });
    switch (c.op) {
      case 'bind':
        return this.run(decideClaim(r, ClaimInputSchema.parse({ ...newOwner(c.session, c.worker, c.actor), branch: this.worktree.branch }), null));
      case 'handoff': {
        const input = HandoffInputSchema.parse({
          ...addr,
          executionSessionId: c.session,
          epoch: c.epoch,
          principal: principalOf(c.actor),
          toExecutionSessionId: c.to.session,
          toWorkerId: c.to.worker,
        });
        this.offers++;
        return this.run(decideHandoff(r, input, c.handoffId, new Date(BASE_MS + this.clock * 1000 + HANDOFF_TIMEOUT_MS).toISOString()));
      }
      case 'accept':
        return this.run(decideAcceptHandoff(r, AcceptHandoffInputSchema.parse({ ...newOwner(c.session, c.worker, c.actor), handoffId: c.handoffId }), null));
      case 'cancel':
        return this.run(decideCancelHandoff(r, CancelHandoffInputSchema.parse(this.ownerOnly(c, addr))));
      case 'release':
        return this.run(decideRelease(r, ReleaseInputSchema.parse(this.ownerOnly(c, addr))));
      case 'submit':
        return this.run(decideSubmit(r, SubmitInputSchema.parse(this.ownerOnly(c, addr))));
      case 'timeout':
        // The workflow's timer runs only once there is a record.
        return r ? this.run(decideHandoffTimeout(r, AFTER_EVERY_EXPIRY)) : { kind: 'noop' };
      case 'reclaim':
        return this.reclaim(c, newOwner(c.session, c.worker, c.actor));
      case 'liveness':
        return this.liveness(c);
      case 'heartbeat':
        return this.heartbeat(c, addr);
      case 'landed':
        return this.run(
          decideLanded(
            r,
            LandedInputSchema.parse({
              ...addr,
              sourceHead: c.head,
              landedBranch: 'main',
              landedHead: c.head,
              landedAt: this.now(),
              principal: principalOf(c.actor),
            }),
          ),
        );
      case 'removed':
        return this.run(decideWorktreeRemoved(r, WorktreeRemovedInputSchema.parse({ ...addr, reason: null, principal: principalOf(c.actor) })));
    }
  }

  private ownerOnly(c: { session: string; epoch: number; actor: Actor }, addr: { ownershipId?: string }) {
    return { ...addr, executionSessionId: c.session, epoch: c.epoch, principal: principalOf(c.actor) };
  }

  /** ownership.ts reclaimUpdate: check, preserve the previous owner's WIP unless the worktree is gone, then one batch: WIP event, reclaim. */
  private reclaim(c: Extract<ModelCommand, { op: 'reclaim' }>, owner: object): RealOutcome {
    const input = ReclaimInputSchema.parse({ ...owner, ...(c.force ? { force: true } : {}), ...(c.reason ? { reason: 'host lost' } : {}) });
    const view = this.livenessView(c.verdict);
    // The validator decides first; the handler answers a retry of the reclaim that made this tenure as it is.
    const validated = decideReclaim(this.record, input, view, null);
    if ('code' in validated) return { kind: 'refused', code: validated.code };
    if (isReclaimReplay(this.record, input)) return this.emitted([]);
    const denied = checkReclaim(this.record, input, view);
    if (denied) return { kind: 'refused', code: denied.code };
    const r = this.record!;
    const drafts = decideReclaim(r, input, view, null);
    if ('code' in drafts) throw new Error(`decideReclaim refused (${drafts.code}) what checkReclaim allowed`);
    const wip: EventDraft[] = r.worktreeRemoved
      ? []
      : [
          {
            type: 'ownership.wip_preserved',
            actorSessionId: input.executionSessionId,
            principal: `${input.principal.kind}:${input.principal.id}`,
            data: { executionSessionId: r.owner?.executionSessionId ?? input.executionSessionId, ref: `refs/overdeck/wip/${r.seq + 1}`, sha: WIP_SHA },
          },
        ];
    return this.emitted([...wip, ...drafts.events]);
  }

  /** What the workflow's liveness state says at a reclaim: a stale record was judged dead; otherwise the last verdict. */
  private livenessView(verdict: 'alive' | 'dead' | 'unknown' | null): LivenessView {
    if (this.record?.state === 'stale') return { status: 'stale', verdict: 'dead' };
    return verdict === null ? { status: 'live', verdict: null } : { status: 'silent', verdict };
  }

  /**
   * The workflow's liveness check (src/workflows/liveness.ts) decides with decideStale: a dead
   * verdict marks an active ownership stale only while the tenure asked about is the current one.
   */
  private liveness(c: Extract<ModelCommand, { op: 'liveness' }>): RealOutcome {
    const stale = decideStale(this.record, { executionSessionId: c.session, epoch: c.epoch }, c.verdict, null);
    return stale.length === 0 ? { kind: 'noop' } : this.emitted(stale);
  }

  /**
   * The heartbeat signal decides with decideHeartbeat. The model has no clock: the owner is live
   * unless its record is stale, and periodic heartbeat events (which change no ownership and depend
   * on wall time) never fall due, so only a revival is an event.
   */
  private heartbeat(c: Extract<ModelCommand, { op: 'heartbeat' }>, addr: { ownershipId?: string }): RealOutcome {
    const parsed = HeartbeatInputSchema.safeParse({ ...addr, executionSessionId: c.session, epoch: c.epoch });
    if (!parsed.success) return { kind: 'noop' };
    const status = this.record?.state === 'stale' ? 'stale' : 'live';
    const d = decideHeartbeat(this.record, this.ownershipId, parsed.data, { status, nowMs: 0, lastLoggedMs: 0, logIntervalMs: Number.MAX_SAFE_INTEGER });
    return d.accepted && d.event ? this.emitted([d.event]) : { kind: 'noop' };
  }
}
